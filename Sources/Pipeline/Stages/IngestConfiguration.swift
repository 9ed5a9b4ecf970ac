/// Limits ingest enforces on raw submissions. Defaults are generous for real receipts and tight
/// enough that one record cannot hurt the pipeline.
public struct IngestConfiguration: Sendable, Equatable {
    /// Largest accepted record value in bytes (default 256 KiB; legacy app receipts are the
    /// biggest payloads and stay well below).
    public var maxRecordBytes: Int
    /// Longest `submissionId` in characters (default 128; UUIDs and ULIDs fit easily).
    public var maxSubmissionIdLength: Int
    /// Longest `userId` in UTF-8 bytes (default 256).
    public var maxUserIdBytes: Int
    /// Longest `bundleId` in characters (default 155, Apple's limit).
    public var maxBundleIdLength: Int
    /// Most digits a `transactionId` payload may have (default 32; Apple's ids are ~16).
    public var maxTransactionIdDigits: Int

    /// Creates a configuration; every parameter has the documented default.
    public init(maxRecordBytes: Int = 256 * 1024, maxSubmissionIdLength: Int = 128, maxUserIdBytes: Int = 256,
                maxBundleIdLength: Int = 155, maxTransactionIdDigits: Int = 32) {
        self.maxRecordBytes = maxRecordBytes
        self.maxSubmissionIdLength = maxSubmissionIdLength
        self.maxUserIdBytes = maxUserIdBytes
        self.maxBundleIdLength = maxBundleIdLength
        self.maxTransactionIdDigits = maxTransactionIdDigits
    }

    /// Checks every limit is positive.
    /// - Throws: ``PipelineConfigurationError`` naming the offending limit.
    public func validate() throws {
        let limits: [(String, Int)] = [
            ("maxRecordBytes", maxRecordBytes), ("maxSubmissionIdLength", maxSubmissionIdLength),
            ("maxUserIdBytes", maxUserIdBytes), ("maxBundleIdLength", maxBundleIdLength),
            ("maxTransactionIdDigits", maxTransactionIdDigits),
        ]
        for (name, value) in limits where value <= 0 {
            throw PipelineConfigurationError("ingest.\(name) must be positive, got \(value)")
        }
    }
}
