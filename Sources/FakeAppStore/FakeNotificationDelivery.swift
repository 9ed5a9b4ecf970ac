/// How the fake delivers notifications, as Apple documents for V2: one POST, then in Production
/// up to five retries after a non-2xx answer (1, 12, 24, 48 and 72 hours after the previous
/// attempt); Sandbox tries once. Tests compress the schedule.
public struct FakeNotificationDelivery: Sendable {
    /// Apple's V2 retry delays, each after the previous attempt.
    public static let appleRetrySchedule: [Duration] = [1, 12, 24, 48, 72].map { Duration.seconds($0 * 3600) }

    /// Where notifications are POSTed; `nil` records them for history without sending.
    public var receiverURL: String?
    /// Delays before each retry of a Production notification (Sandbox never retries).
    public var retrySchedule: [Duration] = FakeNotificationDelivery.appleRetrySchedule
    /// An attempt without an answer within this is `TIMED_OUT`.
    public var attemptTimeout: Duration = .seconds(10)

    public init(receiverURL: String? = nil, retrySchedule: [Duration] = FakeNotificationDelivery.appleRetrySchedule,
                attemptTimeout: Duration = .seconds(10)) {
        self.receiverURL = receiverURL
        self.retrySchedule = retrySchedule
        self.attemptTimeout = attemptTimeout
    }
}

/// What a delivery did, streamed by ``FakeAppStore/deliveryEvents()`` so tests follow it without sleeping.
public enum FakeDeliveryEvent: Sendable, Equatable {
    /// Attempt `attempt` (1-based) ended with Apple's `sendAttemptResult` (`status` when one came back).
    case attempted(uuid: String, attempt: Int, result: String, status: Int?)
    /// The receiver took it (2xx).
    case delivered(uuid: String, attempts: Int)
    /// No attempt succeeded and no retry is left.
    case abandoned(uuid: String, attempts: Int)
}
