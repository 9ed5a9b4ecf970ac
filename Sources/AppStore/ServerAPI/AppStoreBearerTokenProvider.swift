import Foundation
import Synchronization

/// Hands out the bearer token for App Store Server API requests, signing a new one only when the
/// cached one is close to expiry.
///
/// An ECDSA signature per request would cost CPU for nothing: Apple accepts a token for up to 60
/// minutes, so with the defaults (30-minute tokens replaced 5 minutes early) one signature covers
/// 25 minutes of requests, however many are in flight.
///
/// - Important: Thread-safe. The lock is held while a replacement is signed (tens of
///   microseconds, a few times an hour), so concurrent callers never sign twice.
public final class AppStoreBearerTokenProvider: Sendable {
    private struct Cached {
        var token: String
        var issuedAt: Int64
        var renewAt: Int64
    }

    private let signer: AppStoreJWTSigner
    private let keyId: String
    private let issuerId: String
    private let bundleId: String
    private let lifetimeSeconds: Int64
    private let refreshMarginSeconds: Int64
    private let clock: @Sendable () -> Date
    private let cached = Mutex<Cached?>(nil)
    private let signatures = Atomic<Int>(0)

    /// Creates a provider.
    /// - Parameters:
    ///   - signer: Holds the `.p8` key.
    ///   - keyId: Header `kid`.
    ///   - issuerId: Claim `iss`.
    ///   - bundleId: Claim `bid`.
    ///   - lifetime: `exp - iat`, at most 60 minutes (whole seconds are used).
    ///   - refreshMargin: How long before `exp` a token is replaced.
    ///   - clock: The current time; inject a fixed clock in tests.
    public init(signer: AppStoreJWTSigner, keyId: String, issuerId: String, bundleId: String,
                lifetime: Duration, refreshMargin: Duration, clock: @escaping @Sendable () -> Date = Date.init) {
        self.signer = signer
        self.keyId = keyId
        self.issuerId = issuerId
        self.bundleId = bundleId
        self.lifetimeSeconds = min(max(lifetime.components.seconds, 1), AppStoreBearerToken.maximumLifetimeSeconds)
        self.refreshMarginSeconds = min(max(refreshMargin.components.seconds, 0), self.lifetimeSeconds - 1)
        self.clock = clock
    }

    /// A valid token: the cached one while it has more than the refresh margin left, else a new one.
    /// - Returns: The compact JWT to send as `Authorization: Bearer <token>`.
    /// - Throws: ``OpenSSLError`` when signing fails (a broken key: a configuration alarm).
    public func token() throws -> String {
        let now = Int64(clock().timeIntervalSince1970.rounded(.down))
        return try cached.withLock { cached in
            // Reuse unless due for renewal, or the clock moved backwards past the issue time
            // (Apple would reject an `iat` in the future).
            if let current = cached, now < current.renewAt, now >= current.issuedAt - 60 {
                return current.token
            }
            let expiresAt = now + lifetimeSeconds
            let json = AppStoreBearerToken.json(keyId: keyId, issuerId: issuerId, bundleId: bundleId,
                                                issuedAt: now, expiresAt: expiresAt)
            let token = try signer.sign(headerJSON: json.header, payloadJSON: json.claims)
            signatures.add(1, ordering: .relaxed)
            cached = Cached(token: token, issuedAt: now, renewAt: expiresAt - refreshMarginSeconds)
            return token
        }
    }

    /// Forgets the cached token, so the next request signs a fresh one (after a 401, in case the
    /// key or the clock was fixed in the meantime).
    public func invalidate() {
        cached.withLock { $0 = nil }
    }

    /// How many tokens have been signed, for metrics and for tests that check reuse.
    public var signatureCount: Int { signatures.load(ordering: .relaxed) }
}
