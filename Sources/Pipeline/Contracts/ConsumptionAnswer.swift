import Foundation

/// `consumption-answer/v1` (``Topics/consumptionAnswers``, what the backend publishes, keyed by
/// `originalTransactionId`): its answer to a ``ConsumptionRequest``, which `receiptd consumption`
/// sends to Apple (Send Consumption Information) if the deadline has not passed.
public struct ConsumptionAnswer: Sendable, Codable, Equatable {
    public static let schema = "consumption-answer/v1"

    public var schema: String
    /// The request's `requestId`.
    public var requestId: String
    public var transactionId: String
    /// `Production` or `Sandbox` (the request's).
    public var environment: String
    /// The request's deadline: an answer after it is not sent (outcome `expired`).
    public var deadline: Date
    /// Apple's `ConsumptionRequest` body, sent as it is.
    public var consumption: ConsumptionInformation

    public init(requestId: String, transactionId: String, environment: String, deadline: Date, consumption: ConsumptionInformation) {
        self.schema = Self.schema
        self.requestId = requestId
        self.transactionId = transactionId
        self.environment = environment
        self.deadline = deadline
        self.consumption = consumption
    }

    private enum CodingKeys: String, CodingKey { case schema, requestId, transactionId, environment, deadline, consumption }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        schema = try c.decode(String.self, forKey: .schema)
        guard schema == Self.schema else {
            throw DecodingError.dataCorruptedError(forKey: .schema, in: c, debugDescription: "expected \(Self.schema)")
        }
        requestId = try c.decode(String.self, forKey: .requestId)
        transactionId = try c.decode(String.self, forKey: .transactionId)
        environment = try c.decode(String.self, forKey: .environment)
        deadline = try c.decodeTimestamp(forKey: .deadline)
        consumption = try c.decode(ConsumptionInformation.self, forKey: .consumption)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(schema, forKey: .schema)
        try c.encode(requestId, forKey: .requestId)
        try c.encode(transactionId, forKey: .transactionId)
        try c.encode(environment, forKey: .environment)
        try c.encodeTimestamp(deadline, forKey: .deadline)
        try c.encode(consumption, forKey: .consumption)
    }
}

/// Apple's `ConsumptionRequest` members (the values are Apple's codes; see Send Consumption
/// Information). `customerConsented` must be true for Apple to accept it.
public struct ConsumptionInformation: Sendable, Codable, Equatable {
    public var customerConsented: Bool
    public var consumptionStatus: Int
    public var platform: Int
    public var sampleContentProvided: Bool
    public var deliveryStatus: Int
    /// The app's UUID for the customer, or empty.
    public var appAccountToken: String
    public var accountTenure: Int
    public var playTime: Int
    public var lifetimeDollarsRefunded: Int
    public var lifetimeDollarsPurchased: Int
    public var userStatus: Int
    /// Optional in Apple's API; `null` here when not given.
    public var refundPreference: Int?

    public init(customerConsented: Bool, consumptionStatus: Int, platform: Int, sampleContentProvided: Bool, deliveryStatus: Int,
                appAccountToken: String, accountTenure: Int, playTime: Int, lifetimeDollarsRefunded: Int,
                lifetimeDollarsPurchased: Int, userStatus: Int, refundPreference: Int? = nil) {
        self.customerConsented = customerConsented
        self.consumptionStatus = consumptionStatus
        self.platform = platform
        self.sampleContentProvided = sampleContentProvided
        self.deliveryStatus = deliveryStatus
        self.appAccountToken = appAccountToken
        self.accountTenure = accountTenure
        self.playTime = playTime
        self.lifetimeDollarsRefunded = lifetimeDollarsRefunded
        self.lifetimeDollarsPurchased = lifetimeDollarsPurchased
        self.userStatus = userStatus
        self.refundPreference = refundPreference
    }

    private enum CodingKeys: String, CodingKey {
        case customerConsented, consumptionStatus, platform, sampleContentProvided, deliveryStatus, appAccountToken
        case accountTenure, playTime, lifetimeDollarsRefunded, lifetimeDollarsPurchased, userStatus, refundPreference
    }

    /// Every member written, `refundPreference` as `null` when absent (the contract's dialect).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(customerConsented, forKey: .customerConsented)
        try c.encode(consumptionStatus, forKey: .consumptionStatus)
        try c.encode(platform, forKey: .platform)
        try c.encode(sampleContentProvided, forKey: .sampleContentProvided)
        try c.encode(deliveryStatus, forKey: .deliveryStatus)
        try c.encode(appAccountToken, forKey: .appAccountToken)
        try c.encode(accountTenure, forKey: .accountTenure)
        try c.encode(playTime, forKey: .playTime)
        try c.encode(lifetimeDollarsRefunded, forKey: .lifetimeDollarsRefunded)
        try c.encode(lifetimeDollarsPurchased, forKey: .lifetimeDollarsPurchased)
        try c.encode(userStatus, forKey: .userStatus)
        try c.encode(refundPreference, forKey: .refundPreference)
    }

    /// The first member outside Apple's documented range, if any (`nil`: Apple may accept it).
    public var problem: String? {
        let ranges: [(String, Int, ClosedRange<Int>)] = [
            ("consumptionStatus", consumptionStatus, 0...3), ("platform", platform, 0...2), ("deliveryStatus", deliveryStatus, 0...5),
            ("accountTenure", accountTenure, 0...7), ("playTime", playTime, 0...7),
            ("lifetimeDollarsRefunded", lifetimeDollarsRefunded, 0...7), ("lifetimeDollarsPurchased", lifetimeDollarsPurchased, 0...7),
            ("userStatus", userStatus, 0...4), ("refundPreference", refundPreference ?? 0, 0...3),
        ]
        if let bad = ranges.first(where: { !$0.2.contains($0.1) }) { return "\(bad.0) \(bad.1) is outside \(bad.2)" }
        if !customerConsented { return "customerConsented is false: Apple takes consumption data only with the customer's consent" }
        return nil
    }

    /// The JSON body Apple takes (`refundPreference` left out when absent).
    public var appleBody: [UInt8] {
        get throws {
            var object = try JSONSerialization.jsonObject(with: JSONEncoder().encode(self)) as? [String: Any] ?? [:]
            if refundPreference == nil { object.removeValue(forKey: "refundPreference") }
            return Array(try JSONSerialization.data(withJSONObject: object, options: .sortedKeys))
        }
    }
}
