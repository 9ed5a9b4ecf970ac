import Foundation
import HTTP

extension AppStoreServerAPIClient {
    /// Get Notification History: `POST /inApps/v1/notifications/history[?paginationToken=…]`, one page.
    /// - Parameters:
    ///   - request: The time span (Apple keeps 180 days) and filters.
    ///   - paginationToken: The previous page's token; nil for the first page.
    ///   - environment: The environment whose notifications are listed.
    /// - Returns: One page of signed notifications with their send attempts.
    /// - Throws: ``AppStoreServerAPIError``.
    public func getNotificationHistory(_ request: NotificationHistoryRequest, paginationToken: String? = nil,
                                       environment: AppStoreEnvironment) async throws(AppStoreServerAPIError)
        -> NotificationHistoryResponse {
        let query = paginationToken.map { [("paginationToken", $0)] } ?? []
        let body = try await exchange("/inApps/v1/notifications/history" + Self.queryString(query), environment: environment,
                                      method: .post, body: request.body)
        return try NotificationHistoryResponse(body: body, environment: environment)
    }

    /// Send Consumption Information: `PUT /inApps/v1/transactions/consumption/{transactionId}`
    /// (Apple answers 202 with no body).
    /// - Parameters:
    ///   - transactionId: The transaction of the `CONSUMPTION_REQUEST`.
    ///   - body: The `ConsumptionRequest` JSON.
    ///   - environment: The environment of the transaction.
    /// - Throws: ``AppStoreServerAPIError``.
    public func sendConsumptionInformation(transactionId: String, body: [UInt8],
                                           environment: AppStoreEnvironment) async throws(AppStoreServerAPIError) {
        guard Self.isValidTransactionId(transactionId) else {
            throw AppStoreServerAPIError(reason: .apiInvalidRequest, environment: environment,
                                         detail: "transaction id must be 1-64 ASCII letters or digits")
        }
        _ = try await exchange("/inApps/v1/transactions/consumption/" + transactionId, environment: environment,
                               method: .put, body: body)
    }
}

/// The body of Get Notification History.
public struct NotificationHistoryRequest: Sendable, Equatable {
    public var startDate: Date
    public var endDate: Date
    public var transactionId: String?
    public var notificationType: String?
    public var notificationSubtype: String?
    /// Only notifications Apple never delivered successfully.
    public var onlyFailures: Bool

    public init(startDate: Date, endDate: Date, transactionId: String? = nil, notificationType: String? = nil,
                notificationSubtype: String? = nil, onlyFailures: Bool = false) {
        self.startDate = startDate
        self.endDate = endDate
        self.transactionId = transactionId
        self.notificationType = notificationType
        self.notificationSubtype = notificationSubtype
        self.onlyFailures = onlyFailures
    }

    var body: [UInt8] {
        var object: [String: Any] = ["startDate": Int64((startDate.timeIntervalSince1970 * 1000).rounded(.down)),
                                     "endDate": Int64((endDate.timeIntervalSince1970 * 1000).rounded(.down))]
        if let transactionId { object["transactionId"] = transactionId }
        if let notificationType { object["notificationType"] = notificationType }
        if let notificationSubtype { object["notificationSubtype"] = notificationSubtype }
        if onlyFailures { object["onlyFailures"] = true }
        return (try? JSONSerialization.data(withJSONObject: object, options: .sortedKeys)).map { Array($0) } ?? []
    }
}

/// One page of Get Notification History.
public struct NotificationHistoryResponse: Sendable, Equatable {
    /// One notification: Apple's signed payload (as it was POSTed) and its send attempts.
    public struct Item: Sendable, Equatable {
        public var signedPayload: String
        /// `(attemptDate, sendAttemptResult)` in Apple's order.
        public var sendAttempts: [(date: Date, result: String)]

        public init(signedPayload: String, sendAttempts: [(date: Date, result: String)] = []) {
            self.signedPayload = signedPayload
            self.sendAttempts = sendAttempts
        }

        public static func == (lhs: Item, rhs: Item) -> Bool {
            lhs.signedPayload == rhs.signedPayload && lhs.sendAttempts.map(\.result) == rhs.sendAttempts.map(\.result)
                && lhs.sendAttempts.map(\.date) == rhs.sendAttempts.map(\.date)
        }
    }

    public var items: [Item]
    public var hasMore: Bool
    /// The token for the next page (present while ``hasMore``).
    public var paginationToken: String?
    public var environment: AppStoreEnvironment

    /// Creates a page (stubs in tests; the client parses Apple's answer).
    public init(items: [Item], hasMore: Bool, paginationToken: String?, environment: AppStoreEnvironment) {
        self.items = items
        self.hasMore = hasMore
        self.paginationToken = paginationToken
        self.environment = environment
    }

    init(body: [UInt8], environment: AppStoreEnvironment) throws(AppStoreServerAPIError) {
        let object = try ServerAPIJSON.object(body, environment: environment)
        do throws(VerificationError) {
            hasMore = try object.optionalBool("hasMore") ?? false
            paginationToken = try object.optionalString("paginationToken")
            items = []
            for item in try ServerAPIJSON.objects(object, "notificationHistory") {
                var attempts: [(date: Date, result: String)] = []
                for attempt in try ServerAPIJSON.objects(item, "sendAttempts") {
                    let date = try attempt.optionalDate("attemptDate", range: 0...253_402_300_799_999) ?? Date(timeIntervalSince1970: 0)
                    attempts.append((date, try attempt.optionalString("sendAttemptResult") ?? "OTHER"))
                }
                items.append(Item(signedPayload: try item.requiredString("signedPayload"),
                                  sendAttempts: attempts))
            }
        } catch {
            throw ServerAPIJSON.invalid(error.detail, environment)
        }
        self.environment = environment
        if hasMore && paginationToken == nil { throw ServerAPIJSON.invalid("hasMore without a paginationToken", environment) }
    }
}
