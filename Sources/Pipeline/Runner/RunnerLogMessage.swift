/// Log messages that other processes read, so their wording is a contract: `receiptd dev` decides
/// that a worker it started is consuming from the worker's own log, because librdkafka's mock
/// cluster cannot describe a consumer group to another process. Change the wording here only.
public enum RunnerLogMessage {
    /// Notice level: the consumer group gave this worker partitions (`kafka.partition` lists them).
    public static let partitionsAssigned = "partitions assigned"
}
