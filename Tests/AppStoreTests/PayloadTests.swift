import Foundation
import Testing
@_spi(Testing) @testable import AppStore

/// Strict payload JSON, dates and required fields (all payloads are validly signed).
@Suite struct PayloadTests {
    private func code(_ overrides: [String: String?]) throws -> String {
        let harness = try Harness()
        return try harness.verifier().verifyAndDecodeTransaction(try harness.signTransaction(overrides)).code
    }

    private func code(payload: String) throws -> String {
        let harness = try Harness()
        return try harness.verifier().verifyAndDecodeTransaction(try harness.pki.signer.sign(payloadJSON: payload)).code
    }

    @Test func rejectsDuplicateMembers() throws {
        let json = Harness.transactionJSON()
        #expect(try code(payload: String(json.dropLast()) + ",\"bundleId\":\"com.example.app\"}") == "duplicate-json-member")
        #expect(try code(payload: String(json.dropLast()) + ",\"bundle\\u0049d\":\"com.attacker\"}") == "duplicate-json-member")
        #expect(try code(payload: String(json.dropLast()) + ",\"x\":{\"a\":1,\"a\":1}}") == "duplicate-json-member")
    }

    @Test func rejectsDeepNesting() throws {
        let deep = String(repeating: "[", count: 16) + String(repeating: "]", count: 16)
        #expect(try code(["extra": deep]) == "json-too-deep")
        let allowed = String(repeating: "[", count: 15) + String(repeating: "]", count: 15)
        #expect(try code(["extra": allowed]) == "valid")
    }

    @Test func rejectsPayloadThatIsNotAStrictJSONObject() throws {
        #expect(try code(payload: "[1,2]") == "invalid-json")
        #expect(try code(payload: "\"text\"") == "invalid-json")
        #expect(try code(payload: "{\"a\":1") == "invalid-json")
        #expect(try code(payload: Harness.transactionJSON() + " x") == "invalid-json")
        #expect(try code(payload: "\u{FEFF}" + Harness.transactionJSON()) == "invalid-json")
        let harness = try Harness()
        let invalidUTF8 = Array("{\"transactionId\":\"".utf8) + [0xC3, 0x28] + Array("\"}".utf8)
        #expect(try harness.verifier().verifyAndDecodeTransaction(try harness.pki.signer.sign(payload: invalidUTF8)).code == "invalid-json")
    }

    @Test(arguments: [
        "1735689600000.5", "1735689600000.0", "1.7356896E12", "\"1735689600000\"", "true", "[1735689600000]",
        "1735689600",            // seconds, not milliseconds: 1970
        "0", "-1", "946684799999", "4102444800001", "99999999999999999999",
    ])
    func rejectsInvalidSignedDate(_ value: String) throws {
        #expect(try code(["signedDate": value]) == "invalid-date", "\(value)")
    }

    @Test(arguments: ["purchaseDate", "originalPurchaseDate", "expiresDate", "revocationDate"])
    func rejectsNonIntegerDates(_ member: String) throws {
        #expect(try code([member: "1735689000000.25"]) == "invalid-date")
        #expect(try code([member: "\"2025-01-01T00:00:00Z\""]) == "invalid-date")
        #expect(try code([member: "253402300800000"]) == "invalid-date")
    }

    @Test(arguments: ["transactionId", "originalTransactionId", "bundleId", "productId", "purchaseDate", "type", "environment"])
    func rejectsMissingRequiredField(_ member: String) throws {
        #expect(try code([member: nil]) == "missing-field")
        #expect(try code([member: "null"]) == "missing-field")
    }

    @Test(arguments: [
        ("transactionId", "2000000000000002"), ("bundleId", "[\"com.example.app\"]"), ("type", "1"),
        ("environment", "{}"), ("quantity", "\"1\""), ("quantity", "4294967296"), ("quantity", "1.0"),
        ("price", "9.99"), ("isUpgraded", "\"true\""), ("isUpgraded", "1"), ("offerType", "\"1\""),
        ("revocationReason", "true"), ("appAccountToken", "7"), ("storefront", "false"),
    ])
    func rejectsWrongFieldTypes(_ member: String, _ value: String) throws {
        #expect(try code([member: value]) == "invalid-field", "\(member)=\(value)")
    }

