import Foundation

/// `consumption-request/v1` (``Topics/consumptionRequests``, keyed by `originalTransactionId`):
/// Apple asked, with a verified `CONSUMPTION_REQUEST`, how a purchase was used before it decides
/// a refund; the backend answers with ``ConsumptionAnswer`` before `deadline` (12 hours after
/// Apple signed the request). Written by fulfil, which knows the purchase's owner.
public struct ConsumptionRequest: Sendable, Codable, Equatable, OutboundMessage {
    public static let schema = "consumption-request/v1"
    public static var outputTopic: OutputTopic { .consumptionRequests }
    /// Apple accepts consumption information for 12 hours after it signed the request.
    public static let answerWindow: TimeInterval = 12 * 3600

    public var schema: String
    /// Apple's `notificationUUID`: the same request delivered twice has the same id.
    public var requestId: String
    public var bundleId: String
    /// The purchase's owner.
    public var userId: String
    public var transactionId: String
    public var originalTransactionId: String
    public var productId: String
    public var environment: String
    /// When Apple signed the request.
    public var requestedAt: Date
    /// The last instant Apple accepts the answer.
    public var deadline: Date

    public init(requestId: String, bundleId: String, userId: String, transactionId: String, originalTransactionId: String,
                productId: String, environment: String, requestedAt: Date) {
        self.schema = Self.schema
        self.requestId = requestId
        self.bundleId = bundleId
        self.userId = userId
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.productId = productId
        self.environment = environment
        self.requestedAt = requestedAt
        self.deadline = requestedAt.addingTimeInterval(Self.answerWindow)
    }

    public var recordKey: String { originalTransactionId }

    private enum CodingKeys: String, CodingKey {
        case schema, requestId, bundleId, userId, transactionId, originalTransactionId, productId, environment, requestedAt, deadline
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        schema = try c.decode(String.self, forKey: .schema)
        guard schema == Self.schema else {
            throw DecodingError.dataCorruptedError(forKey: .schema, in: c, debugDescription: "expected \(Self.schema)")
        }
        requestId = try c.decode(String.self, forKey: .requestId)
        bundleId = try c.decode(String.self, forKey: .bundleId)
        userId = try c.decode(String.self, forKey: .userId)
        transactionId = try c.decode(String.self, forKey: .transactionId)
        originalTransactionId = try c.decode(String.self, forKey: .originalTransactionId)
        productId = try c.decode(String.self, forKey: .productId)
        environment = try c.decode(String.self, forKey: .environment)
        requestedAt = try c.decodeTimestamp(forKey: .requestedAt)
        deadline = try c.decodeTimestamp(forKey: .deadline)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(schema, forKey: .schema)
        try c.encode(requestId, forKey: .requestId)
        try c.encode(bundleId, forKey: .bundleId)
        try c.encode(userId, forKey: .userId)
        try c.encode(transactionId, forKey: .transactionId)
        try c.encode(originalTransactionId, forKey: .originalTransactionId)
        try c.encode(productId, forKey: .productId)
        try c.encode(environment, forKey: .environment)
        try c.encodeTimestamp(requestedAt, forKey: .requestedAt)
        try c.encodeTimestamp(deadline, forKey: .deadline)
    }
}
