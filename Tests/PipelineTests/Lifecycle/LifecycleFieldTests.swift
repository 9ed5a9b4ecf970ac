import Foundation
import Testing
@testable import Pipeline

/// The state fields a backend reads off `entitlement-changed/v2` besides access: expiration
/// reason and auto-renew, the pending product, ownership, environment, the causing notification.
@Suite struct LifecycleFieldTests {
    private func run(_ name: String) async throws -> LifecycleHarness.Run {
        let scenario = try #require(LifecycleScenarios.all.first { $0.name.hasPrefix(name) })
        return try await LifecycleHarness(policy: scenario.policy).run(scenario.inputs())
    }

    @Test func voluntaryExpiryCarriesAppleIntentAndAutoRenewOff() async throws {
        let events = try await run("auto-renewable: auto-renew off").events
        let off = try #require(events.first { $0.change == .autoRenewChange })
        #expect(off.autoRenew == false && off.notificationType == "DID_CHANGE_RENEWAL_STATUS"
            && off.notificationSubtype == "AUTO_RENEW_DISABLED")
        let expired = try #require(events.last)
        #expect(expired.change == .expiration && expired.expirationReason == "voluntary" && expired.notificationSubtype == "VOLUNTARY")
        #expect(events.first?.expirationReason == nil && events.first?.notificationType == nil)
    }

    @Test func pendingDowngradeIsStateUntilTheRenewal() async throws {
        let events = try await run("downgrade").events
        let pending = try #require(events.first { $0.change == .pendingProductChange })
        #expect(pending.pendingProductId == LifecycleScenarios.monthly && pending.productId == LifecycleScenarios.vip)
        let changed = try #require(events.last)
        #expect(changed.change == .productChange && changed.productId == LifecycleScenarios.monthly && changed.pendingProductId == nil)
    }

    @Test func familySharedPurchasesAreMarkedShared() async throws {
        let events = try await run("Family Sharing").events
        #expect(events.count == 2 && events.allSatisfy { $0.ownershipType == "FAMILY_SHARED" && $0.purchase.isFamilyShared })
        #expect(events.last?.revocationReason == 0 && events.last?.notificationType == "REVOKE")
    }

    @Test func sandboxTagWithholdsAccessAndSaysWhy() async throws {
        let event = try #require(try await run("sandbox tag").events.first)
        #expect(event.environment == "Sandbox" && event.purchase.accessWithheld == "sandbox" && !event.hasAccess)
    }

    @Test func eachEventCarriesTheWholeResultingPurchase() async throws {
        let events = try await run("auto-renewable: grace period").events
        #expect(events.map(\.purchase.version) == [1, 2, 3])
        #expect(events[1].purchase.gracePeriodExpiresDate == AppleShapes.day(36) && events[1].purchase.status == .gracePeriod)
        #expect(events.allSatisfy { $0.eventId == EntitlementChanged.eventId(originalTransactionId: "1001",
                                                                                version: $0.purchase.version, index: 0) })
    }
}
