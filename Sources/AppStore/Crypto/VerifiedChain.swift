/// The message-independent outcome of checking one JWS header's `x5c` chain (or one app
/// receipt's embedded certificates): the leaf's public key plus the validity windows of all three
/// certificates. Cached per header (per certificate set) by ``ChainCache``, so each message only
/// pays for a window comparison and one signature verification.
final class VerifiedChain: Sendable {
    /// A certificate's validity period in whole seconds since 1970 (inclusive bounds, like OpenSSL).
    struct ValidityWindow: Sendable, Equatable {
        let role: String
        let notBefore: Int64
        let notAfter: Int64
    }

    /// The leaf's P-256 public key.
    let leafKey: EVPKey
    /// Leaf, intermediate, root (the root is the configured trust anchor with the same DER).
    let certificates: [X509Certificate]
    /// Windows of leaf, intermediate and root, in that order.
    let windows: [ValidityWindow]

    init(leafKey: EVPKey, certificates: [X509Certificate]) {
        self.leafKey = leafKey
        self.certificates = certificates
        let roles = ["leaf", "intermediate", "root"]
        self.windows = certificates.enumerated().map { index, certificate in
            ValidityWindow(role: roles[index], notBefore: certificate.notBeforeSeconds, notAfter: certificate.notAfterSeconds)
        }
    }

    /// Checks that every certificate is valid at an instant.
    /// - Parameter milliseconds: The effective date (payload `signedDate`, or now), ms since 1970.
    /// - Throws: ``VerificationError`` `certificate-not-yet-valid` or `certificate-expired`.
    func checkValidity(atMilliseconds milliseconds: Int64) throws(VerificationError) {
        let seconds = milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000
        for window in windows {
            if seconds < window.notBefore {
                throw VerificationError(.certificateNotYetValid, "\(window.role) certificate is not yet valid at the effective date")
            }
            if seconds > window.notAfter {
                throw VerificationError(.certificateExpired, "\(window.role) certificate has expired at the effective date")
            }
        }
    }
}
