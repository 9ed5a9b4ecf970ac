import Foundation
import Synchronization
import Testing
@_spi(Testing) @testable import AppStore

/// The whole-outcome cache keyed by the JWS's exact bytes: what it answers, what it must never
/// keep (anything that read the clock), and its bound.
@Suite struct VerifiedJWSCacheTests {
    /// A clock the test moves.
    final class MovableClock: Sendable {
        private let now = Mutex(TestClock.inside)
        func set(_ date: Date) { now.withLock { $0 = date } }
        var read: @Sendable () -> Date { { self.now.withLock { $0 } } }
    }

    @Test func aResubmittedJWSIsAnsweredFromTheCacheWithTheSameResult() throws {
        let harness = try Harness()
        let verifier = try harness.verifier()
        let jws = try harness.signTransaction()
        let first = verifier.verifyAndDecodeTransaction(jws)
        let second = verifier.verifyAndDecodeTransaction(jws)
        #expect(first.code == "valid")
        #expect(second.value?.transactionId == first.value?.transactionId)
        #expect(verifier.verifiedCacheStatistics.hits == 1)
        #expect(verifier.verifiedCacheStatistics.misses == 1)
    }

    @Test func aRejectionThatDidNotReadTheClockIsCachedToo() throws {
        let harness = try Harness(prefix: "genuine")
        let other = try Harness(prefix: "other")
        let verifier = try harness.verifier()
        let forged = try JWSSigner(key: other.pki.leafKey, headerJSON: Array(harness.headerJSON().utf8))
            .sign(payloadJSON: Harness.transactionJSON())
        #expect(verifier.verifyAndDecodeTransaction(forged).code == "invalid-signature")
        #expect(verifier.verifyAndDecodeTransaction(forged).code == "invalid-signature")
        #expect(verifier.verifiedCacheStatistics.hits == 1)
    }

    @Test func anOutcomeThatReadTheClockIsNeverCached() throws {
        let harness = try Harness()
        let clock = MovableClock()
        let verifier = try harness.verifier(clock: clock.read)
        // No signedDate: the chain is checked at the clock's time.
        let jws = try harness.signTransaction(["signedDate": nil])
        #expect(verifier.verifyAndDecodeTransaction(jws).code == "valid")
        clock.set(TestClock.validUntil.addingTimeInterval(86_400))
        #expect(verifier.verifyAndDecodeTransaction(jws).code == "certificate-expired")
        clock.set(TestClock.inside)
        #expect(verifier.verifyAndDecodeTransaction(jws).code == "valid")
        #expect(verifier.verifiedCacheStatistics.hits == 0)
    }

    @Test func aNotificationWhoseNestedTransactionReadTheClockIsNotCached() throws {
        let harness = try Harness()
        let verifier = try harness.verifier()
        let undated = try harness.signNotification(transaction: ["signedDate": nil])
        #expect(verifier.verifyAndDecodeNotification(undated).code == "valid")
        #expect(verifier.verifyAndDecodeNotification(undated).code == "valid")
        #expect(verifier.verifiedCacheStatistics.hits == 0)
        let dated = try harness.signNotification()
        #expect(verifier.verifyAndDecodeNotification(dated).code == "valid")
        #expect(verifier.verifyAndDecodeNotification(dated).code == "valid")
        #expect(verifier.verifiedCacheStatistics.hits == 1)
    }

    @Test func theSameBytesVerifiedAsAnotherKindAreAnotherEntry() throws {
        let harness = try Harness()
        let verifier = try harness.verifier()
        let jws = try harness.signTransaction()
        #expect(verifier.verifyAndDecodeTransaction(jws).code == "valid")
        // A transaction is not a notification: its own verdict, not the cached transaction.
        #expect(verifier.verifyAndDecodeNotification(jws).code != "valid")
        #expect(verifier.verifiedCacheStatistics.hits == 0)
    }

