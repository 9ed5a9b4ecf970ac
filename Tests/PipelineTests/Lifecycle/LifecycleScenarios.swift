import AppStore
import Foundation
@testable import Pipeline

/// The lifecycle table (see `docs/entitlements.md`). Days count from 2026-06-01T00:00:00Z.
enum LifecycleScenarios {
    typealias H = LifecycleHarness
    typealias T = AppleShapes.Transaction
    typealias R = AppleShapes.Renewal
    typealias S = LifecycleScenario

    static func d(_ days: Double) -> Date { AppleShapes.day(days) }
    static func utc(_ text: String) -> Date { ContractCoding.date(from: text)! }

    static let monthly = "com.demo.monthly.sub", vip = "com.demo.vip.monthly", pro = "com.demo.unlock.pro"
    static let coins = "com.demo.coins.100", oneMonth = "com.demo.onetime.monthly"

    /// An auto-renewable period.
    static func sub(_ id: String, _ original: String, _ product: String = monthly, from: Double, to: Double, signed: Double,
                    revoked: Double? = nil, upgraded: Bool = false, ownership: String = "PURCHASED", token: String? = nil,
                    environment: String = "Production") -> T {
        T(id: id, original: original, product: product, type: .autoRenewable, purchase: d(from), expires: d(to), signed: d(signed),
          revoked: revoked.map(d), upgraded: upgraded, ownership: ownership, token: token, environment: environment)
    }

    /// A one-time purchase (non-consumable, consumable, non-renewing).
    static func once(_ id: String, _ original: String, _ product: String, _ type: ProductType, at: Double, signed: Double,
                     revoked: Double? = nil, quantity: Int = 1) -> T {
        T(id: id, original: original, product: product, type: type, purchase: d(at), expires: nil, signed: d(signed),
          revoked: revoked.map(d), quantity: quantity)
    }

    static func renewal(_ product: String = monthly, next: String? = nil, autoRenew: Bool = true, intent: Int? = nil,
                        grace: Double? = nil, retry: Bool = false, signed: Double) -> R {
        R(original: "", product: product, autoRenewProduct: next, autoRenew: autoRenew, expirationIntent: intent,
          gracePeriodExpires: grace.map(d), billingRetry: retry, signed: d(signed))
    }

    static let all: [LifecycleScenario] = subscriptions + refunds + productChanges + oneTime + ownership + policies

