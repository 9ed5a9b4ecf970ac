import Synchronization
/// The messages of a ``KafkaConsumer``, as an `AsyncSequence`.
///
/// Taking a message from the sequence is what frees buffer space: when the buffer drains
/// below half of ``KafkaConsumerConfiguration/maxBufferedMessages`` the consumer resumes
/// fetching. The sequence ends (returns `nil`) after ``KafkaConsumer/close()`` or when the
/// iterating task is cancelled, and throws only for a fatal consumer error.
public struct KafkaConsumerMessages: AsyncSequence, Sendable {
    /// The element type.
    public typealias Element = KafkaConsumerMessage

    let runtime: KafkaConsumer.Runtime
    let client: RDKafkaConsumerClient

    /// Creates an iterator.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(runtime: runtime, client: client)
    }

    /// Iterates the consumer's messages.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let runtime: KafkaConsumer.Runtime
        let client: RDKafkaConsumerClient

        /// The messages buffered now, up to `max`, in the order ``next()`` would return them; empty
        /// when none is (it never waits). After a `next()` that waited, the rest of that poll's
        /// messages are usually buffered: taking them together hands them on as one batch.
        public mutating func nextBuffered(max: Int) -> [KafkaConsumerMessage] {
            let (messages, wake) = runtime.state.withLock { $0.takeBuffered(max: max) }
            if wake { client.wake() }
            return messages
        }

        /// The next message, waiting until one arrives.
        /// - Returns: The next message, or `nil` once the consumer is closed or the task is cancelled.
        /// - Throws: ``KafkaError`` for a fatal consumer error.
        public mutating func next() async throws -> KafkaConsumerMessage? {
            // Fast path: a buffered message, no suspension.
            switch runtime.state.withLock({ $0.next(waiter: nil) }) {
            case .deliver(let message, let wake):
                if wake { client.wake() }
                return message
            case .finish:
                return nil
            case .fail(let error):
                throw error
            case .suspended:
                break
            }
            if Task.isCancelled { return nil }
            let runtime = self.runtime
            let client = self.client
            let id = runtime.state.withLock { $0.makeWaiterID() }
            let result = await withTaskCancellationHandler {
                await withUnsafeContinuation { (continuation: KafkaConsumer.Waiter) in
                    switch runtime.state.withLock({ $0.next(waiter: (id, continuation)) }) {
                    case .deliver(let message, let wake):
                        continuation.resume(returning: .message(message))
                        if wake { client.wake() }
                    case .finish:
                        continuation.resume(returning: .finished)
                    case .fail(let error):
                        continuation.resume(returning: .failed(error))
                    case .suspended:
                        break
                    }
                }
            } onCancel: {
                runtime.state.withLock { $0.cancelWaiter(id) }?.resume(returning: .finished)
            }
            switch result {
            case .message(let message): return message
            case .finished: return nil
            case .failed(let error): throw error
            }
        }
    }
}
