import Testing
@testable import Pipeline

/// ``TopicPartition`` hashes only the topic's length and end: partitions whose hashes collide
/// must still be told apart by equality, and equal values must hash alike.
@Suite struct TopicPartitionTests {
    @Test func partitionsWithCollidingHashesStayDistinct() {
        // Same length and same last eight bytes: the hash cannot tell the topics apart.
        let topics = ["a.receipts.retry.1", "b.receipts.retry.1", "a.receipts.retry.2", "receipts.retry.1", ""]
        var positions: [TopicPartition: Int] = [:]
        for topic in topics {
            for partition in Int32(0)..<32 { positions[TopicPartition(topic: topic, partition: partition)] = positions.count }
        }
        #expect(positions.count == topics.count * 32)
        for (index, topic) in topics.enumerated() {
            for partition in Int32(0)..<32 {
                #expect(positions[TopicPartition(topic: String(topic), partition: partition)] == index * 32 + Int(partition))
            }
        }
        let copy = TopicPartition(topic: "a.receipts." + "retry.1", partition: 7)
        #expect(copy.hashValue == TopicPartition(topic: "a.receipts.retry.1", partition: 7).hashValue)
        #expect(TopicPartition(topic: "a.receipts.retry.1", partition: 7).hashValue
                != TopicPartition(topic: "a.receipts.retry.2", partition: 7).hashValue)
    }
}
