import AppStore

/// The pipeline's digest (`payloadSHA256`, event ids): OpenSSL's, through the `AppStore` module
/// that owns OpenSSL (``SHA256Digest``), so files here need not import it.
public enum SHA256 {
    /// SHA-256 of `bytes`.
    public static func hash(_ bytes: [UInt8]) -> [UInt8] { SHA256Digest.hash(bytes) }
    /// Lower-case hex SHA-256 of `bytes`.
    public static func hexDigest(_ bytes: [UInt8]) -> String { SHA256Digest.hexDigest(bytes) }
    /// Lower-case hex SHA-256 of the UTF-8 encoding of `string`.
    public static func hexDigest(_ string: String) -> String { SHA256Digest.hexDigest(string) }
}
