/// Why a stage refused an input for good, as a value: a reason code, a human detail (never the
/// payload) and whatever identifying fields were known when the problem was found. The pure
/// cores of the stages (``IngestStage/ingest(_:now:)``, ``PurchaseLifecycle``) return it.
public struct Rejection: Error, Sendable, Equatable, CustomStringConvertible {
    public var reason: ReasonCode
    /// Human-readable context; never the payload.
    public var detail: String
    public var subject: SubmissionSubject

    /// Creates a rejection.
    public init(reason: ReasonCode, detail: String, subject: SubmissionSubject = .unknown) {
        self.reason = reason
        self.detail = detail
        self.subject = subject
    }

    public var description: String { "\(reason): \(detail)" }
}
