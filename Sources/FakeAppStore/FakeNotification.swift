import AppStore
import Foundation

/// One App Store Server Notification V2 the fake has sent (or tried to), as Get Notification
/// History reports it: the signed payload and every send attempt.
public struct FakeNotification: Sendable, Equatable {
    /// One delivery attempt: when, and Apple's `sendAttemptResult` for it.
    public struct Attempt: Sendable, Equatable {
        public var date: Date
        /// `SUCCESS`, `UNSUCCESSFUL_HTTP_RESPONSE_CODE`, `NO_RESPONSE`, `TIMED_OUT`, …
        public var result: String
    }

    public var notificationUUID: String
    public var notificationType: String
    public var subtype: String?
    /// The transaction it is about, if any (history can be filtered by it).
    public var transactionId: String?
    public var environment: AppStoreEnvironment
    /// What Apple POSTs as `{"signedPayload": …}`.
    public var signedPayload: String
    public var createdAt: Date
    public var attempts: [Attempt] = []

    /// Whether the receiver answered 200...206 on some attempt.
    public var delivered: Bool { attempts.contains { $0.result == "SUCCESS" } }

    /// The body Apple POSTs.
    public var body: [UInt8] { FakeJSON.object([("signedPayload", .string(signedPayload))]).bytes }
}

/// What the caller asks the fake to notify about.
public struct FakeNotificationRequest: Sendable {
    public var notificationType: String
    public var subtype: String?
    /// Signed as `data.signedTransactionInfo` (and its renewal info for subscriptions).
    public var transaction: FakeTransaction?
    /// `data.status` (subscriptions), when set.
    public var status: Int?
    /// `data.consumptionRequestReason` for `CONSUMPTION_REQUEST`.
    public var consumptionRequestReason: String?
    /// The environment when there is no transaction (`TEST`).
    public var environment: AppStoreEnvironment

    public init(notificationType: String, subtype: String? = nil, transaction: FakeTransaction? = nil, status: Int? = nil,
                consumptionRequestReason: String? = nil, environment: AppStoreEnvironment? = nil) {
        self.notificationType = notificationType
        self.subtype = subtype
        self.transaction = transaction
        self.status = status
        self.consumptionRequestReason = consumptionRequestReason
        self.environment = environment ?? transaction?.environment ?? .production
    }

    /// The notification payload Apple would sign (`responseBodyV2DecodedPayload`).
    func payload(uuid: String, bundleId: String, appAppleId: Int64, signedDate: Date,
                 sign: (FakeJSON) -> String?) -> FakeJSON? {
        var data: [(String, FakeJSON)] = []
        if environment == .production { data.append(("appAppleId", .integer(appAppleId))) }
        data += [("bundleId", .string(bundleId)), ("bundleVersion", .string("1.0")),
                 ("environment", .string(environment.rawValue))]
        if let transaction {
            guard let signed = sign(transaction.signedPayload(bundleId: bundleId, signedDate: signedDate)) else { return nil }
            data.append(("signedTransactionInfo", .string(signed)))
            if transaction.type == .autoRenewable {
                guard let renewal = sign(transaction.renewalPayload(signedDate: signedDate)) else { return nil }
                data.append(("signedRenewalInfo", .string(renewal)))
            }
        }
        if let status { data.append(("status", .integer(Int64(status)))) }
        if let consumptionRequestReason { data.append(("consumptionRequestReason", .string(consumptionRequestReason))) }
        var members: [(String, FakeJSON)] = [("notificationType", .string(notificationType))]
        if let subtype { members.append(("subtype", .string(subtype))) }
        members += [("notificationUUID", .string(uuid)), ("data", .object(data)), ("version", .string("2.0")),
                    ("signedDate", .integer(signedDate.fakeMilliseconds))]
        return .object(members)
    }
}
