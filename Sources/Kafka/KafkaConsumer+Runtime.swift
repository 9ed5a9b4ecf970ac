import Dispatch
import Synchronization

extension KafkaConsumer {
    /// The consumer's shared insides: the locked state machine, the event stream and the
    /// revoke hook. It exists before the librdkafka handle (whose callbacks capture it) and
    /// does not own the handle, so there is no reference cycle.
    final class Runtime: Sendable {
        let state: Mutex<StateMachine>
        let events: AsyncStream<KafkaConsumerEvent>
        private let eventSink: AsyncStream<KafkaConsumerEvent>.Continuation
        private let onPartitionsRevoked: (@Sendable ([KafkaTopicPartition], Bool) -> Void)?
        let onPartitionsAssigned: (@Sendable ([KafkaTopicPartition], UInt64) -> Void)?
        private let revokeDrainTimeout: Duration?
        let commitsOffsets: Bool
        /// A safety cap on one pre-pause drain (librdkafka's queue limit normally ends it first).
        private let drainLimit: Int
        /// When to park and probe the quiet topics' idle partitions; nil without quiet topics.
        private let parkingTimes: (interval: Duration, window: Duration)?

        init(configuration: KafkaConsumerConfiguration) {
            state = Mutex(StateMachine(maxBuffered: configuration.maxBufferedMessages, quietTopics: configuration.quietTopics))
            (events, eventSink) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1024))
            onPartitionsRevoked = configuration.onPartitionsRevoked
            onPartitionsAssigned = configuration.onPartitionsAssigned
            revokeDrainTimeout = configuration.revokeDrainTimeout
            commitsOffsets = configuration.isGroupMember
            drainLimit = max(configuration.maxBufferedMessages * 16, 65_536)
            parkingTimes = configuration.quietTopics.isEmpty
                ? nil : (configuration.quietProbeInterval, configuration.quietProbeWindow)
        }

        func emit(_ event: KafkaConsumerEvent) {
            eventSink.yield(event)
        }

        // MARK: Callbacks (poll thread)

        var rebalanceHandlers: RDKafkaRebalanceHandlers {
            RDKafkaRebalanceHandlers(
                assigned: { [self] partitions, starts in
                    let generation = state.withLock { $0.didAssign(partitions, starts: starts) }
                    guard !partitions.isEmpty else { return }
                    // Still on the poll thread: no message of these partitions is handed out yet.
                    onPartitionsAssigned?(partitions, generation)
                    emit(.partitionsAssigned(partitions))
                },
                revoking: { [self] partitions, lost in
                    let paused = state.withLock { $0.willRevoke(partitions) }
                    guard !partitions.isEmpty else { return paused }
                    onPartitionsRevoked?(partitions, lost)
                    if let revokeDrainTimeout { _ = waitForStoredOffsets(of: partitions, timeout: revokeDrainTimeout) }
                    return paused
                },
                revoked: { [self] partitions in
                    let signals = state.withLock { $0.didRevoke(partitions) }
                    for signal in signals { signal.signal() }
                    if !partitions.isEmpty { emit(.partitionsRevoked(partitions)) }
                },
                error: { [self] error in emit(.error(error)) }
            )
        }

        /// Blocks until every message handed out for `partitions` has its offset stored, or `timeout`.
        func waitForStoredOffsets(of partitions: [KafkaTopicPartition], timeout: Duration) -> Bool {
            let signal = DispatchSemaphore(value: 0)
            guard let id = state.withLock({ $0.addDrainWaiter(partitions, signal: signal) }) else { return true }
            let deadline = DispatchTime.now() + .milliseconds(Int(timeout.kafkaMilliseconds))
            if signal.wait(timeout: deadline) == .success { return true }
            return state.withLock { state in
                state.removeDrainWaiter(id)
                return state.isSettled(partitions)
            }
        }

        func clientError(_ error: KafkaError) {
            if error.isFatal {
                state.withLock { $0.recordFatal(error) }.run(wakingWith: {})
            }
            emit(.error(error))
        }

        // MARK: Poll loop

        /// The body of the consumer's poll thread: poll, buffer, reconcile pauses, repeat;
        /// then the close sequence. It never waits for the application, so the group's
        /// `max.poll.interval.ms` cannot expire while the application is slow.
        func runPollLoop(client: RDKafkaConsumerClient) {
            var parking = parkingTimes.map { QuietPartitionParking(interval: $0.interval, window: $0.window, now: .now) }
            while state.withLock({ $0.lifecycle == .running }) {
                if let step = parking?.step(at: .now) { park(step, client: client) }
                applyPauses(client: client)
                guard deliver(client.poll(timeoutMilliseconds: 100, maxMessages: 512), client: client) else { continue }
                // Pausing discards what librdkafka has prefetched and refetches it after the
                // resume (with librdkafka 2.0.2's fetch backoff), which costs far more than keeping
                // it. So first move what is already queued locally into the buffer; librdkafka's
                // own queue limit (`queued.max.messages.kbytes`) bounds that overshoot.
                var drained = 0
                while drained < drainLimit {
                    let polled = client.poll(timeoutMilliseconds: 0, maxMessages: 512)
                    if polled.isEmpty { break }
                    drained += polled.count
                    _ = deliver(polled, client: client)
                }
            }
            close(client: client)
        }

        /// Hands polled messages to the state machine and reports errors.
        /// - Returns: Whether backpressure engaged.
        private func deliver(_ polled: [RDKafkaPolled], client: RDKafkaConsumerClient) -> Bool {
            if polled.isEmpty { return false }
            var messages: [KafkaConsumerMessage] = []
            messages.reserveCapacity(polled.count)
            for result in polled {
                switch result {
                case .message(let message): messages.append(message)
                case .error(let error): clientError(error)
                }
            }
            if messages.isEmpty { return false }
            let wakeups = state.withLock { $0.messagesPolled(messages) }
            wakeups.run(wakingWith: {})
            if !wakeups.seeks.isEmpty { repairSkips(wakeups.seeks, client: client) }
            return wakeups.backpressureEngaged
        }

        /// Sends partitions whose fetching skipped offsets back to the first one skipped
        /// (``FetchPosition``). A failed seek leaves them waiting for it: nothing of theirs is
        /// handed out past the skip, and the next message polled asks for the seek again.
        private func repairSkips(_ seeks: [KafkaTopicPartitionOffset], client: RDKafkaConsumerClient) {
            let names = seeks.map { "\($0.topic)[\($0.partition)]@\($0.offset)" }.joined(separator: ",")
            do {
                try client.seek(seeks)
                state.withLock { $0.didSeek(seeks) }
                emit(.error(KafkaError(code: .skippedOffsets, message: "fetching jumped past offsets not received; sent back to "
                                       + "\(names) (a gap still there is accepted as real)", isRetriable: true)))
            } catch let error as KafkaError {
                state.withLock { $0.seekFailed(seeks) }
                emit(.error(KafkaError(code: .skippedOffsets, message: "fetching skipped offsets at \(names); seek failed: \(error)",
                                       isRetriable: true)))
            } catch {}
        }

        /// Unparks the quiet topics' partitions for a probe, or parks those with nothing left to
        /// fetch: every offset up to the high watermark of their latest fetch response polled (or,
        /// before their first message, an empty log). A high watermark that predates records
        /// written since only delays them to the next probe: the partition is then fetched.
        private func park(_ step: QuietPartitionParking.Step, client: RDKafkaConsumerClient) {
            switch step {
            case .probe:
                state.withLock { $0.unparkAll() }
            case .judge:
                let idle = state.withLock { $0.parkingCandidates() }.compactMap { candidate -> KafkaTopicPartition? in
                    let (low, high) = client.cachedWatermarks(candidate.partition)
                    guard let high else { return nil }
                    if let next = candidate.next { return next >= high ? candidate.partition : nil }
                    return low == high ? candidate.partition : nil
                }
                if !idle.isEmpty { state.withLock { $0.park(idle) } }
            }
        }

        private func applyPauses(client: RDKafkaConsumerClient) {
            let (pause, resume) = state.withLock { $0.reconcilePauses() }
            do {
                if !pause.isEmpty { try client.pause(pause) }
                if !resume.isEmpty { try client.resume(resume) }
            } catch let error as KafkaError {
                emit(.error(error))
            } catch {}
        }

        /// Commit what was stored, leave the group (the final revoke runs the hook and commits
        /// again), then end both streams.
        private func close(client: RDKafkaConsumerClient) {
            if commitsOffsets {
                do { try client.commitStoredOffsets() } catch let error as KafkaError { emit(.error(error)) } catch {}
            }
            if let error = client.close() { emit(.error(error)) }
            let waiters = state.withLock { $0.closed() }
            eventSink.finish()
            for waiter in waiters { waiter.resume() }
        }
    }
}