    static let subscriptions: [LifecycleScenario] = [
        S(name: "auto-renewable: purchase, renewal", inputs: {
            [H.transaction("buy", user: "u1", sub("1001", "1001", from: 0, to: 30, signed: 0)),
             H.transaction("renew", user: "u1", sub("1002", "1001", from: 30, to: 60, signed: 30))]
        }, events: [S.event(.purchase, "u1", "premium", .active, access: true, until: d(30)),
                    S.event(.renewal, "u1", "premium", .active, access: true, until: d(60))],
          owners: [S.owner("u1", "premium", access: true, until: d(60))],
          verdicts: ["buy": ["grant"], "renew": ["renew"]]),
        S(name: "auto-renewable: grace period keeps access, billing recovery renews", inputs: {
            [H.transaction("buy", user: "u1", sub("1001", "1001", from: 0, to: 30, signed: 0)),
             H.notification("grace", type: "DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD", signed: d(30),
                            transaction: sub("1001", "1001", from: 0, to: 30, signed: 30),
                            renewal: renewal(grace: 36, retry: true, signed: 30)),
             H.notification("recover", type: "DID_RENEW", subtype: "BILLING_RECOVERY", signed: d(33),
                            transaction: sub("1002", "1001", from: 33, to: 63, signed: 33), renewal: renewal(signed: 33))]
        }, events: [S.event(.purchase, "u1", "premium", .active, access: true, until: d(30)),
                    S.event(.gracePeriod, "u1", "premium", .gracePeriod, access: true, until: d(36)),
                    S.event(.recovery, "u1", "premium", .active, access: true, until: d(63))],
          owners: [S.owner("u1", "premium", access: true, until: d(63))],
          verdicts: ["grace": ["update"], "recover": ["renew"]]),
        S(name: "auto-renewable: billing retry without access, then expired", inputs: {
            [H.transaction("buy", user: "u1", sub("1001", "1001", from: 0, to: 30, signed: 0)),
             H.notification("retry", type: "DID_FAIL_TO_RENEW", signed: d(30),
                            transaction: sub("1001", "1001", from: 0, to: 30, signed: 30), renewal: renewal(retry: true, signed: 30)),
             H.notification("expired", type: "EXPIRED", subtype: "BILLING_RETRY", signed: d(45),
                            transaction: sub("1001", "1001", from: 0, to: 30, signed: 45),
                            renewal: renewal(autoRenew: false, intent: 2, signed: 45))]
        }, events: [S.event(.purchase, "u1", "premium", .active, access: true, until: d(30)),
                    S.event(.billingRetry, "u1", "premium", .billingRetry, access: false, until: d(30)),
                    S.event(.expiration, "u1", "premium", .expired, access: false, until: d(30))],
          owners: [S.owner("u1", "premium", access: false, until: nil)],
          verdicts: ["retry": ["expire"], "expired": ["expire"]]),
        S(name: "auto-renewable: billing retry keeps access when configured",
          policy: FulfilmentPolicy(billingRetryAccess: true), inputs: {
            [H.transaction("buy", user: "u1", sub("1001", "1001", from: 0, to: 30, signed: 0)),
             H.notification("retry", type: "DID_FAIL_TO_RENEW", signed: d(30),
                            transaction: sub("1001", "1001", from: 0, to: 30, signed: 30), renewal: renewal(retry: true, signed: 30))]
        }, events: [S.event(.purchase, "u1", "premium", .active, access: true, until: d(30)),
                    S.event(.billingRetry, "u1", "premium", .billingRetry, access: true, until: d(30))],
          owners: [S.owner("u1", "premium", access: true, until: d(30))]),
        S(name: "auto-renewable: auto-renew off, voluntary expiry with Apple's intent", inputs: {
            [H.transaction("buy", user: "u1", sub("1001", "1001", from: 0, to: 30, signed: 0)),
             H.notification("off", type: "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", signed: d(10),
                            transaction: sub("1001", "1001", from: 0, to: 30, signed: 10),
                            renewal: renewal(autoRenew: false, signed: 10)),
             H.notification("expired", type: "EXPIRED", subtype: "VOLUNTARY", signed: d(30),
                            transaction: sub("1001", "1001", from: 0, to: 30, signed: 30),
                            renewal: renewal(autoRenew: false, intent: 1, signed: 30))]
        }, events: [S.event(.purchase, "u1", "premium", .active, access: true, until: d(30)),
                    S.event(.autoRenewChange, "u1", "premium", .active, access: true, until: d(30)),
                    S.event(.expiration, "u1", "premium", .expired, access: false, until: d(30))],
          owners: [S.owner("u1", "premium", access: false, until: nil)],
          verdicts: ["off": ["update"], "expired": ["expire"]]),
        S(name: "auto-renewable: RENEWAL_EXTENDED keeps the transaction id and moves the end", inputs: {
            [H.transaction("buy", user: "u1", sub("1001", "1001", from: 0, to: 30, signed: 0)),
             H.notification("extended", type: "RENEWAL_EXTENDED", signed: d(20),
                            transaction: sub("1001", "1001", from: 0, to: 37, signed: 20))]
        }, events: [S.event(.purchase, "u1", "premium", .active, access: true, until: d(30)),
                    S.event(.extension, "u1", "premium", .active, access: true, until: d(37))],
          owners: [S.owner("u1", "premium", access: true, until: d(37))],
          verdicts: ["extended": ["renew"]]),
        S(name: "auto-renewable: first seen in grace period, then already expired", inputs: {
            [H.notification("grace", user: "u1", type: "DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD", signed: d(30),
                            transaction: sub("1101", "1101", from: 0, to: 30, signed: 30),
                            renewal: renewal(grace: 36, retry: true, signed: 30)),
             H.transaction("old", user: "u2", sub("1201", "1201", from: 0, to: 30, signed: 40))]
        }, events: [S.event(.gracePeriod, "u1", "premium", .gracePeriod, access: true, until: d(36)),
                    S.event(.expiration, "u2", "premium", .expired, access: false, until: d(30))],
          owners: [S.owner("u1", "premium", access: true, until: d(36)), S.owner("u2", "premium", access: false, until: nil)],
          verdicts: ["grace": ["update"], "old": ["expire"]]),
        S(name: "auto-renewable: resubscribe after expiry", inputs: {
            [H.transaction("buy", user: "u1", sub("1001", "1001", from: 0, to: 30, signed: 0)),
             H.notification("expired", type: "EXPIRED", subtype: "VOLUNTARY", signed: d(31),
                            transaction: sub("1001", "1001", from: 0, to: 30, signed: 31),
                            renewal: renewal(autoRenew: false, intent: 1, signed: 31)),
             H.notification("back", type: "SUBSCRIBED", subtype: "RESUBSCRIBE", signed: d(50),
                            transaction: sub("1003", "1001", from: 50, to: 80, signed: 50), renewal: renewal(signed: 50))]
        }, events: [S.event(.purchase, "u1", "premium", .active, access: true, until: d(30)),
                    S.event(.expiration, "u1", "premium", .expired, access: false, until: d(30)),
                    S.event(.resubscribe, "u1", "premium", .active, access: true, until: d(80))],
          owners: [S.owner("u1", "premium", access: true, until: d(80))]),
    ]

