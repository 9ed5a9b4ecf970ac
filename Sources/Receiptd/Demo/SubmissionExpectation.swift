/// What a correct pipeline concludes from one submission: the verdict the tally must record
/// (the `action` of its first entitlement-changed event, its outcome, or its rejection).
enum SubmissionExpectation: Sendable, Equatable, CustomStringConvertible {
    /// An entitlement change whose first event has this action (`grant`, `renew`, `update`, `expire`, `revoke`).
    case entitlement(action: String)
    /// A rejection with this reason code.
    case rejected(reason: String)
    /// An outcome without an event: `duplicate-suppressed`, `stale-suppressed`,
    /// `notification-informational`, `no-transactions`.
    case outcome(String)

    /// Nothing new for a purchase fulfil already applied.
    static let duplicate = SubmissionExpectation.outcome("duplicate-suppressed")
    /// An input older than what fulfil already applied.
    static let stale = SubmissionExpectation.outcome("stale-suppressed")
    /// A notification that never changes an entitlement.
    static let informational = SubmissionExpectation.outcome("notification-informational")

    /// The verdict the tally records for a submission that met this expectation.
    var verdict: String {
        switch self {
        case .entitlement(let action): action
        case .rejected(let reason): "rejected:" + reason
        case .outcome(let outcome): outcome
        }
    }

    var description: String { verdict }

    /// Whether `verdict` is right. With `anyOrder` (chaos), a step of a purchase may end as any of
    /// its purchase's changes or as suppressed: kills, retries and replays reorder the inputs of
    /// one purchase, and which input makes which change is then a matter of order, not of
    /// correctness (the final-owner-state check guards the result). Rejections, informational
    /// notifications and empty notifications do not depend on order, so they must match exactly.
    func accepts(_ verdict: String, anyOrder: Bool) -> Bool {
        if verdict == self.verdict { return true }
        guard anyOrder, isOrderDependent else { return false }
        return Self.orderDependentVerdicts.contains(verdict) || verdict == "duplicate-suppressed" || verdict == "stale-suppressed"
    }

    private var isOrderDependent: Bool {
        switch self {
        case .entitlement: true
        case .outcome(let outcome): outcome == "duplicate-suppressed" || outcome == "stale-suppressed"
        case .rejected: false
        }
    }

    private static let orderDependentVerdicts: Set<String> = ["grant", "renew", "update", "expire", "revoke"]
}
