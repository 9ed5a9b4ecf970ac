/// The knobs of a ``StageRunner``, with the defaults a production worker uses.
public struct StageRunnerConfiguration: Sendable {
    /// Topic names (inputs, outputs, rejections, outcomes, dead letters, retry tiers).
    public var topics: Topics
    /// Records admitted and not yet finished, across all partitions (default 256). When reached,
    /// the runner pauses the source's partitions and keeps pulling (see ``StageRunner``).
    public var maxInFlight: Int
    /// Partitions are resumed once in-flight records drop to this many (default `maxInFlight`
    /// minus an eighth), so a saturated runner does not pause and resume on every record. The
    /// band is kept narrow on purpose: a stage bound by latency (the verify stage waiting 250 ms
    /// on Apple) runs at `inFlight / latency`, and resuming only at half would cost it up to half
    /// its throughput (measured with `receiptd bench appstore`).
    public var resumeThreshold: Int?
    /// Longest one `process` call may take before it is cancelled and counted as a transient
    /// `timeout` failure (default 30 s).
    public var processingTimeout: Duration
    /// Longest a revocation waits for the revoked partitions' in-flight records (default 30 s);
    /// after that, the partitions are released anyway and unfinished records are redelivered to
    /// the next owner.
    public var revocationTimeout: Duration
    /// Longest a graceful shutdown waits for in-flight records before cancelling them (default 30 s).
    public var shutdownGracePeriod: Duration
    /// Most bytes of the input value copied into a rejection's `original` (default 256 KiB).
    public var maxOriginalBytes: Int
    /// Most bytes of the `receiptd-error` header (default 1 KiB).
    public var maxErrorHeaderBytes: Int
    /// How long the runner waits before calling a failed ``PartitionAssignmentHook/prepare(_:)``
    /// again (default 1 s); the delay doubles after each failure, up to 30 s.
    public var preparationRetryDelay: Duration

    /// Creates a configuration; every parameter has the documented default.
    public init(topics: Topics = Topics(), maxInFlight: Int = 256, resumeThreshold: Int? = nil,
                processingTimeout: Duration = .seconds(30), revocationTimeout: Duration = .seconds(30),
                shutdownGracePeriod: Duration = .seconds(30), maxOriginalBytes: Int = 256 * 1024,
                maxErrorHeaderBytes: Int = 1024, preparationRetryDelay: Duration = .seconds(1)) {
        self.topics = topics
        self.maxInFlight = maxInFlight
        self.resumeThreshold = resumeThreshold
        self.processingTimeout = processingTimeout
        self.revocationTimeout = revocationTimeout
        self.shutdownGracePeriod = shutdownGracePeriod
        self.maxOriginalBytes = maxOriginalBytes
        self.maxErrorHeaderBytes = maxErrorHeaderBytes
        self.preparationRetryDelay = preparationRetryDelay
    }

    /// The resume threshold in effect.
    public var effectiveResumeThreshold: Int {
        resumeThreshold ?? maxInFlight - max(1, maxInFlight / 8)
    }

    /// Checks every value is usable.
    /// - Throws: ``PipelineConfigurationError`` naming the key and the accepted range.
    public func validate() throws {
        try topics.validate()
        guard maxInFlight >= 1 else {
            throw PipelineConfigurationError("runner.maxInFlight must be at least 1, got \(maxInFlight)")
        }
        if let resumeThreshold, !(0..<maxInFlight).contains(resumeThreshold) {
            throw PipelineConfigurationError("runner.resumeThreshold must be in 0..<maxInFlight (\(maxInFlight)), got \(resumeThreshold)")
        }
        for (name, value) in [("processingTimeout", processingTimeout), ("revocationTimeout", revocationTimeout),
                              ("shutdownGracePeriod", shutdownGracePeriod),
                              ("preparationRetryDelay", preparationRetryDelay)] where value <= .zero {
            throw PipelineConfigurationError("runner.\(name) must be positive, got \(value)")
        }
        guard maxOriginalBytes >= 0 else {
            throw PipelineConfigurationError("runner.maxOriginalBytes must not be negative, got \(maxOriginalBytes)")
        }
        guard maxErrorHeaderBytes >= 16 else {
            throw PipelineConfigurationError("runner.maxErrorHeaderBytes must be at least 16, got \(maxErrorHeaderBytes)")
        }
    }
}