    static let refunds: [LifecycleScenario] = [
        S(name: "refund of the current period revokes; REFUND_REVERSED restores with its own event", inputs: {
            [H.transaction("buy", user: "u1", sub("1001", "1001", from: 0, to: 30, signed: 0)),
             H.notification("refund", type: "REFUND", signed: d(5), transaction: sub("1001", "1001", from: 0, to: 30, signed: 5, revoked: 5)),
             H.notification("reversed", type: "REFUND_REVERSED", signed: d(8), transaction: sub("1001", "1001", from: 0, to: 30, signed: 8))]
        }, events: [S.event(.purchase, "u1", "premium", .active, access: true, until: d(30)),
                    S.event(.revocation, "u1", "premium", .revoked, access: false, until: d(5)),
                    S.event(.reinstatement, "u1", "premium", .active, access: true, until: d(30))],
          owners: [S.owner("u1", "premium", access: true, until: d(30))],
          verdicts: ["refund": ["revoke"], "reversed": ["grant"]]),
        S(name: "refund of a past period after the renewal keeps the paid period's access", inputs: {
            [H.transaction("buy", user: "u1", sub("1001", "1001", from: 0, to: 30, signed: 0)),
             H.transaction("renew", user: "u1", sub("1002", "1001", from: 30, to: 60, signed: 30)),
             H.notification("refund", type: "REFUND", signed: d(35), transaction: sub("1001", "1001", from: 0, to: 30, signed: 35, revoked: 35))]
        }, events: [S.event(.purchase, "u1", "premium", .active, access: true, until: d(30)),
                    S.event(.renewal, "u1", "premium", .active, access: true, until: d(60)),
                    S.event(.pastPeriodRefund, "u1", "premium", .active, access: true, until: d(60))],
          owners: [S.owner("u1", "premium", access: true, until: d(60))],
          verdicts: ["refund": ["update"]]),
        S(name: "consumable: granted once, refund claws the units back", inputs: {
            [H.transaction("buy", user: "u1", once("2001", "2001", coins, .consumable, at: 0, signed: 0, quantity: 2)),
             H.notification("refund", type: "REFUND", signed: d(3),
                            transaction: once("2001", "2001", coins, .consumable, at: 0, signed: 3, revoked: 3, quantity: 2))]
        }, events: [S.event(.purchase, "u1", "coins", .active, access: true, until: nil, quantity: 200),
                    S.event(.clawback, "u1", "coins", .revoked, access: false, until: d(3), quantity: 200)],
          owners: [S.owner("u1", "coins", access: false, until: nil, units: 0)],
          verdicts: ["refund": ["revoke"]]),
        S(name: "non-consumable: restore grants nothing twice; refund and reversal", inputs: {
            [H.transaction("buy", user: "u1", once("3001", "3001", pro, .nonConsumable, at: 0, signed: 0)),
             H.transaction("restore", user: "u1", once("3002", "3001", pro, .nonConsumable, at: 0, signed: 5)),
             H.notification("refund", type: "REFUND", signed: d(10),
                            transaction: once("3001", "3001", pro, .nonConsumable, at: 0, signed: 10, revoked: 10)),
             H.notification("reversed", type: "REFUND_REVERSED", signed: d(12),
                            transaction: once("3001", "3001", pro, .nonConsumable, at: 0, signed: 12))]
        }, events: [S.event(.purchase, "u1", "pro", .active, access: true, until: nil),
                    S.event(.revocation, "u1", "pro", .revoked, access: false, until: d(10)),
                    S.event(.reinstatement, "u1", "pro", .active, access: true, until: nil)],
          owners: [S.owner("u1", "pro", access: true, until: nil)],
          verdicts: ["buy": ["grant"], "restore": ["duplicate-suppressed"]]),
    ]

