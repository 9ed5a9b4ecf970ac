import Foundation

/// A notification body that passed ``NotificationIntake``: the `receipt-submitted/v1` record to
/// publish and what may be logged about it.
public struct AcceptedNotification: Sendable, Equatable {
    /// The record key, ``recordKey(bundleId:payloadSHA256:)``.
    public var key: String

    /// The record key of a user-less notification, `bundleId/<payloadSHA256>`: Apple's retries of
    /// one notification share a partition, while different notifications spread over all of
    /// them (one key for all would put them on one partition and in one per-key chain, processed
    /// one at a time).
    public static func recordKey(bundleId: String, payloadSHA256: String) -> String {
        bundleId + "/" + payloadSHA256
    }
    /// The `receipt-submitted/v1` JSON (kind `serverNotification`, no `userId`).
    public var value: [UInt8]
    /// `apple-notification:<payloadSHA256>`: the same payload always gets the same id.
    public var submissionId: String
    /// The app the (unverified) payload names.
    public var bundleId: String
    /// Hex SHA-256 of `signedPayload`, logged instead of it.
    public var payloadSHA256: String
    /// Apple's `notificationUUID` when the payload carries one (logging only; unverified).
    public var notificationUUID: String?
    /// Apple's `signedDate` when the payload carries one (progress only; unverified).
    public var signedDate: Date?
}
