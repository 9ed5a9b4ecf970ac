import Kafka
import Synchronization

/// Ends a read from a consumer that stopped delivering: one per read, not a timer per record (a
/// task pair per record cost more than reading it). It closes the consumer once a quarter of the
/// timeout has passed four times while the reader waited in ``next(_:)`` and no record came, so
/// the reader's iterator ends; time the reader spends between records does not count. It stops
/// with ``stop()`` or when released.
final class ConsumerIdleWatchdog: Sendable {
    private final class Progress: Sendable {
        let records = Atomic<Int>(0)
        let waiting = Atomic<Bool>(false)
        let fired = Atomic<Bool>(false)
    }

    private let progress: Progress
    private let task: Task<Void, Never>

    init(closing consumer: KafkaConsumer, after timeout: Duration) {
        let progress = Progress()
        self.progress = progress
        task = Task {
            var seen = -1, idleTicks = 0
            while idleTicks < 4 {
                do { try await Task.sleep(for: timeout / 4) } catch { return }
                let now = progress.records.load(ordering: .relaxed)
                idleTicks = now == seen && progress.waiting.load(ordering: .relaxed) ? idleTicks + 1 : 0
                seen = now
            }
            progress.fired.store(true, ordering: .relaxed)
            await consumer.close()
        }
    }

    deinit { task.cancel() }

    /// Whether it closed the consumer (the read stalled).
    var fired: Bool { progress.fired.load(ordering: .relaxed) }

    /// The iterator's next message, watched.
    func next(_ messages: inout KafkaConsumerMessages.AsyncIterator) async throws -> KafkaConsumerMessage? {
        progress.waiting.store(true, ordering: .relaxed)
        defer { progress.waiting.store(false, ordering: .relaxed) }
        let message = try await messages.next()
        if message != nil { progress.records.add(1, ordering: .relaxed) }
        return message
    }

    func stop() { task.cancel() }
}