    @Test func ignoresUnknownMembersAndUnknownEnumValues() throws {
        let harness = try Harness()
        let jws = try harness.signTransaction([
            "type": "\"Future Product Type\"", "transactionReason": "\"GIFT\"", "offerType": "9",
            "inAppOwnershipType": "\"CORPORATE\"", "revocationReason": "7", "appAccountToken": "\"not-a-uuid\"",
            "futureField": "{\"nested\":[1,2,{\"x\":null}]}", "offerDiscountType": "\"SOMETHING_NEW\"",
        ])
        let transaction = try harness.verifier().verifyAndDecodeTransaction(jws).get()
        #expect(transaction.type == nil && transaction.rawType == "Future Product Type")
        #expect(transaction.transactionReason == nil && transaction.rawTransactionReason == "GIFT")
        #expect(transaction.offerType == nil && transaction.rawOfferType == 9)
        #expect(transaction.inAppOwnershipType == nil && transaction.rawInAppOwnershipType == "CORPORATE")
        #expect(transaction.revocationReason == nil && transaction.rawRevocationReason == 7)
        #expect(transaction.appAccountToken == nil && transaction.rawAppAccountToken == "not-a-uuid")
        #expect(transaction.offerDiscountType == nil)
    }

    @Test func decodesEveryTransactionField() throws {
        let harness = try Harness()
        let jws = try harness.signTransaction([
            "revocationReason": "1", "revocationDate": "1735689500000", "isUpgraded": "true", "offerType": "2",
            "offerIdentifier": "\"spring\"", "offerDiscountType": "\"PAY_AS_YOU_GO\"", "offerPeriod": "\"P1M\"",
        ])
        let t = try harness.verifier().verifyAndDecodeTransaction(jws).get()
        #expect(t.transactionId == "2000000000000002")
        #expect(t.originalTransactionId == "2000000000000001")
        #expect(t.webOrderLineItemId == "2000000000000003")
        #expect(t.bundleId == "com.example.app")
        #expect(t.productId == "com.example.app.pro.monthly")
        #expect(t.subscriptionGroupIdentifier == "21000000")
        #expect(t.purchaseDate == Date(millisecondsSince1970: 1_735_689_000_000))
        #expect(t.originalPurchaseDate == Date(millisecondsSince1970: 1_735_600_000_000))
        #expect(t.expiresDate == Date(millisecondsSince1970: 1_738_367_400_000))
        #expect(t.quantity == 1)
        #expect(t.type == .autoRenewable)
        #expect(t.appAccountToken == UUID(uuidString: "7e3fb20b-4cdb-47cc-936d-99d65f608138"))
        #expect(t.inAppOwnershipType == .purchased)
        #expect(t.signedDate == TestClock.inside)
        #expect(t.revocationReason == .appIssue)
        #expect(t.revocationDate == Date(millisecondsSince1970: 1_735_689_500_000))
        #expect(t.isRevoked)
        #expect(t.isUpgraded == true)
        #expect(t.offerType == .promotionalOffer)
        #expect(t.offerIdentifier == "spring")
        #expect(t.environment == .sandbox)
        #expect(t.storefront == "USA")
        #expect(t.storefrontId == "143441")
        #expect(t.transactionReason == .purchase)
        #expect(t.currency == "USD")
        #expect(t.price == 9990)
        #expect(t.offerDiscountType == .payAsYouGo)
        #expect(t.appTransactionId == "704897469903383919")
        #expect(t.offerPeriod == "P1M")
    }

    @Test func codableRoundTripUsesAppleMemberNames() throws {
        let harness = try Harness()
        let transaction = try harness.verifier().verifyAndDecodeTransaction(try harness.signTransaction()).get()
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .millisecondsSince1970
        let data = try encoder.encode(transaction)
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains("\"type\":\"Auto-Renewable Subscription\""))
        #expect(text.contains("\"purchaseDate\":1735689000000"))
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        #expect(try decoder.decode(JWSTransactionDecodedPayload.self, from: data) == transaction)
    }
}
