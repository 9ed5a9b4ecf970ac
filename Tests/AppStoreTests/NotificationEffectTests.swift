import Foundation
import Testing
@_spi(Testing) @testable import AppStore

/// ``NotificationEffect``'s table: every documented type/subtype pair, every type with every
/// subtype (known and unknown), and the raw values kept for unknown types.
@Suite struct NotificationEffectTests {
    static let graceEnd = Date(timeIntervalSince1970: 1_740_000_000)

    static var renewal: JWSRenewalInfoDecodedPayload {
        var info = JWSRenewalInfoDecodedPayload(rawEnvironment: "Sandbox")
        info.autoRenewProductId = "com.example.app.pro.yearly"
        info.rawAutoRenewStatus = 0
        info.gracePeriodExpiresDate = graceEnd
        return info
    }

    private func effect(_ type: String, _ subtype: String? = nil,
                        renewal: JWSRenewalInfoDecodedPayload? = NotificationEffectTests.renewal) -> NotificationEffect {
        NotificationEffect.effect(rawNotificationType: type, rawSubtype: subtype, renewalInfo: renewal)
    }

    private func informational(_ type: String, _ subtype: String? = nil) -> NotificationEffect {
        .informational(notificationType: type, subtype: subtype)
    }

    /// The documented table (``NotificationEffect``), written out independently of the implementation.
    @Test func documentedTable() {
        let preference = NotificationEffect.renewalPreferenceChanged(autoRenewProductId: "com.example.app.pro.yearly")
        let rows: [(String, String?, NotificationEffect)] = [
            ("SUBSCRIBED", "INITIAL_BUY", .transactionUpdate),
            ("SUBSCRIBED", "RESUBSCRIBE", .transactionUpdate),
            ("DID_RENEW", nil, .transactionUpdate),
            ("DID_RENEW", "BILLING_RECOVERY", .transactionUpdate),
            ("OFFER_REDEEMED", nil, .transactionUpdate),
            ("OFFER_REDEEMED", "INITIAL_BUY", .transactionUpdate),
            ("OFFER_REDEEMED", "RESUBSCRIBE", .transactionUpdate),
            ("OFFER_REDEEMED", "UPGRADE", .transactionUpdate),
            ("OFFER_REDEEMED", "DOWNGRADE", preference),
            ("DID_CHANGE_RENEWAL_PREF", "UPGRADE", .transactionUpdate),
            ("DID_CHANGE_RENEWAL_PREF", "DOWNGRADE", preference),
            ("DID_CHANGE_RENEWAL_PREF", nil, preference),
            ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_ENABLED", .renewalStatusChanged(autoRenew: true)),
            ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", .renewalStatusChanged(autoRenew: false)),
            ("DID_CHANGE_RENEWAL_STATUS", nil, .renewalStatusChanged(autoRenew: false)),      // from autoRenewStatus 0
            ("DID_FAIL_TO_RENEW", "GRACE_PERIOD", .gracePeriod(until: Self.graceEnd)),
            ("DID_FAIL_TO_RENEW", nil, .billingRetry),
            ("EXPIRED", "VOLUNTARY", .expire),
            ("EXPIRED", "BILLING_RETRY", .expire),
            ("EXPIRED", "PRICE_INCREASE", .expire),
            ("EXPIRED", "PRODUCT_NOT_FOR_SALE", .expire),
            ("EXPIRED", nil, .expire),
            ("GRACE_PERIOD_EXPIRED", nil, .expire),
            ("REFUND", nil, .revoke),
            ("REVOKE", nil, .revoke),
            ("REFUND_REVERSED", nil, .reinstate),
            ("RENEWAL_EXTENDED", nil, .transactionUpdate),
            ("ONE_TIME_CHARGE", nil, .transactionUpdate),
            ("REFUND_DECLINED", nil, informational("REFUND_DECLINED")),
            ("CONSUMPTION_REQUEST", nil, informational("CONSUMPTION_REQUEST")),
            ("PRICE_INCREASE", "PENDING", informational("PRICE_INCREASE", "PENDING")),
            ("PRICE_INCREASE", "ACCEPTED", informational("PRICE_INCREASE", "ACCEPTED")),
            ("RENEWAL_EXTENSION", "SUMMARY", informational("RENEWAL_EXTENSION", "SUMMARY")),
            ("RENEWAL_EXTENSION", "FAILURE", informational("RENEWAL_EXTENSION", "FAILURE")),
            ("TEST", nil, informational("TEST")),
            ("EXTERNAL_PURCHASE_TOKEN", "UNREPORTED", informational("EXTERNAL_PURCHASE_TOKEN", "UNREPORTED")),
            ("EXTERNAL_PURCHASE_TOKEN", "ACTIVE_TOKEN_REMINDER", informational("EXTERNAL_PURCHASE_TOKEN", "ACTIVE_TOKEN_REMINDER")),
            ("EXTERNAL_PURCHASE_TOKEN", "CREATED", informational("EXTERNAL_PURCHASE_TOKEN", "CREATED")),
            ("METADATA_UPDATE", nil, informational("METADATA_UPDATE")),
            ("MIGRATION", nil, informational("MIGRATION")),
            ("PRICE_CHANGE", nil, informational("PRICE_CHANGE")),
            ("RESCIND_CONSENT", nil, informational("RESCIND_CONSENT")),
        ]
        for (type, subtype, expected) in rows {
            #expect(effect(type, subtype) == expected, "\(type)/\(subtype ?? "-")")
        }
        // Every documented type and subtype appears in the table.
        #expect(Set(rows.map(\.0)) == Set(NotificationTypeV2.allCases.map(\.rawValue)))
        let tableSubtypes = Set(rows.compactMap(\.1))
        #expect(Set(Subtype.allCases.map(\.rawValue)).subtracting(tableSubtypes).isEmpty)
    }

