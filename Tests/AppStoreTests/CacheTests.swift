import Dispatch
import Foundation
import Testing
@_spi(Testing) @testable import AppStore

/// The per-header chain cache: what is cached, what is not, bounds, and concurrent use.
@Suite struct CacheTests {
    @Test func secondMessageWithSameHeaderDoesNotReparseCertificates() throws {
        let harness = try Harness()
        let verifier = try harness.verifier(limits: .init(verifiedCacheCapacity: 0))
        #expect(verifier.verifyAndDecodeTransaction(try harness.signTransaction()).code == "valid")
        #expect(verifier.cacheStatistics.builds == 1)
        for index in 0..<5 {
            let jws = try harness.signTransaction(["transactionId": "\"\(index)\""])
            #expect(verifier.verifyAndDecodeTransaction(jws).code == "valid")
        }
        #expect(verifier.cacheStatistics.builds == 1)
        #expect(verifier.cacheStatistics.verified == 1)
    }

    @Test func cachedChainStillChecksEachMessagesDate() throws {
        let harness = try Harness()
        let verifier = try harness.verifier(limits: .init(verifiedCacheCapacity: 0))
        #expect(verifier.verifyAndDecodeTransaction(try harness.signTransaction()).code == "valid")
        let late = Int64(TestClock.validUntil.timeIntervalSince1970 + 1) * 1000
        let early = Int64(TestClock.validFrom.timeIntervalSince1970 - 1) * 1000
        #expect(verifier.verifyAndDecodeTransaction(try harness.signTransaction(["signedDate": "\(late)"])).code == "certificate-expired")
        #expect(verifier.verifyAndDecodeTransaction(try harness.signTransaction(["signedDate": "\(early)"])).code == "certificate-not-yet-valid")
        #expect(verifier.verifyAndDecodeTransaction(try harness.signTransaction()).code == "valid")
        #expect(verifier.cacheStatistics.builds == 1)
    }

    @Test func rejectedHeadersAreCachedSeparately() throws {
        let trusted = try Harness(prefix: "trusted")
        let attacker = try Harness(prefix: "attacker")
        let verifier = try trusted.verifier(limits: .init(verifiedCacheCapacity: 0))
        for _ in 0..<3 {
            #expect(verifier.verifyAndDecodeTransaction(try attacker.signTransaction()).code == "untrusted-root")
        }
        #expect(verifier.cacheStatistics.builds == 1)
        #expect(verifier.cacheStatistics.rejected == 1)
        #expect(verifier.cacheStatistics.verified == 0)
    }

    @Test func forgedSignatureDoesNotPoisonOrFillTheCache() throws {
        let harness = try Harness(prefix: "genuine")
        let other = try Harness(prefix: "other")
        let verifier = try harness.verifier(limits: .init(verifiedCacheCapacity: 0))
        // First sight of the genuine header comes with a forged signature: nothing is cached.
        let forged = try JWSSigner(key: other.pki.leafKey, headerJSON: Array(harness.headerJSON().utf8))
            .sign(payloadJSON: Harness.transactionJSON())
        #expect(verifier.verifyAndDecodeTransaction(forged).code == "invalid-signature")
        #expect(verifier.cacheStatistics.verified == 0 && verifier.cacheStatistics.rejected == 0)
        // The genuine message still verifies and is cached.
        #expect(verifier.verifyAndDecodeTransaction(try harness.signTransaction()).code == "valid")
        #expect(verifier.cacheStatistics.verified == 1)
        // Forgeries under the cached header cost one signature check and are rejected.
        #expect(verifier.verifyAndDecodeTransaction(forged).code == "invalid-signature")
        #expect(verifier.cacheStatistics.builds == 2)
    }

    @Test func cacheIsBounded() throws {
        let harnesses = try (0..<4).map { try Harness(prefix: "pki \($0)") }
        let limits = SignedDataVerifierConfiguration.Limits(chainCacheCapacity: 2, rejectedHeaderCacheCapacity: 1)
        let verifier = try harnesses[0].verifier(trustAnchors: harnesses.map(\.pki.root), limits: limits)
        for harness in harnesses {
            #expect(verifier.verifyAndDecodeTransaction(try harness.signTransaction()).code == "valid")
        }
        #expect(verifier.cacheStatistics.verified == 2)
        #expect(verifier.cacheStatistics.builds == 4)
        // Evicted first entry is rebuilt, recent one is still cached.
        #expect(verifier.verifyAndDecodeTransaction(try harnesses[3].signTransaction()).code == "valid")
        #expect(verifier.cacheStatistics.builds == 4)
        #expect(verifier.verifyAndDecodeTransaction(try harnesses[0].signTransaction()).code == "valid")
        #expect(verifier.cacheStatistics.builds == 5)
        let untrusted = try Harness(prefix: "untrusted")
        let alsoUntrusted = try Harness(prefix: "untrusted 2")
        _ = verifier.verifyAndDecodeTransaction(try untrusted.signTransaction())
        _ = verifier.verifyAndDecodeTransaction(try alsoUntrusted.signTransaction())
        #expect(verifier.cacheStatistics.rejected == 1)
        #expect(verifier.cacheStatistics.verified == 2)
    }

    @Test func verifiesConcurrentlyFromManyThreads() throws {
        let harness = try Harness()
        let other = try Harness(prefix: "other")
        let verifier = try harness.verifier(trustAnchors: [harness.pki.root, other.pki.root])
        let messages = try (0..<64).map { index in
            try (index.isMultiple(of: 2) ? harness : other).signTransaction(["transactionId": "\"\(index)\""])
        }
        let forged = replacingSegment(messages[0], 1, with: Base64URL.encode(Array(Harness.transactionJSON(["price": "0"]).utf8)))
        let outcomes = Outcomes()
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for round in 0..<8 {
                let index = (worker * 8 + round) % messages.count
                outcomes.record(verifier.verifyAndDecodeTransaction(messages[index]).code)
                outcomes.record(verifier.verifyAndDecodeTransaction(forged).code)
            }
        }
        #expect(outcomes.counts == ["valid": 64, "invalid-signature": 64])
        #expect(verifier.cacheStatistics.verified == 2)
    }
}

/// A thread-safe tally for the concurrency test.
private final class Outcomes: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [String: Int] = [:]

    func record(_ code: String) {
        lock.lock()
        storage[code, default: 0] += 1
        lock.unlock()
    }

    var counts: [String: Int] {
        lock.lock()
        defer { lock.unlock() }
        return storage
    }
}
