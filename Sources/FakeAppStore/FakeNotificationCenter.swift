import AppStore
import Foundation
import HTTP
import Synchronization

/// The fake's notification side: it signs notifications, keeps them for Get Notification History
/// and delivers them as Apple does (``FakeNotificationDelivery``), reporting every attempt.
final class FakeNotificationCenter: Sendable {
    private struct State {
        var notifications: [FakeNotification] = []
        var delivery = FakeNotificationDelivery()
        var subscribers: [Int: AsyncStream<FakeDeliveryEvent>.Continuation] = [:]
        var nextSubscriber = 0
        var nextUUID = 0
    }

    private let state = Mutex(State())
    /// Its own client (one event-loop thread), shut down by ``stop()``.
    private let transport: CurlHTTPClient
    private let clock: @Sendable () -> Date

    init(clock: @escaping @Sendable () -> Date) throws(HTTPError) {
        var configuration = CurlHTTPClient.Configuration()
        configuration.connectTimeout = .seconds(2)
        self.transport = try CurlHTTPClient(configuration: configuration)
        self.clock = clock
    }

    /// Ends deliveries under way (their next attempt fails) and every subscriber's stream.
    func stop() {
        transport.shutdown()
        for continuation in state.withLock({ Array($0.subscribers.values) }) { continuation.finish() }
    }

    var delivery: FakeNotificationDelivery {
        get { state.withLock { $0.delivery } }
        set { state.withLock { $0.delivery = newValue } }
    }

    var notifications: [FakeNotification] { state.withLock { $0.notifications } }

    func events() -> AsyncStream<FakeDeliveryEvent> {
        let (stream, continuation) = AsyncStream<FakeDeliveryEvent>.makeStream(bufferingPolicy: .bufferingNewest(10_000))
        let id = state.withLock { state -> Int in
            state.nextSubscriber += 1
            state.subscribers[state.nextSubscriber] = continuation
            return state.nextSubscriber
        }
        continuation.onTermination = { [weak self] _ in _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) } }
        return stream
    }

    /// Records a signed notification and starts delivering it when a receiver is configured.
    func send(_ notification: FakeNotification) {
        let delivery = state.withLock { state -> FakeNotificationDelivery in
            state.notifications.append(notification)
            return state.delivery
        }
        guard let url = delivery.receiverURL else { return }
        let retries = notification.environment == .production ? delivery.retrySchedule : []
        Task { await self.deliver(notification, to: url, retries: retries, timeout: delivery.attemptTimeout) }
    }

    /// A fresh notification UUID (unique per fake, UUID-shaped).
    func nextUUID() -> String {
        let n = state.withLock { state -> Int in state.nextUUID += 1; return state.nextUUID }
        return String(format: "00000000-0000-4000-8000-%012d", n)
    }

    private func deliver(_ notification: FakeNotification, to url: String, retries: [Duration], timeout: Duration) async {
        var attempt = 0
        while true {
            attempt += 1
            let (result, status) = await post(notification.body, to: url, timeout: timeout)
            record(uuid: notification.notificationUUID, Attempt(date: clock(), result: result))
            publish(.attempted(uuid: notification.notificationUUID, attempt: attempt, result: result, status: status))
            if result == "SUCCESS" {
                publish(.delivered(uuid: notification.notificationUUID, attempts: attempt))
                return
            }
            guard attempt <= retries.count else {
                publish(.abandoned(uuid: notification.notificationUUID, attempts: attempt))
                return
            }
            try? await Task.sleep(for: retries[attempt - 1])
        }
    }

    private typealias Attempt = FakeNotification.Attempt

    /// One POST, classified as Apple's `sendAttemptResult`.
    private func post(_ body: [UInt8], to url: String, timeout: Duration) async -> (String, Int?) {
        let request = HTTPRequest(method: .post, url: url, headers: ["Content-Type": "application/json"], body: body)
        do {
            let response = try await transport.execute(request, timeout: timeout)
            return ((200...206).contains(response.status) ? "SUCCESS" : "UNSUCCESSFUL_HTTP_RESPONSE_CODE", response.status)
        } catch let error as HTTPError {
            switch error.code {
            case .timeout: return ("TIMED_OUT", nil)
            case .connectionReset: return ("PREMATURE_CLOSE", nil)
            default: return ("NO_RESPONSE", nil)
            }
        } catch {
            return ("OTHER", nil)
        }
    }

    private func record(uuid: String, _ attempt: Attempt) {
        state.withLock { state in
            if let index = state.notifications.firstIndex(where: { $0.notificationUUID == uuid }) {
                state.notifications[index].attempts.append(attempt)
            }
        }
    }

    private func publish(_ event: FakeDeliveryEvent) {
        for continuation in state.withLock({ Array($0.subscribers.values) }) { continuation.yield(event) }
    }
}
