import Foundation

/// A throw-away App Store-shaped PKI for tests and the demo: a P-256 root, an intermediate
/// carrying Apple's WWDR marker OID `1.2.840.113635.100.6.2.1` and a leaf carrying
/// `1.2.840.113635.100.6.11.1`, with Apple's extension shape (critical basic constraints and key
/// usage, subject and authority key identifiers), all created in-process with the OpenSSL API.
///
/// Configure a verifier with `trustAnchors: [pki.root]` to accept what ``signer`` signs.
/// - Important: Test and demo tooling only; the keys live in memory and are never persisted.
public struct TestPKI: Sendable {
    /// The self-signed root (use as trust anchor).
    public let root: X509Certificate
    /// The intermediate CA.
    public let intermediate: X509Certificate
    /// The signing leaf.
    public let leaf: X509Certificate
    /// Signs with the leaf key and puts ``chain`` into the `x5c` header.
    public let signer: JWSSigner
    /// Root key (tests sign extra certificates with it).
    let rootKey: EVPKey
    /// Intermediate key.
    let intermediateKey: EVPKey
    /// Leaf key.
    let leafKey: EVPKey

    /// The `x5c` entries: standard padded base64 DER of leaf, intermediate, root.
    public var chain: [String] { [leaf, intermediate, root].map { Base64.encode($0.derBytes) } }

    /// Variations for negative tests.
    struct Options {
        var intermediateMarkerOID: String? = ChainVerifier.intermediateOID
        var leafMarkerOID: String? = ChainVerifier.leafOID
        var intermediateIsCA = true
        var leafCurve = "P-256"
    }

    /// Generates a fresh PKI; all three certificates share one validity period.
    /// - Parameters:
    ///   - validFrom: Start of validity.
    ///   - validUntil: End of validity.
    ///   - commonNamePrefix: Prefix of the three common names (`<prefix> Root CA`, …).
    /// - Returns: The PKI with its signer.
    /// - Throws: ``OpenSSLError`` when key or certificate generation fails.
    public static func generate(validFrom: Date, validUntil: Date, commonNamePrefix: String = "receiptd test") throws -> TestPKI {
        try generate(validFrom: validFrom, validUntil: validUntil, commonNamePrefix: commonNamePrefix, options: Options())
    }

    static func generate(validFrom: Date, validUntil: Date, commonNamePrefix: String, options: Options) throws -> TestPKI {
        let rootKey = try EVPKey.generateEC()
        let intermediateKey = try EVPKey.generateEC()
        let leafKey = try EVPKey.generateEC(curve: options.leafCurve)
        let root = try CertificateBuilder.make(.init(
            commonName: "\(commonNamePrefix) Root CA", subjectKey: rootKey, issuer: nil, isCA: true, pathLength: nil,
            keyUsage: "keyCertSign,cRLSign", markerOIDs: [], validFrom: validFrom, validUntil: validUntil))
        let intermediate = try CertificateBuilder.make(.init(
            commonName: "\(commonNamePrefix) Intermediate CA", subjectKey: intermediateKey, issuer: (root, rootKey),
            isCA: options.intermediateIsCA, pathLength: 0,
            keyUsage: options.intermediateIsCA ? "keyCertSign,cRLSign" : "digitalSignature",
            markerOIDs: options.intermediateMarkerOID.map { [$0] } ?? [], validFrom: validFrom, validUntil: validUntil))
        let leaf = try CertificateBuilder.make(.init(
            commonName: "\(commonNamePrefix) StoreKit Signing", subjectKey: leafKey, issuer: (intermediate, intermediateKey),
            isCA: false, pathLength: nil, keyUsage: "digitalSignature",
            markerOIDs: options.leafMarkerOID.map { [$0] } ?? [], validFrom: validFrom, validUntil: validUntil))
        let x5c = [leaf, intermediate, root].map { Base64.encode($0.derBytes) }
        return TestPKI(root: root, intermediate: intermediate, leaf: leaf, signer: JWSSigner(key: leafKey, x5c: x5c),
                       rootKey: rootKey, intermediateKey: intermediateKey, leafKey: leafKey)
    }
}
