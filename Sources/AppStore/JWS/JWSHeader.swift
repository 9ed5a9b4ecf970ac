/// The protected header of an App Store JWS, checked against a fixed policy.
///
/// Policy (decided here, documented in the README):
/// - `alg` must be exactly the string `ES256`, else `unsupported-algorithm`.
/// - `jwk`, `jku`, `x5u` (key or certificate from elsewhere), `crit` (extensions we would have to
///   understand), `b64` (RFC 7797 unencoded payload), `zip` and `enc` (JWE/compression) are
///   `forbidden-header`, whatever their value.
/// - `x5c` must be an array of exactly three strings, each canonical padded base64 (RFC 7515 §4.1.6).
/// - Every other member (`typ`, `kid`, `cty`, `x5t`, `x5t#S256`, unknown names) is ignored, like
///   Apple's library does; it is still covered by the signature and must be strict JSON.
struct JWSHeader: Sendable {
    /// Header members that are rejected whatever their value.
    static let forbiddenMembers: [String] = ["jwk", "jku", "x5u", "crit", "b64", "zip", "enc"]

    /// DER certificates from `x5c`: leaf, intermediate, root.
    let x5c: [[UInt8]]

    /// Parses and checks a decoded header.
    /// - Parameters:
    ///   - json: The decoded header bytes.
    ///   - maxDepth: JSON nesting bound.
    /// - Throws: ``VerificationError`` for any policy violation.
    static func parse(_ json: [UInt8], maxDepth: Int) throws(VerificationError) -> JWSHeader {
        guard case .object(let header) = try JSONParser.parse(json, maxDepth: maxDepth) else {
            throw VerificationError(.invalidJSON, "header is not a JSON object")
        }
        for name in forbiddenMembers where header[name] != nil {
            throw VerificationError(.forbiddenHeader, "header member \(name) is not allowed")
        }
        switch header["alg"] {
        case .some(.string("ES256")):
            break
        case .none:
            throw VerificationError(.unsupportedAlgorithm, "header has no alg")
        case .some(.string):
            throw VerificationError(.unsupportedAlgorithm, "alg is not ES256")
        case .some(let other):
            throw VerificationError(.unsupportedAlgorithm, "alg must be a string, got \(other.typeName)")
        }
        let entries: [JSONValue]
        switch header["x5c"] {
        case .none, .some(.null):
            throw VerificationError(.missingX5C, "header has no x5c")
        case .some(.array(let array)):
            entries = array
        case .some(let other):
            throw VerificationError(.invalidCertificate, "x5c must be an array of strings, got \(other.typeName)")
        }
        guard !entries.isEmpty else { throw VerificationError(.missingX5C, "x5c is empty") }
        guard entries.count == 3 else {
            throw VerificationError(.invalidChainLength, "x5c holds \(entries.count) certificates, expected 3")
        }
        var certificates: [[UInt8]] = []
        for (index, entry) in entries.enumerated() {
            guard case .string(let text) = entry else {
                throw VerificationError(.invalidCertificate, "x5c[\(index)] is not a string")
            }
            guard let der = Base64.decode(text), !der.isEmpty else {
                throw VerificationError(.invalidCertificate, "x5c[\(index)] is not canonical base64")
            }
            certificates.append(der)
        }
        return JWSHeader(x5c: certificates)
    }
}