    @Test func theLeastRecentlyUsedEntryIsEvictedFirst() throws {
        let harness = try Harness()
        let verifier = try harness.verifier(limits: .init(verifiedCacheCapacity: 2))
        let a = try harness.signTransaction(["transactionId": "\"a\""])
        let b = try harness.signTransaction(["transactionId": "\"b\""])
        let c = try harness.signTransaction(["transactionId": "\"c\""])
        _ = verifier.verifyAndDecodeTransaction(a)
        _ = verifier.verifyAndDecodeTransaction(b)
        _ = verifier.verifyAndDecodeTransaction(a)  // hit: a is now the newest
        _ = verifier.verifyAndDecodeTransaction(c)  // evicts b
        #expect(verifier.verifiedCacheStatistics.hits == 1)
        _ = verifier.verifyAndDecodeTransaction(a)
        _ = verifier.verifyAndDecodeTransaction(c)
        #expect(verifier.verifiedCacheStatistics.hits == 3)
        _ = verifier.verifyAndDecodeTransaction(b)
        #expect(verifier.verifiedCacheStatistics.hits == 3)
        #expect(verifier.verifiedCacheStatistics.misses == 4)
    }

    @Test func capacityZeroTurnsTheCacheOff() throws {
        let harness = try Harness()
        let verifier = try harness.verifier(limits: .init(verifiedCacheCapacity: 0))
        let jws = try harness.signTransaction()
        _ = verifier.verifyAndDecodeTransaction(jws)
        _ = verifier.verifyAndDecodeTransaction(jws)
        #expect(verifier.verifiedCacheStatistics.hits == 0)
        #expect(verifier.cacheStatistics.builds == 1)
    }

    @Test func aNegativeCapacityIsAConfigurationError() throws {
        let harness = try Harness()
        #expect(throws: AppStoreConfigurationError.self) {
            _ = try harness.verifier(limits: .init(verifiedCacheCapacity: -1))
        }
    }

    /// The key's pass also yields the signing input's digest (the bytes up to the second dot) that
    /// a miss checks the signature with: both must equal SHA-256 computed on its own. Input that is
    /// not three non-empty segments gets no signing input digest (the verifier refuses it first).
    @Test(arguments: ["a.b.c", ".b.c", "a..c", "a.b.", "..", "a.b.c.d",
                      String(repeating: "h", count: 63) + "." + String(repeating: "p", count: 1_000) + ".s",
                      "no dots", "one.dot", ""])
    func theKeyAndTheSigningInputDigestComeFromOnePass(_ jws: String) {
        let (key, signingInput) = Array(jws.utf8).withUnsafeBufferPointer { VerifiedJWSCache.Key.withSigningInput($0, kind: .transaction) }
        #expect(key != Array(jws.utf8).withUnsafeBufferPointer { VerifiedJWSCache.Key.withSigningInput($0, kind: .renewalInfo) }.key)
        let whole = SHA256Digest.hash(Array(jws.utf8))
        #expect(withUnsafeBytes(of: key.digest) { Array($0) } == whole)
        let segments = jws.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3, segments.allSatisfy({ !$0.isEmpty }) else {
            #expect(signingInput == nil)
            return
        }
        let prefix = Array((segments[0] + "." + segments[1]).utf8)
        #expect(signingInput?.length == prefix.count)
        var copied = [UInt8](repeating: 0, count: 32)
        signingInput?.copy(to: &copied)
        #expect(copied == SHA256Digest.hash(prefix))
    }

    /// A JWS whose signature does not match is refused on the one-pass path as on the other.
    @Test func theOnePassDigestStillRefusesAForgedSignature() throws {
        let harness = try Harness()
        let jws = try harness.signTransaction()
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        // A character mid-payload changed: still canonical base64url, so the signature is what fails.
        var payload = Array(parts[1])
        payload[payload.count / 2] = payload[payload.count / 2] == "A" ? "B" : "A"
        let tampered = parts[0] + "." + String(payload) + "." + parts[2]
        for capacity in [0, 16] {
            var limits = SignedDataVerifierConfiguration.Limits()
            limits.verifiedCacheCapacity = capacity
            let verifier = try harness.verifier(limits: limits)
            #expect(verifier.verifyAndDecodeTransaction(jws).code == "valid")
            #expect(verifier.verifyAndDecodeTransaction(String(tampered)).code == "invalid-signature")
        }
    }
}
