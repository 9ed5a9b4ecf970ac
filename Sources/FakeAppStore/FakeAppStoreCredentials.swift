import AppStore
import Foundation

/// Everything a fake App Store and its clients must agree on: the test PKI that signs StoreKit
/// data, the in-app purchase key that signs bearer tokens, its key and issuer ids, and the
/// `verifyReceipt` shared secret.
///
/// - Important: Test and demo material only, generated in memory. ``write(to:)`` puts the public
///   root, the `.p8` key and the ids on disk for clients in other processes.
public struct FakeAppStoreCredentials: Sendable {
    /// Signs `signedTransactionInfo` and `signedRenewalInfo`; clients trust ``TestPKI/root``.
    public let pki: TestPKI
    /// The in-app purchase key: clients sign bearer tokens with it, the fake checks them with its
    /// public half.
    public let apiKey: AppStoreJWTSigner
    /// The key id (JWT `kid`), ten upper-case letters and digits like Apple's.
    public let keyId: String
    /// The issuer id (JWT `iss`), a UUID.
    public let issuerId: String
    /// The shared secret `verifyReceipt` demands as `password`; `nil` accepts any password.
    public let sharedSecret: String?

    /// Assembles credentials from parts (e.g. a key loaded from an existing `.p8`).
    /// - Parameters:
    ///   - pki: The signing PKI.
    ///   - apiKey: The bearer-token key.
    ///   - keyId: Its key id.
    ///   - issuerId: The issuer id.
    ///   - sharedSecret: The `verifyReceipt` shared secret, or `nil`.
    public init(pki: TestPKI, apiKey: AppStoreJWTSigner, keyId: String, issuerId: String, sharedSecret: String?) {
        self.pki = pki
        self.apiKey = apiKey
        self.keyId = keyId
        self.issuerId = issuerId
        self.sharedSecret = sharedSecret
    }

    /// Generates fresh credentials; the PKI is valid from a day before `now` for a year.
    /// - Parameters:
    ///   - now: The reference time.
    ///   - withSharedSecret: Whether `verifyReceipt` checks a shared secret.
    /// - Returns: The credentials.
    /// - Throws: ``OpenSSLError`` when key generation fails.
    public static func generate(now: Date = Date(), withSharedSecret: Bool = true) throws -> FakeAppStoreCredentials {
        let pki = try TestPKI.generate(validFrom: now.addingTimeInterval(-86_400), validUntil: now.addingTimeInterval(365 * 86_400),
                                       commonNamePrefix: "receiptd fake App Store")
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("ABCDEFGHJKLMNPQRSTUVWXYZ23456789")
        let keyId = String((0..<10).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] })
        let secret = (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
        return FakeAppStoreCredentials(pki: pki, apiKey: try AppStoreJWTSigner.generate(), keyId: keyId,
                                       issuerId: UUID().uuidString.lowercased(), sharedSecret: withSharedSecret ? secret : nil)
    }

    /// Where ``write(to:)`` put each file.
    public struct Files: Sendable, Equatable {
        /// `root.pem`: the trust anchor for the fake's signed data.
        public var rootCertificate: String
        /// `AuthKey_<keyId>.p8`: the bearer-token key (mode 0600).
        public var signingKey: String
        /// `key-id`: the key id on one line.
        public var keyId: String
        /// `issuer-id`: the issuer id on one line.
        public var issuerId: String
        /// `shared-secret`: the `verifyReceipt` shared secret (mode 0600), when there is one.
        public var sharedSecret: String?
    }

    /// Writes the client-side material into `directory` (created if missing; files replaced).
    /// - Parameter directory: The target directory.
    /// - Returns: The written paths.
    /// - Throws: Foundation file errors, or ``OpenSSLError`` when the key cannot be encoded.
    public func write(to directory: String) throws -> Files {
        let manager = FileManager.default
        try manager.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let base = URL(fileURLWithPath: directory)
        func put(_ name: String, _ text: String, secret: Bool = false) throws -> String {
            let path = base.appendingPathComponent(name).path
            try Data(text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
            if secret { try manager.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path) }
            return path
        }
        return Files(
            rootCertificate: try put("root.pem", pki.root.pemString),
            signingKey: try put("AuthKey_\(keyId).p8", try apiKey.pkcs8PEM(), secret: true),
            keyId: try put("key-id", keyId + "\n"),
            issuerId: try put("issuer-id", issuerId + "\n"),
            sharedSecret: try sharedSecret.map { try put("shared-secret", $0 + "\n", secret: true) })
    }
}