    static let productChanges: [LifecycleScenario] = [
        S(name: "upgrade: the old product's access ends now, the new one starts", inputs: {
            [H.transaction("buy", user: "u1", sub("1001", "1001", from: 0, to: 30, signed: 0)),
             H.notification("upgrade", type: "DID_CHANGE_RENEWAL_PREF", subtype: "UPGRADE", signed: d(10),
                            transaction: sub("1002", "1001", vip, from: 10, to: 40, signed: 10), renewal: renewal(vip, signed: 10)),
             H.transaction("old", user: "u1", sub("1001", "1001", from: 0, to: 30, signed: 11, upgraded: true))]
        }, events: [S.event(.purchase, "u1", "premium", .active, access: true, until: d(30)),
                    S.event(.productReplaced, "u1", "premium", .expired, access: false, until: d(10)),
                    S.event(.productChange, "u1", "vip", .active, access: true, until: d(40))],
          owners: [S.owner("u1", "premium", access: false, until: nil), S.owner("u1", "vip", access: true, until: d(40))],
          verdicts: ["upgrade": ["expire", "renew"], "old": ["stale-suppressed"]]),
        S(name: "downgrade: pending product carried as state, takes effect at the renewal", inputs: {
            [H.transaction("buy", user: "u1", sub("1001", "1001", vip, from: 0, to: 30, signed: 0)),
             H.notification("downgrade", type: "DID_CHANGE_RENEWAL_PREF", subtype: "DOWNGRADE", signed: d(10),
                            transaction: sub("1001", "1001", vip, from: 0, to: 30, signed: 10),
                            renewal: renewal(vip, next: monthly, signed: 10)),
             H.notification("renew", type: "DID_RENEW", signed: d(30),
                            transaction: sub("1002", "1001", from: 30, to: 60, signed: 30), renewal: renewal(signed: 30))]
        }, events: [S.event(.purchase, "u1", "vip", .active, access: true, until: d(30)),
                    S.event(.pendingProductChange, "u1", "vip", .active, access: true, until: d(30)),
                    S.event(.productReplaced, "u1", "vip", .expired, access: false, until: d(30)),
                    S.event(.productChange, "u1", "premium", .active, access: true, until: d(60))],
          owners: [S.owner("u1", "vip", access: false, until: nil), S.owner("u1", "premium", access: true, until: d(60))],
          verdicts: ["downgrade": ["update"]]),
    ]