    /// Every type with no subtype, every known subtype and an unknown one maps, and the effect
    /// class of a type never depends on an unknown subtype beyond the type's default row.
    @Test(arguments: NotificationTypeV2.allCases)
    func everyTypeAndSubtypeMaps(_ type: NotificationTypeV2) {
        let base = effect(type.rawValue)
        for subtype in Subtype.allCases.map(\.rawValue) + ["NOT_A_SUBTYPE"] {
            let mapped = effect(type.rawValue, subtype)
            if case .informational(let rawType, let rawSubtype) = mapped {
                #expect(rawType == type.rawValue)
                #expect(rawSubtype == subtype)
            }
        }
        let unknown = effect(type.rawValue, "NOT_A_SUBTYPE")
        if case .informational = base {
            #expect(unknown == informational(type.rawValue, "NOT_A_SUBTYPE"))
        } else {
            #expect(unknown == base)
        }
    }

    @Test func unknownTypesAreInformationalWithRawValues() {
        #expect(effect("SUBSCRIPTION_TELEPORTED", "TO_MARS") == informational("SUBSCRIPTION_TELEPORTED", "TO_MARS"))
        #expect(effect("", nil) == informational(""))
        #expect(effect("refund") == informational("refund"))           // case-sensitive, like Apple's strings
        #expect(effect("SUBSCRIPTION_TELEPORTED").concernsSubscription == false)
    }

    @Test func renewalInfoRefinesEffects() {
        #expect(effect("DID_FAIL_TO_RENEW", "GRACE_PERIOD", renewal: nil) == .gracePeriod(until: nil))
        #expect(effect("DID_CHANGE_RENEWAL_STATUS", renewal: nil) == informational("DID_CHANGE_RENEWAL_STATUS"))
        var on = Self.renewal
        on.rawAutoRenewStatus = 1
        #expect(effect("DID_CHANGE_RENEWAL_STATUS", renewal: on) == .renewalStatusChanged(autoRenew: true))
        #expect(effect("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", renewal: on) == .renewalStatusChanged(autoRenew: false))
        #expect(effect("DID_CHANGE_RENEWAL_PREF", "DOWNGRADE", renewal: nil) == .renewalPreferenceChanged(autoRenewProductId: nil))
    }

    @Test func requirements() {
        for needing: NotificationEffect in [.transactionUpdate, .revoke, .reinstate] {
            #expect(needing.needsTransaction && needing.concernsSubscription)
        }
        for subscriptionOnly: NotificationEffect in [.expire, .gracePeriod(until: nil), .billingRetry,
                                                     .renewalPreferenceChanged(autoRenewProductId: nil),
                                                     .renewalStatusChanged(autoRenew: true)] {
            #expect(!subscriptionOnly.needsTransaction && subscriptionOnly.concernsSubscription)
        }
        #expect(!informational("TEST").needsTransaction && !informational("TEST").concernsSubscription)
    }

    @Test func initUsesTheNotificationsNestedRenewalInfo() {
        var notification = ResponseBodyV2DecodedPayload(rawNotificationType: "DID_FAIL_TO_RENEW", notificationUUID: "u")
        notification.rawSubtype = "GRACE_PERIOD"
        #expect(NotificationEffect(notification) == .gracePeriod(until: nil))
        var data = NotificationData()
        data.renewalInfo = Self.renewal
        notification.data = data
        #expect(NotificationEffect(notification) == .gracePeriod(until: Self.graceEnd))
    }
}
