import Foundation
import Kafka
import Pipeline
import Testing

/// `receiptd entitlements` looks an owner up only in the partition its key lives in: the one our
/// producer's partitioner (librdkafka's default) gave it on `entitlements.owner-updates`, hence
/// on the co-partitioned `entitlements.state`. Checked against the real producer's delivery reports.
@Suite(.timeLimit(.minutes(2))) struct OwnerViewPartitionTests {
    @Test func theReaderPredictsTheProducersPartition() async throws {
        let fixture = try BrokerFixture()
        let keys = (0..<200).map { OwnerEntitlementKey(owner: OwnerKey(bundleId: "com.demo.game", userId: "user/\($0)"),
                                                       entitlement: ["premium", "coins", "pro"][$0 % 3]).encoded }
        let reports = try await fixture.publish(fixture.topics.ownerUpdates, keys.map { ($0, Array("{}".utf8)) })
        #expect(reports.count == keys.count)
        for (key, report) in zip(keys, reports) {
            #expect(report.partition == OwnerViewReader.partition(of: key, partitions: BrokerFixture.partitions), "\(key)")
        }
        #expect(Set(reports.map(\.partition)).count == BrokerFixture.partitions, "keys spread over every partition")
    }
}