    static let oneTime: [LifecycleScenario] = [
        S(name: "non-renewing: a second month bought before the end stacks", inputs: {
            [H.transaction("first", user: "u1", once("4001", "4001", oneMonth, .nonRenewing, at: 0, signed: 0)),
             H.transaction("second", user: "u1", once("4002", "4002", oneMonth, .nonRenewing, at: 10, signed: 10))]
        }, events: [S.event(.purchase, "u1", "premium", .active, access: true, until: utc("2026-07-01T00:00:00Z")),
                    S.event(.purchase, "u1", "premium", .active, access: true, until: utc("2026-07-11T00:00:00Z"))],
          owners: [S.owner("u1", "premium", access: true, until: utc("2026-08-01T00:00:00Z"))]),
        S(name: "Family Sharing: the member is granted, marked shared, and revoked with the family", inputs: {
            [H.transaction("shared", user: "u2", sub("5001", "5001", from: 0, to: 30, signed: 0, ownership: "FAMILY_SHARED")),
             H.notification("revoke", type: "REVOKE", signed: d(6),
                            transaction: sub("5001", "5001", from: 0, to: 30, signed: 6, revoked: 6, ownership: "FAMILY_SHARED"))]
        }, events: [S.event(.purchase, "u2", "premium", .active, access: true, until: d(30)),
                    S.event(.revocation, "u2", "premium", .revoked, access: false, until: d(6))],
          owners: [S.owner("u2", "premium", access: false, until: nil)]),
        S(name: "informational notifications change nothing", inputs: {
            [H.transaction("buy", user: "u1", sub("1001", "1001", from: 0, to: 30, signed: 0)),
             H.notification("consumption", type: "CONSUMPTION_REQUEST", subtype: nil, signed: d(40),
                            transaction: sub("1001", "1001", from: 0, to: 30, signed: 40)),
             H.notification("declined", type: "REFUND_DECLINED", signed: d(41), transaction: sub("1001", "1001", from: 0, to: 30, signed: 41)),
             H.notification("future", type: "SOMETHING_APPLE_ADDS_LATER", signed: d(42),
                            transaction: sub("1001", "1001", from: 0, to: 30, signed: 42)),
             H.notification("test", type: "TEST", signed: d(43), transaction: nil)]
        }, events: [S.event(.purchase, "u1", "premium", .active, access: true, until: d(30))],
          owners: [S.owner("u1", "premium", access: true, until: d(30))],
          verdicts: ["consumption": ["notification-informational"], "declined": ["notification-informational"],
                     "future": ["notification-informational"], "test": ["no-transactions"]]),
    ]

