import struct Foundation.Date
import Synchronization

/// The outcome of one attempt to hand a message to librdkafka.
enum KafkaSendAttempt: Sendable {
    case delivered(KafkaDeliveryReport)
    case queueFull
}

/// Everything a ``KafkaProducer`` tracks under its lock: pending deliveries by message id,
/// the lifecycle, and the poll thread's stop flag.
///
/// The delivery callback (on the poll thread) removes an entry under the lock and resumes
/// its continuation outside it.
final class KafkaProducerDeliveries: Sendable {
    enum Pending {
        case single(topic: String, UnsafeContinuation<KafkaSendAttempt, any Error>)
        case batch(topic: String, KafkaDeliveryBatch, index: Int)
    }

    private enum Lifecycle {
        case running
        case closing(waiters: [UnsafeContinuation<Bool, Never>])
        case closed
    }

    private struct State {
        var nextID: UInt = 1
        var pending: [UInt: Pending] = [:]
        var lifecycle = Lifecycle.running
        var fatal: KafkaError?
        var pollThreadRunning = true
        var pollExitWaiters: [UnsafeContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())
    /// Read by the poll loop on every iteration, so kept out of the lock.
    private let stopRequested = Atomic<Bool>(false)

    /// Registers a pending delivery and returns the id to pass as the message opaque.
    func register(_ pending: Pending) -> Result<UInt, KafkaError> {
        state.withLock { state in
            if let fatal = state.fatal { return .failure(fatal) }
            guard case .running = state.lifecycle else { return .failure(.clientClosed("KafkaProducer")) }
            let id = state.nextID
            state.nextID &+= 1
            if state.nextID == 0 { state.nextID = 1 }  // 0 would be a null opaque
            state.pending[id] = pending
            return .success(id)
        }
    }

    /// Forgets `id` after librdkafka refused the message (no report will come).
    func remove(_ id: UInt) {
        _ = state.withLock { $0.pending.removeValue(forKey: id) }
    }

    /// Resolves the pending delivery of a report (called on the poll thread).
    func complete(_ delivery: RDKafkaDelivery) {
        guard let pending = state.withLock({ $0.pending.removeValue(forKey: delivery.id) }) else { return }
        let topic: String
        switch pending {
        case .single(let name, _), .batch(let name, _, _): topic = name
        }
        let result: Result<KafkaDeliveryReport, KafkaError>
        if delivery.errorCode == 0 {
            result = .success(
                KafkaDeliveryReport(
                    topic: topic, partition: delivery.partition, offset: delivery.offset,
                    timestamp: delivery.timestampMilliseconds < 0
                        ? nil : Date(timeIntervalSince1970: Double(delivery.timestampMilliseconds) / 1000)))
        } else {
            let code = KafkaError.Code(rawValue: delivery.errorCode)
            result = .failure(
                KafkaError(
                    code: code,
                    message: "delivery to \(topic)[\(delivery.partition)] failed: \(RDKafkaErrorNames.description(of: delivery.errorCode))",
                    isFatal: code == .fatal))
        }
        Self.resolve(pending, with: result)
    }

    private static func resolve(_ pending: Pending, with result: Result<KafkaDeliveryReport, KafkaError>) {
        switch pending {
        case .single(_, let continuation):
            continuation.resume(with: result.map(KafkaSendAttempt.delivered).mapError { $0 as any Error })
        case .batch(_, let batch, let index):
            batch.complete(index, with: result)
        }
    }

    /// Records a fatal client error: every later send fails with it.
    func recordFatal(_ error: KafkaError) {
        state.withLock { if $0.fatal == nil { $0.fatal = error } }
    }

    // MARK: Lifecycle

    /// Whether the poll loop should exit.
    var isStopRequested: Bool { stopRequested.load(ordering: .relaxed) }

    /// Asks the poll loop to exit after its current iteration.
    func requestStop() {
        stopRequested.store(true, ordering: .relaxed)
    }

    /// Called by the poll thread as its last action.
    func pollThreadExited() {
        let waiters = state.withLock { state in
            state.pollThreadRunning = false
            defer { state.pollExitWaiters = [] }
            return state.pollExitWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Suspends until the poll thread has exited.
    func waitForPollThreadExit() async {
        await withUnsafeContinuation { continuation in
            let exited = state.withLock { state in
                if !state.pollThreadRunning { return true }
                state.pollExitWaiters.append(continuation)
                return false
            }
            if exited { continuation.resume() }
        }
    }

    /// Starts closing. Returns `true` for the first caller, who must finish the close;
    /// later callers suspend until it is finished and get `false`.
    func beginClosing() async -> Bool {
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Bool, Never>) in
            let immediate: Bool? = state.withLock { state in
                switch state.lifecycle {
                case .running:
                    state.lifecycle = .closing(waiters: [])
                    return true
                case .closing(var waiters):
                    waiters.append(continuation)
                    state.lifecycle = .closing(waiters: waiters)
                    return nil
                case .closed:
                    return false
                }
            }
            if let immediate { continuation.resume(returning: immediate) }
        }
    }

    /// Fails whatever is still pending and marks the producer closed.
    func finishClosing() {
        let (pending, waiters) = state.withLock { state -> ([Pending], [UnsafeContinuation<Bool, Never>]) in
            let pending = Array(state.pending.values)
            state.pending = [:]
            var waiters: [UnsafeContinuation<Bool, Never>] = []
            if case .closing(let closeWaiters) = state.lifecycle { waiters = closeWaiters }
            state.lifecycle = .closed
            return (pending, waiters)
        }
        for entry in pending { Self.resolve(entry, with: .failure(.clientClosed("KafkaProducer"))) }
        for waiter in waiters { waiter.resume(returning: false) }
    }
}

/// Collects the delivery reports of one ``KafkaProducer/sendAll(_:)`` call: one allocation
/// and one continuation per batch instead of per message.
final class KafkaDeliveryBatch: Sendable {
    private struct State {
        var results: [Result<KafkaDeliveryReport, KafkaError>?]
        var remaining: Int
        var waiter: UnsafeContinuation<[Result<KafkaDeliveryReport, KafkaError>], Never>?
    }

    private let state: Mutex<State>

    init(count: Int) {
        state = Mutex(State(results: Array(repeating: nil, count: count), remaining: count))
    }

    /// Records the outcome of message `index`.
    func complete(_ index: Int, with result: Result<KafkaDeliveryReport, KafkaError>) {
        let finished = state.withLock { state -> (UnsafeContinuation<[Result<KafkaDeliveryReport, KafkaError>], Never>, [Result<KafkaDeliveryReport, KafkaError>])? in
            guard state.results[index] == nil else { return nil }
            state.results[index] = result
            state.remaining -= 1
            guard state.remaining == 0, let waiter = state.waiter else { return nil }
            state.waiter = nil
            return (waiter, state.results.map { $0! })
        }
        if let (waiter, results) = finished { waiter.resume(returning: results) }
    }

    /// Suspends until every message has an outcome; returns them in message order.
    func results() async -> [Result<KafkaDeliveryReport, KafkaError>] {
        await withUnsafeContinuation { continuation in
            let ready = state.withLock { state -> [Result<KafkaDeliveryReport, KafkaError>]? in
                if state.remaining == 0 { return state.results.map { $0! } }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}
