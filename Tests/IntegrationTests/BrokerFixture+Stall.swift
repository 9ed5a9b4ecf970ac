import Testing

extension BrokerFixture {
    /// Consumer settings for a read that must not have the whole topic fetched ahead of its first
    /// record: librdkafka fetches a partition again only once its local queue is empty, so when
    /// the broker goes down the read can only have the next batch (one record, as the stall tests
    /// produce them). Without it a loaded machine let librdkafka prefetch all 200 records before
    /// the first one reached the read.
    static let fetchOneAhead = ["queued.min.messages": "1"]

    /// Runs a read that takes the broker down after its first record (`read` calls `onRecord` for
    /// each record), and checks that it ended with a stall of type `E`, reported after the idle
    /// timeout (to within a quarter of it) rather than after a wait without end.
    func expectStall<E: Error & CustomStringConvertible>(_ type: E.Type, idleTimeout: Duration, records total: Int,
                                                         _ read: (_ onRecord: () -> Void) async throws -> Void) async throws {
        var count = 0
        var stalled: E?
        let started = ContinuousClock.now
        do {
            try await read {
                count += 1
                if count == 1 { cluster.setBrokerDown(1) }
            }
        } catch let error as E {
            stalled = error
        }
        let elapsed = ContinuousClock.now - started
        cluster.setBrokerUp(1)
        let error = try #require(stalled, "read all \(count) records although the broker was down")
        #expect(error.description.contains("no record for"), "\(error)")
        #expect(count < total)
        #expect(elapsed >= idleTimeout && elapsed < idleTimeout * 4, "stall reported after \(elapsed)")
    }
}
