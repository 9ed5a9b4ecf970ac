/// What a stage decided about one input. Expected negative outcomes are values, not errors
/// (the `VerificationResult` idea): errors are reserved for failures that might go away.
public enum StageResult<Output: Sendable>: Sendable {
    /// Emit these messages (each to its own topic and key). An empty list is allowed and
    /// simply completes the record.
    case emit([Output])
    /// Refuse the input for good: the runner writes `receipt-rejected/v1` with `reason`.
    /// `subject` adds what the stage learnt about the submission (ingest parses it itself).
    case reject(reason: ReasonCode, detail: String, subject: SubmissionSubject = .unknown)
    /// End processing on purpose without output (e.g. a duplicate): the runner writes
    /// `receipt-outcome/v1` so every submission stays accounted for.
    case done(outcome: OutcomeCode, subject: SubmissionSubject = .unknown)
}
