import AppStore
import Foundation
import Synchronization
import HTTP

extension FakeAppStoreRouter {
    /// Routes the notification-related endpoints; nil for any other path.
    func notificationAPI(parts: [String], request: HTTPServerRequest, environment: AppStoreEnvironment) -> HTTPServerResponse? {
        // ["", "inApps", "v1", "notifications", "history"]
        if parts.count == 5, parts[1] == "inApps", parts[2] == "v1", parts[3] == "notifications", parts[4] == "history" {
            guard request.method == .post else { return HTTPServerResponse(status: 405, headers: ["Allow": "POST"]) }
            return notificationHistory(request, environment: environment)
        }
        // ["", "inApps", "v1", "transactions", "consumption", id]
        if parts.count == 6, parts[1] == "inApps", parts[2] == "v1", parts[3] == "transactions", parts[4] == "consumption" {
            guard request.method == .put else { return HTTPServerResponse(status: 405, headers: ["Allow": "PUT"]) }
            return consumption(id: parts[5], request: request, environment: environment)
        }
        return nil
    }

    /// Get Notification History: `startDate`/`endDate` (ms, required), optional `transactionId`,
    /// `notificationType`, `notificationSubtype`, `onlyFailures`; pages of `historyPageSize`.
    private func notificationHistory(_ request: HTTPServerRequest, environment: AppStoreEnvironment) -> HTTPServerResponse {
        guard let body = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any],
              let start = (body["startDate"] as? NSNumber)?.int64Value, let end = (body["endDate"] as? NSNumber)?.int64Value else {
            return Self.apiError(400, 4_000_000, "startDate and endDate are required.")
        }
        guard start < end else { return Self.apiError(400, 4_000_011, "Invalid end date.") }
        let onlyFailures = (body["onlyFailures"] as? Bool) ?? false
        let matching = notifications.notifications.filter { notification in
            let created = notification.createdAt.fakeMilliseconds
            return notification.environment == environment && created >= start && created < end
                && (body["transactionId"] as? String).map { $0 == notification.transactionId } ?? true
                && (body["notificationType"] as? String).map { $0 == notification.notificationType } ?? true
                && (body["notificationSubtype"] as? String).map { $0 == notification.subtype } ?? true
                && (!onlyFailures || !notification.delivered)
        }
        var offset = 0
        if let token = request.queryValue("paginationToken") {
            guard let decoded = Data(base64Encoded: token).map({ String(decoding: $0, as: UTF8.self) }),
                  decoded.hasPrefix("history:"), let value = Int(decoded.dropFirst("history:".count)),
                  (0...matching.count).contains(value) else {
                return Self.apiError(400, 4_000_008, "Invalid pagination token.")
            }
            offset = value
        }
        let pageEnd = min(offset + configuration.historyPageSize, matching.count)
        let items: [FakeJSON] = matching[offset..<pageEnd].map { notification in
            .object([
                ("sendAttempts", .array(notification.attempts.map {
                    .object([("attemptDate", .integer($0.date.fakeMilliseconds)), ("sendAttemptResult", .string($0.result))])
                })),
                ("signedPayload", .string(notification.signedPayload)),
            ])
        }
        var members: [(String, FakeJSON)] = [("notificationHistory", .array(items)), ("hasMore", .bool(pageEnd < matching.count))]
        if pageEnd < matching.count {
            members.append(("paginationToken", .string(Data("history:\(pageEnd)".utf8).base64EncodedString())))
        }
        return .json(FakeJSON.object(members).bytes)
    }

    /// The members Send Consumption Information requires, with their allowed integer ranges
    /// (booleans have none; `appAccountToken` is a string, empty when the app set none).
    static let consumptionFields: [(String, ClosedRange<Int>?)] = [
        ("customerConsented", nil), ("sampleContentProvided", nil), ("consumptionStatus", 0...3), ("platform", 0...2),
        ("deliveryStatus", 0...5), ("accountTenure", 0...7), ("playTime", 0...7), ("lifetimeDollarsRefunded", 0...7),
        ("lifetimeDollarsPurchased", 0...7), ("userStatus", 0...4),
    ]

    /// Foundation decodes JSON `true`/`false` and numbers all as `NSNumber`; only booleans have type `c`.
    static func isBoolean(_ number: NSNumber) -> Bool { String(cString: number.objCType) == "c" }

    private func consumption(id: String, request: HTTPServerRequest, environment: AppStoreEnvironment) -> HTTPServerResponse {
        guard !id.isEmpty, id.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
            return Self.apiError(400, 4_000_006, "Invalid transaction id.")
        }
        guard store.transaction(id: id, environment: environment) != nil else {
            return Self.apiError(404, 4_040_010, "Transaction id not found.")
        }
        guard let body = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any] else {
            return Self.apiError(400, 4_000_000, "The request body is not a JSON object.")
        }
        var fields: [String: String] = [:]
        for (name, range) in Self.consumptionFields {
            if let range {
                guard let number = body[name] as? NSNumber, !Self.isBoolean(number), range.contains(number.intValue) else {
                    return Self.apiError(400, 4_000_000, "\(name) is missing or out of range.")
                }
                fields[name] = String(number.intValue)
            } else {
                guard let flag = body[name] as? NSNumber, Self.isBoolean(flag) else {
                    return Self.apiError(400, 4_000_000, "\(name) must be a boolean.")
                }
                fields[name] = String(flag.boolValue)
            }
        }
        guard fields["customerConsented"] == "true" else {
            return Self.apiError(400, 4_000_000, "customerConsented must be true.")
        }
        guard let token = body["appAccountToken"] as? String else {
            return Self.apiError(400, 4_000_000, "appAccountToken must be a string (empty when none).")
        }
        fields["appAccountToken"] = token
        if let preference = body["refundPreference"] as? NSNumber { fields["refundPreference"] = String(preference.intValue) }
        consumptionReports.withLock {
            $0.append(FakeConsumptionReport(transactionId: id, environment: environment, fields: fields, receivedAt: now))
        }
        return HTTPServerResponse(status: 202)
    }
}