    static let ownership: [LifecycleScenario] = [
        S(name: "notifications without a user apply to the recorded owner, even when they arrive first", inputs: {
            [H.notification("initial", type: "SUBSCRIBED", subtype: "INITIAL_BUY", signed: d(0),
                            transaction: sub("7001", "7001", from: 0, to: 30, signed: 0), renewal: renewal(signed: 0)),
             H.transaction("app", user: "u1", sub("7001", "7001", from: 0, to: 30, signed: 0)),
             H.notification("renew", type: "DID_RENEW", signed: d(30), transaction: sub("7002", "7001", from: 30, to: 60, signed: 30),
                            renewal: renewal(signed: 30))]
        }, events: [S.event(.purchase, "u1", "premium", .active, access: true, until: d(30)),
                    S.event(.renewal, "u1", "premium", .active, access: true, until: d(60))],
          owners: [S.owner("u1", "premium", access: true, until: d(60))],
          verdicts: ["initial": ["stale-suppressed"], "app": ["grant"], "renew": ["renew"]]),
        S(name: "keep: a second user's claim is rejected, the purchase stays", inputs: {
            [H.transaction("buy", user: "u1", once("6001", "6001", pro, .nonConsumable, at: 0, signed: 0)),
             H.transaction("claim", user: "u2", once("6001", "6001", pro, .nonConsumable, at: 0, signed: 0))]
        }, events: [S.event(.purchase, "u1", "pro", .active, access: true, until: nil)],
          owners: [S.owner("u1", "pro", access: true, until: nil), S.owner("u2", "pro", access: false, until: nil)],
          verdicts: ["claim": ["rejected:purchase-owned-by-another-user"]], reorderable: false),
        S(name: "keep: news another user submits still reaches the owner", inputs: {
            [H.transaction("buy", user: "u1", sub("1001", "1001", from: 0, to: 30, signed: 0)),
             H.transaction("renew", user: "u2", sub("1002", "1001", from: 30, to: 60, signed: 30))]
        }, events: [S.event(.purchase, "u1", "premium", .active, access: true, until: d(30)),
                    S.event(.renewal, "u1", "premium", .active, access: true, until: d(60))],
          owners: [S.owner("u1", "premium", access: true, until: d(60)), S.owner("u2", "premium", access: false, until: nil)],
          reorderable: false),
        S(name: "transfer: the previous owner is revoked, the new one granted; an older copy does not move it back",
          policy: FulfilmentPolicy(transfer: .transfer), inputs: {
            [H.transaction("buy", user: "u1", once("6001", "6001", pro, .nonConsumable, at: 0, signed: 0)),
             H.transaction("claim", user: "u2", once("6001", "6001", pro, .nonConsumable, at: 0, signed: 5)),
             H.transaction("old-copy", user: "u1", once("6001", "6001", pro, .nonConsumable, at: 0, signed: 0))]
        }, events: [S.event(.purchase, "u1", "pro", .active, access: true, until: nil),
                    S.event(.transferOut, "u1", "pro", .revoked, access: false, until: d(5)),
                    S.event(.transferIn, "u2", "pro", .active, access: true, until: nil)],
          owners: [S.owner("u1", "pro", access: false, until: nil), S.owner("u2", "pro", access: true, until: nil)],
          verdicts: ["claim": ["revoke", "grant"], "old-copy": ["duplicate-suppressed"]], reorderable: false),
    ]

    static let tokenUser = "8d3a2f1c-0000-4000-8000-000000000001"

    static let policies: [LifecycleScenario] = [
        S(name: "appAccountToken names the owner of a notification; a mismatching user is rejected",
          policy: FulfilmentPolicy(appAccountToken: .userIdIsToken), inputs: {
            [H.notification("initial", type: "SUBSCRIBED", subtype: "INITIAL_BUY", signed: d(0),
                            transaction: sub("8001", "8001", from: 0, to: 30, signed: 0, token: tokenUser)),
             H.transaction("intruder", user: "someone-else", sub("8001", "8001", from: 0, to: 30, signed: 0, token: tokenUser))]
        }, events: [S.event(.purchase, tokenUser, "premium", .active, access: true, until: d(30))],
          owners: [S.owner(tokenUser, "premium", access: true, until: d(30)),
                   S.owner("someone-else", "premium", access: false, until: nil)],
          verdicts: ["intruder": ["rejected:app-account-token-mismatch"]]),
        S(name: "sandbox grant (the default): App Review's purchase works on production", inputs: {
            [H.transaction("review", user: "u1", sub("9001", "9001", from: 0, to: 30, signed: 0, environment: "Sandbox"))]
        }, events: [S.event(.purchase, "u1", "premium", .active, access: true, until: d(30))],
          owners: [S.owner("u1", "premium", access: true, until: d(30))]),
        S(name: "sandbox tag: recorded without access", policy: FulfilmentPolicy(sandbox: .tag), inputs: {
            [H.transaction("review", user: "u1", sub("9001", "9001", from: 0, to: 30, signed: 0, environment: "Sandbox"))]
        }, events: [S.event(.purchase, "u1", "premium", .active, access: false, until: d(30))],
          owners: [S.owner("u1", "premium", access: false, until: nil)],
          verdicts: ["review": ["update"]]),
        S(name: "sandbox reject", policy: FulfilmentPolicy(sandbox: .reject), inputs: {
            [H.transaction("review", user: "u1", sub("9001", "9001", from: 0, to: 30, signed: 0, environment: "Sandbox"))]
        }, events: [], owners: [S.owner("u1", "premium", access: false, until: nil)],
          verdicts: ["review": ["rejected:sandbox-not-accepted"]]),
    ]
}
