import AppStore
import Foundation
import Testing
@testable import Pipeline

/// The real Apple-signed notifications of `../shared/vectors/apple/jws` (Session's Sandbox
/// subscription `2000001024993299`, README section 2) driven through the real verifier (Apple
/// Root CA - G3, checked at each `signedDate`) and fulfil, in the order Apple sent them:
/// DID_RENEW renews, SUBSCRIBED/RESUBSCRIBE starts a new period, EXPIRED expires,
/// CONSUMPTION_REQUEST changes nothing, REFUND revokes.
@Suite(.enabled(if: LifecycleVectors.available, "SKIPPED: shared vectors not found at \(LifecycleVectors.directory.path)"))
struct RealAppleNotificationTests {
    static let bundleId = "com.loki-project.loki-messenger"
    static let original = "2000001024993299"
    static let catalogue = try! ProductCatalogue(json: Array(#"""
    {"products": {
      "com.getsession.org.pro_sub":          {"type": "autoRenewable", "entitlement": "pro", "subscriptionGroup": "pro", "level": 2},
      "com.getsession.org.pro_sub_3_months": {"type": "autoRenewable", "entitlement": "pro", "subscriptionGroup": "pro", "level": 1},
      "com.keysns.JR1200":                   {"type": "consumable", "entitlement": "keys"}
    }}
    """#.utf8))

    /// Verifies a vector as a user-less `serverNotification` of `bundleId` and runs it through fulfil.
    private func fulfil(_ file: String, bundleId: String = bundleId, stage: FulfilStage) async throws -> StageResult<FulfilOutput> {
        let verifier = AppStoreSubmissionVerifier(verifier: try SignedDataVerifier(
            configuration: SignedDataVerifierConfiguration(environment: .any)))
        let context = StageContext(now: Date())
        let submission = IngestedSubmission(submissionId: file, bundleId: bundleId, userId: "", kind: .serverNotification,
                                            payload: try LifecycleVectors.jws(file), submittedAt: context.now, ingestedAt: context.now)
        let transactions = try await verifier.verify(submission, context: context)
        let transaction = try #require(transactions.first, "\(file) carries a transaction")
        return try await stage.process(ReceiptVerified(submissionId: file, bundleId: bundleId, userId: "", kind: .serverNotification,
                                                       verifiedAt: context.now, transaction: transaction), context: context)
    }

    private func events(_ result: StageResult<FulfilOutput>) -> [EntitlementChanged] {
        guard case .emit(let outputs) = result else { return [] }
        return outputs.compactMap(\.event)
    }

    /// A ledger that already knows the purchase's first period and its owner (the app submitted it).
    private func knownPurchase() async throws -> KeyedStateStore<PurchaseState> {
        let ledger = KeyedStateStore<PurchaseState>(inMemoryCapacity: 10)
        let first = PurchaseState(
            originalTransactionId: Self.original, bundleId: Self.bundleId, userId: "session-user", entitlement: "pro",
            productId: "com.getsession.org.pro_sub", productType: .autoRenewable, status: .active, hasAccess: true,
            validUntil: Date(timeIntervalSince1970: 1_759_302_013), latestTransactionId: Self.original,
            periodStart: Date(timeIntervalSince1970: 1_759_301_833), expiresDate: Date(timeIntervalSince1970: 1_759_302_013),
            environment: "Sandbox", signedDate: Date(timeIntervalSince1970: 1_759_301_834), version: 1)
        try await ledger.update(Self.original, scope: nil) { _ in (first, ()) }
        return ledger
    }

    @Test func theSubscriptionFollowsApplesNotificationsInOrder() async throws {
        let stage = FulfilStage(catalogue: Self.catalogue, ledger: try await knownPurchase())

        let renewed = events(try await fulfil("jws/02-sandbox-notification-DID_RENEW-2025.jws", stage: stage))
        #expect(renewed.map(\.change) == [.renewal] && renewed.map(\.action) == [.renew])
        #expect(renewed.first?.transactionId == "2000001024998954" && renewed.first?.userId == "session-user")
        #expect(renewed.first?.validUntil == Date(timeIntervalSince1970: 1_759_302_732) && renewed.first?.hasAccess == true)
        #expect(renewed.first?.notificationType == "DID_RENEW" && renewed.first?.environment == "Sandbox")

        let resubscribed = events(try await fulfil("jws/03-sandbox-notification-SUBSCRIBED-RESUBSCRIBE.jws", stage: stage))
        #expect(resubscribed.count == 1 && resubscribed.first?.hasAccess == true && resubscribed.first?.action == .renew)

        let expired = events(try await fulfil("jws/04-sandbox-notification-EXPIRED-VOLUNTARY.jws", stage: stage))
        #expect(expired.map(\.change) == [.expiration] && expired.first?.hasAccess == false)
        #expect(expired.first?.expirationReason == "voluntary" && expired.first?.status == .expired)

        guard case .done(let outcome, _) = try await fulfil("jws/05-sandbox-notification-CONSUMPTION_REQUEST.jws", stage: stage) else {
            Issue.record("CONSUMPTION_REQUEST must change nothing")
            return
        }
        #expect(outcome == .notificationInformational)

        let refunded = events(try await fulfil("jws/01-sandbox-notification-REFUND.jws", stage: stage))
        #expect(refunded.map(\.change) == [.revocation] && refunded.map(\.action) == [.revoke])
        #expect(refunded.first?.hasAccess == false && refunded.first?.status == .revoked && refunded.first?.revocationReason == 0)
        #expect(refunded.first?.validUntil == Date(timeIntervalSince1970: 1_760_591_999))
    }

    @Test func theProductionConsumptionRequestChangesNothing() async throws {
        let stage = FulfilStage(catalogue: Self.catalogue, ledger: KeyedStateStore(inMemoryCapacity: 10))
        guard case .done(let outcome, _) = try await fulfil("jws/09-production-notification-CONSUMPTION_REQUEST.jws",
                                                              bundleId: "com.jrjj.keysns", stage: stage) else {
            Issue.record("CONSUMPTION_REQUEST must change nothing")
            return
        }
        #expect(outcome == .notificationInformational)
    }

    @Test func aNotificationForAPurchaseWithoutOwnerWaitsForIt() async throws {
        let stage = FulfilStage(catalogue: Self.catalogue, ledger: KeyedStateStore(inMemoryCapacity: 10))
        await #expect(throws: StageError.self) {
            _ = try await fulfil("jws/02-sandbox-notification-DID_RENEW-2025.jws", stage: stage)
        }
        do {
            _ = try await fulfil("jws/02-sandbox-notification-DID_RENEW-2025.jws", stage: stage)
        } catch let error as StageError {
            #expect(error.reason == .ownerUnknown && error.disposition == .transient)
        }
    }
}

/// `<package>/../shared/vectors`, resolved from this file.
enum LifecycleVectors {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("shared/vectors/apple")

    static var available: Bool { FileManager.default.fileExists(atPath: directory.appendingPathComponent("jws").path) }

    static func jws(_ relativePath: String) throws -> String {
        String(decoding: try Data(contentsOf: directory.appendingPathComponent(relativePath)), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
