import Foundation
import Observability
import Testing
@_spi(Testing) @testable import AppStore

/// Verifications begun into a ``SignatureBatch`` end exactly as verifying them one at a time does
/// (the same reason and detail, whatever order their checks would have failed in); only the ES256
/// check of a JWS whose chain is cached waits, and an outcome is cached only once the batch decided.
@Suite struct SignatureBatchTests {
    /// Inputs whose outcomes depend on which check runs first, each verified as its kind.
    enum Input {
        case transaction(String)
        case notification(String)
        case renewalInfo(String)
    }

    struct Fixture {
        let harness: Harness
        let inputs: [(name: String, input: Input)]

        init() throws {
            let harness = try Harness(prefix: "genuine")
            let other = try Harness(prefix: "other")
            // Signed with a key that is not the chain's leaf, under the genuine header.
            let forger = JWSSigner(key: other.pki.leafKey, headerJSON: Array(harness.headerJSON().utf8))
            let forgedTransaction = try forger.sign(payloadJSON: Harness.transactionJSON())
            let (nestedTransaction, nestedRenewal) = try harness.signNested()
            func notification(transaction: String, renewal: String?) -> String {
                NotificationJSON.notification(type: "DID_RENEW", containers: [
                    ("data", NotificationJSON.data(transaction: transaction, renewal: renewal)),
                ])
            }
            self.harness = harness
            inputs = [
                ("genuine transaction", .transaction(try harness.signTransaction())),
                ("forged transaction", .transaction(forgedTransaction)),
                // The signature fails before the bundle id is looked at.
                ("forged transaction of another app", .transaction(try forger.sign(payloadJSON: Harness.transactionJSON([
                    "bundleId": "\"com.other.app\"",
                ])))),
                ("genuine transaction of another app", .transaction(try harness.signTransaction(["bundleId": "\"com.other.app\""]))),
                ("malformed", .transaction("not.a-jws")),
                ("genuine notification", .notification(try harness.signNotification())),
                ("forged notification", .notification(try forger.sign(payloadJSON: notification(
                    transaction: nestedTransaction, renewal: nestedRenewal)))),
                ("notification with a forged transaction", .notification(try harness.pki.signer.sign(payloadJSON: notification(
                    transaction: forgedTransaction, renewal: nil)))),
                // The outer signature fails first: not the nested one's detail.
                ("forged notification with a forged transaction", .notification(try forger.sign(payloadJSON: notification(
                    transaction: forgedTransaction, renewal: nil)))),
                ("genuine renewal info", .renewalInfo(nestedRenewal)),
                ("forged renewal info", .renewalInfo(try forger.sign(payloadJSON: NotificationJSON.renewalJSON()))),
            ]
        }
    }

    /// The outcome as text: the reason and detail of a rejection, else what was decoded.
    static func describe<T>(_ result: VerificationResult<T>) -> String {
        switch result {
        case .valid(let value): "valid \(type(of: value))"
        case .invalid(let error): "\(error.reason.code): \(error.detail)"
        }
    }

    static func oneAtATime(_ input: Input, _ verifier: SignedDataVerifier) -> String {
        switch input {
        case .transaction(let jws): describe(verifier.verifyAndDecodeTransaction(jws))
        case .notification(let jws): describe(verifier.verifyAndDecodeNotification(jws))
        case .renewalInfo(let jws): describe(verifier.verifyAndDecodeRenewalInfo(jws))
        }
    }

    /// Begins every input into one batch, checks it, then finishes each.
    static func batched(_ inputs: [Input], _ verifier: SignedDataVerifier) -> (outcomes: [String], checks: Int) {
        let batch = SignatureBatch()
        let finishers = inputs.map { input -> () -> String in
            switch input {
            case .transaction(let jws):
                let pending = jws.withUTF8InPlace { verifier.beginTransaction(utf8: $0, deferringTo: batch) }
                return { describe(verifier.finish(pending, in: batch)) }
            case .notification(let jws):
                let pending = jws.withUTF8InPlace { verifier.beginNotification(utf8: $0, deferringTo: batch) }
                return { describe(verifier.finish(pending, in: batch)) }
            case .renewalInfo(let jws):
                let pending = jws.withUTF8InPlace { verifier.beginRenewalInfo(utf8: $0, deferringTo: batch) }
                return { describe(verifier.finish(pending, in: batch)) }
            }
        }
        let checks = batch.count
        batch.checkAll()
        return (finishers.map { $0() }, checks)
    }

