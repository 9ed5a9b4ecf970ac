import Foundation

/// The outcome of the consumption requests nobody answered: a request whose deadline passed more
/// than `grace` ago with no ``ConsumptionOutcome`` of its `requestId` ends `expired`
/// (`not-answered`). The grace lets answers still in the consumption worker's retry tiers end
/// first (they end `answered`, or `expired` with `deadline-passed`), and a request redelivered
/// with the same `requestId` counts once, so running it again changes nothing.
public enum ConsumptionExpiry {
    /// The reason of an expiry written by this rule.
    public static let notAnswered = "not-answered"

    /// - Returns: one `expired` outcome per request due, in deadline order.
    public static func expired(requests: [ConsumptionRequest], outcomes: [ConsumptionOutcome], now: Date,
                               grace: TimeInterval) -> [ConsumptionOutcome] {
        let ended = Set(outcomes.map(\.requestId))
        var seen: Set<String> = []
        return requests.sorted { ($0.deadline, $0.requestId) < ($1.deadline, $1.requestId) }.compactMap { request in
            guard seen.insert(request.requestId).inserted, !ended.contains(request.requestId),
                  request.deadline.addingTimeInterval(grace) < now else { return nil }
            return ConsumptionOutcome(requestId: request.requestId, transactionId: request.transactionId, outcome: .expired,
                                      reason: notAnswered, appleStatus: nil, at: now)
        }
    }
}
