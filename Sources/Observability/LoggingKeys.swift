/// The metadata keys used across receiptd, defined once so dashboards and queries can rely on them.
/// Dotted lower-case names, following swift-log's structured-logging guidance.
public enum LoggingKeys {
    public static let kafkaTopic = "kafka.topic"
    public static let kafkaPartition = "kafka.partition"
    public static let kafkaOffset = "kafka.offset"
    public static let kafkaKey = "kafka.key"
    public static let stageName = "stage.name"
    public static let stageAttempt = "stage.attempt"
    public static let stageOutcome = "stage.outcome"
    public static let submissionId = "receipt.submission_id"
    public static let payloadSHA256 = "receipt.payload_sha256"
    /// A transaction id, hashed (``SubmissionSubject/loggedTransactionId``): the first 16 hex
    /// digits of its SHA-256, so logs can be searched for a purchase (`printf %s ID | sha256sum`)
    /// without carrying the id itself.
    public static let transactionIdHash = "receipt.transaction_id_sha256"
    public static let reason = "error.reason"
    public static let errorMessage = "error.message"
    /// When a retried record becomes due (RFC 3339).
    public static let retryNotBefore = "retry.not_before"
    /// The retry tier a record goes to (1-based).
    public static let retryTier = "retry.tier"
    /// The id of a `receiptd replay` run.
    public static let replayId = "replay.id"
    /// The most records a stage runner had in flight at once.
    public static let runnerPeakInFlight = "runner.peak_in_flight"
    /// The runner's configured in-flight bound.
    public static let runnerMaxInFlight = "runner.max_in_flight"
    /// How many times the runner reached its bound and paused its partitions.
    public static let runnerBackpressurePauses = "runner.backpressure_pauses"
}
