import Foundation
import Observability

/// The decoded header and claims of an App Store Server API bearer token (an ES256 JWT).
///
/// Built by ``AppStoreBearerTokenProvider``; decoded by whoever must check one: the fake App
/// Store (which answers 401 like Apple when a check fails) and the tests. Apple's rules, from
/// "Generating JSON Web Tokens for API requests": header `alg: ES256`, `kid`, `typ: JWT`; claims
/// `iss` (issuer id), `iat` and `exp` in UNIX seconds at most 60 minutes apart,
/// `aud: appstoreconnect-v1` and `bid` (bundle id).
public struct AppStoreBearerToken: Sendable, Hashable {
    /// The audience Apple requires.
    public static let audience = "appstoreconnect-v1"
    /// The longest lifetime Apple accepts (`exp - iat`).
    public static let maximumLifetimeSeconds: Int64 = 3600

    /// The compact token as sent after `Bearer `.
    public let token: String
    /// Header `alg`.
    public let algorithm: String?
    /// Header `kid`.
    public let keyId: String?
    /// Header `typ`.
    public let type: String?
    /// Claim `iss`.
    public let issuer: String?
    /// Claim `iat`, UNIX seconds.
    public let issuedAt: Int64?
    /// Claim `exp`, UNIX seconds.
    public let expiresAt: Int64?
    /// Claim `aud`.
    public let audience: String?
    /// Claim `bid`.
    public let bundleId: String?

    /// Decodes a compact JWT without checking anything but its syntax.
    /// - Parameter token: `header.payload.signature` (base64url, strict JSON in both parts).
    /// - Returns: `nil` when the token is not a three-part JWT with JSON object header and claims.
    public init?(parsing token: String) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[2].isEmpty,
              let header = Self.object(String(parts[0])), let claims = Self.object(String(parts[1])) else { return nil }
        self.token = token
        algorithm = Self.string(header["alg"])
        keyId = Self.string(header["kid"])
        type = Self.string(header["typ"])
        issuer = Self.string(claims["iss"])
        issuedAt = Self.integer(claims["iat"])
        expiresAt = Self.integer(claims["exp"])
        audience = Self.string(claims["aud"])
        bundleId = Self.string(claims["bid"])
    }

    /// Checks the token as Apple does, returning the first problem.
    ///
    /// - Parameters:
    ///   - publicKey: The key the token must be signed with.
    ///   - keyId: The expected `kid`.
    ///   - issuerId: The expected `iss`, or `nil` to accept any.
    ///   - bundleId: The expected `bid`.
    ///   - now: The current time.
    ///   - leeway: Clock skew tolerated on `iat` and `exp`.
    /// - Returns: `nil` when acceptable, else a short description (never the token).
    public func problem(publicKey: AppStoreJWTSigner.PublicKey, keyId expectedKeyId: String, issuerId: String?,
                        bundleId expectedBundleId: String, now: Date, leeway: Int64 = 60) -> String? {
        guard algorithm == "ES256" else { return "header alg must be ES256" }
        guard type == "JWT" else { return "header typ must be JWT" }
        guard keyId == expectedKeyId else { return "header kid does not name the configured key" }
        guard publicKey.isValidSignature(of: token) else { return "ES256 signature does not verify" }
        if let issuerId, issuer != issuerId { return "claim iss is not the configured issuer id" }
        guard audience == Self.audience else { return "claim aud must be \(Self.audience)" }
        guard bundleId == expectedBundleId else { return "claim bid is not the configured bundle id" }
        guard let issuedAt, let expiresAt else { return "claims iat and exp are required" }
        guard expiresAt > issuedAt, expiresAt - issuedAt <= Self.maximumLifetimeSeconds else {
            return "exp must be after iat and at most 60 minutes later"
        }
        let seconds = Int64(now.timeIntervalSince1970.rounded(.down))
        guard issuedAt <= seconds + leeway else { return "iat is in the future" }
        guard expiresAt + leeway > seconds else { return "token expired" }
        return nil
    }

    /// The header and claims JSON Apple expects, in a fixed member order.
    static func json(keyId: String, issuerId: String, bundleId: String,
                     issuedAt: Int64, expiresAt: Int64) -> (header: [UInt8], claims: [UInt8]) {
        let header = "{\"alg\":\"ES256\",\"kid\":\(JSONString.quoted(keyId)),\"typ\":\"JWT\"}"
        let claims = "{\"iss\":\(JSONString.quoted(issuerId)),\"iat\":\(issuedAt),\"exp\":\(expiresAt),"
            + "\"aud\":\"\(audience)\",\"bid\":\(JSONString.quoted(bundleId))}"
        return (Array(header.utf8), Array(claims.utf8))
    }

    private static func object(_ segment: String) -> JSONObject? {
        guard let bytes = Base64URL.decode(segment),
              case .object(let object)? = try? JSONParser.parse(bytes, maxDepth: 4) else { return nil }
        return object
    }

    private static func string(_ value: JSONValue?) -> String? {
        if case .string(let string)? = value { return string }
        return nil
    }

    private static func integer(_ value: JSONValue?) -> Int64? {
        if case .integer(let integer)? = value { return integer }
        return nil
    }
}
