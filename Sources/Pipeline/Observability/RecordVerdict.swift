/// How a processed record ended, with what the metrics need to know about it (the reason code,
/// the outcome code, the retry tier); ``RecordRouter/Route`` is its label-only projection.
enum RecordVerdict: Sendable, Equatable {
    case emitted
    case rejected(ReasonCode)
    case done(OutcomeCode)
    case retried(tier: Int, reason: ReasonCode)
    case deadLettered(ReasonCode)

    var route: RecordRouter.Route {
        switch self {
        case .emitted: .emitted
        case .rejected: .rejected
        case .done: .done
        case .retried: .retried
        case .deadLettered: .deadLettered
        }
    }
}
