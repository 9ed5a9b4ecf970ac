import AppStore
import Foundation
import HTTP

extension FakeAppStoreRouter {
    /// Routes `/inApps/…` (already authorized, environment prefix removed).
    func serverAPI(path: String, request: HTTPServerRequest, environment: AppStoreEnvironment) -> HTTPServerResponse {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        if let answer = notificationAPI(parts: parts, request: request, environment: environment) { return answer }
        guard request.method == .get else { return HTTPServerResponse(status: 405, headers: ["Allow": "GET"]) }
        // ["", "inApps", "v1", "transactions", id]
        guard parts.count == 5, parts[0].isEmpty, parts[1] == "inApps" else { return HTTPServerResponse(status: 404) }
        let id = parts[4]
        guard !id.isEmpty, id.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
            return Self.apiError(400, 4_000_006, "Invalid transaction id.")
        }
        switch (parts[2], parts[3]) {
        case ("v1", "transactions"): return transactionInfo(id: id, environment: environment)
        case ("v2", "history"): return history(id: id, revision: request.queryValue("revision"), environment: environment)
        case ("v1", "subscriptions"): return statuses(id: id, environment: environment)
        default: return HTTPServerResponse(status: 404)
        }
    }

    private static var notFound: HTTPServerResponse { apiError(404, 4_040_010, "Transaction id not found.") }

    private func transactionInfo(id: String, environment: AppStoreEnvironment) -> HTTPServerResponse {
        guard let transaction = store.transaction(id: id, environment: environment) else { return Self.notFound }
        guard let jws = sign(transaction.signedPayload(bundleId: configuration.bundleId, signedDate: now)) else {
            return Self.apiError(500, 5_000_000, "An unknown error occurred.")
        }
        return .json(FakeJSON.object([("signedTransactionInfo", .string(jws))]).bytes)
    }

    private func history(id: String, revision: String?, environment: AppStoreEnvironment) -> HTTPServerResponse {
        guard let transactions = store.customerTransactions(of: id, environment: environment) else { return Self.notFound }
        var offset = 0
        if let revision {
            guard let decoded = Data(base64Encoded: revision).map({ String(decoding: $0, as: UTF8.self) }),
                  decoded.hasPrefix("offset:"), let value = Int(decoded.dropFirst("offset:".count)),
                  (0...transactions.count).contains(value) else {
                return Self.apiError(400, 4_000_005, "Invalid request revision.")
            }
            offset = value
        }
        let end = min(offset + configuration.historyPageSize, transactions.count)
        var signed: [FakeJSON] = []
        for transaction in transactions[offset..<end] {
            guard let jws = sign(transaction.signedPayload(bundleId: configuration.bundleId, signedDate: now)) else {
                return Self.apiError(500, 5_000_000, "An unknown error occurred.")
            }
            signed.append(.string(jws))
        }
        // Revision tokens are opaque; this one is standard base64, so '+', '/' and '=' can occur and
        // clients must percent-encode it.
        let nextRevision = Data("offset:\(end)".utf8).base64EncodedString()
        return .json(FakeJSON.object(appMembers(environment) + [
            ("revision", .string(nextRevision)),
            ("hasMore", .bool(end < transactions.count)),
            ("signedTransactions", .array(signed)),
        ]).bytes)
    }

    private func statuses(id: String, environment: AppStoreEnvironment) -> HTTPServerResponse {
        guard let transactions = store.customerTransactions(of: id, environment: environment) else { return Self.notFound }
        var latest: [String: FakeTransaction] = [:]
        for transaction in transactions where transaction.type == .autoRenewable {
            if let current = latest[transaction.originalTransactionId], current.purchaseDate > transaction.purchaseDate { continue }
            latest[transaction.originalTransactionId] = transaction
        }
        let groups = Dictionary(grouping: latest.values) { $0.subscriptionGroupIdentifier ?? "" }
        var data: [FakeJSON] = []
        for (group, members) in groups.sorted(by: { $0.key < $1.key }) {
            var items: [FakeJSON] = []
            for transaction in members.sorted(by: { $0.originalTransactionId < $1.originalTransactionId }) {
                guard let signedTransaction = sign(transaction.signedPayload(bundleId: configuration.bundleId, signedDate: now)),
                      let signedRenewal = sign(transaction.renewalPayload(signedDate: now)) else {
                    return Self.apiError(500, 5_000_000, "An unknown error occurred.")
                }
                let status: Int64 = transaction.revocationDate != nil ? 5 : ((transaction.expiresDate ?? now) > now ? 1 : 2)
                items.append(.object([
                    ("originalTransactionId", .string(transaction.originalTransactionId)),
                    ("status", .integer(status)),
                    ("signedTransactionInfo", .string(signedTransaction)),
                    ("signedRenewalInfo", .string(signedRenewal)),
                ]))
            }
            data.append(.object([("subscriptionGroupIdentifier", .string(group)), ("lastTransactions", .array(items))]))
        }
        return .json(FakeJSON.object(appMembers(environment) + [("data", .array(data))]).bytes)
    }

    /// `environment`, `bundleId` and, in Production, `appAppleId`, as Apple's responses start.
    private func appMembers(_ environment: AppStoreEnvironment) -> [(String, FakeJSON)] {
        var members: [(String, FakeJSON)] = [("environment", .string(environment.rawValue)),
                                             ("bundleId", .string(configuration.bundleId))]
        if environment == .production { members.append(("appAppleId", .integer(configuration.appAppleId))) }
        return members
    }
}
