import Testing
@testable import Kafka

@Suite("Static group membership (no broker)")
struct StaticMembershipTests {
    @Test func groupInstanceIdReachesLibrdkafkaOnlyForGroupMembers() throws {
        var group = KafkaConsumerConfiguration(bootstrapServers: ["127.0.0.1:9092"], consumptionStrategy: .group(id: "g", topics: ["t"]))
        #expect(group.dictionary["group.instance.id"] == nil)
        group.groupInstanceId = "pod-0-verify"
        #expect(group.dictionary["group.instance.id"] == "pod-0-verify")
        var assigned = KafkaConsumerConfiguration(bootstrapServers: ["127.0.0.1:9092"],
                                                  consumptionStrategy: .partitions([KafkaTopicPartitionOffset(topic: "t", partition: 0, offset: 0)]))
        assigned.groupInstanceId = "pod-0"
        #expect(assigned.dictionary["group.instance.id"] == nil, "an assign-only consumer has no group to be static in")
        group.additionalProperties = ["group.instance.id": "x"]
        #expect(throws: KafkaError.self) { try group.validate() }
    }
}
