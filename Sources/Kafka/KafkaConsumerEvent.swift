/// Something that happened to a consumer besides a message arriving, delivered on
/// ``KafkaConsumer/events`` so the application can log it or react (for example by
/// rebuilding per-partition state after an assignment).
public enum KafkaConsumerEvent: Sendable {
    /// These partitions were added to the assignment (after a rebalance, or at start for
    /// an explicit assignment).
    case partitionsAssigned([KafkaTopicPartition])
    /// These partitions were taken away; their stored offsets have been committed (unless
    /// the assignment was lost) and the revoke hook has run.
    case partitionsRevoked([KafkaTopicPartition])
    /// librdkafka reported an error. Most are informational (librdkafka recovers by itself);
    /// check ``KafkaError/isFatal``.
    case error(KafkaError)
}