    @Test(arguments: [0, 10_000])
    func aBatchEndsEveryVerificationAsOneAtATimeDoes(cacheCapacity: Int) throws {
        let fixture = try Fixture()
        let limits = SignedDataVerifierConfiguration.Limits(verifiedCacheCapacity: cacheCapacity)
        let expected = try fixture.inputs.map { Self.oneAtATime($0.input, try fixture.harness.verifier(limits: limits)) }
        let verifier = try fixture.harness.verifier(limits: limits)
        // Caches the chain, so every check of the batch can wait.
        #expect(verifier.verifyAndDecodeTransaction(try fixture.harness.signTransaction(["transactionId": "\"warm\""])).code == "valid")
        let (outcomes, checks) = Self.batched(fixture.inputs.map(\.input), verifier)
        for (index, input) in fixture.inputs.enumerated() {
            #expect(outcomes[index] == expected[index], "\(input.name)")
        }
        #expect(expected.contains("valid JWSTransactionDecodedPayload"))
        #expect(expected.filter { $0.hasPrefix("invalid-signature") }.count == 6)
        // All but the malformed JWS had a signature to check, and their chain was cached.
        #expect(checks == fixture.inputs.count - 1)
    }

    @Test func theCheckOfANewChainRunsInOrderNotInTheBatch() throws {
        let fixture = try Fixture()
        let verifier = try fixture.harness.verifier()
        let batch = SignatureBatch()
        let forged = fixture.inputs[1].input
        guard case .transaction(let jws) = forged else { Issue.record("the fixture's second input is a transaction"); return }
        let pending = jws.withUTF8InPlace { verifier.beginTransaction(utf8: $0, deferringTo: batch) }
        // The header was new: its signature was checked with the candidate leaf before the chain.
        #expect(batch.count == 0)
        #expect(verifier.finish(pending, in: batch).code == "invalid-signature")
    }

    @Test func anOutcomeIsCachedOnlyOnceTheBatchDecidedIt() throws {
        let fixture = try Fixture()
        let verifier = try fixture.harness.verifier()
        #expect(verifier.verifyAndDecodeTransaction(try fixture.harness.signTransaction(["transactionId": "\"warm\""])).code == "valid")
        guard case .transaction(let genuine) = fixture.inputs[0].input, case .transaction(let forged) = fixture.inputs[1].input else {
            Issue.record("the fixture's first inputs are transactions")
            return
        }
        let (outcomes, checks) = Self.batched([.transaction(genuine), .transaction(forged)], verifier)
        #expect(checks == 2)
        #expect(outcomes == ["valid JWSTransactionDecodedPayload", "invalid-signature: ES256 signature does not verify with the leaf key"])
        let hitsBefore = verifier.verifiedCacheStatistics.hits
        // Answered from the cache with the batch's final outcomes, not the provisional ones.
        #expect(verifier.verifyAndDecodeTransaction(genuine).code == "valid")
        #expect(verifier.verifyAndDecodeTransaction(forged).code == "invalid-signature")
        #expect(verifier.verifiedCacheStatistics.hits == hitsBefore + 2)
    }

    @Test func aBatchedOutcomeThatReadTheClockIsNotCached() throws {
        let harness = try Harness()
        let verifier = try harness.verifier()
        #expect(verifier.verifyAndDecodeTransaction(try harness.signTransaction()).code == "valid")
        let undated = try harness.signTransaction(["signedDate": nil, "transactionId": "\"undated\""])
        #expect(Self.batched([.transaction(undated)], verifier).outcomes == ["valid JWSTransactionDecodedPayload"])
        let hitsBefore = verifier.verifiedCacheStatistics.hits
        #expect(verifier.verifyAndDecodeTransaction(undated).code == "valid")
        #expect(verifier.verifiedCacheStatistics.hits == hitsBefore)
    }
}
