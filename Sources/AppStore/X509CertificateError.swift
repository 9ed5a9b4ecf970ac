/// Why a certificate could not be loaded by ``X509Certificate``.
public struct X509CertificateError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A stable kebab-case code: `unreadable-file`, `invalid-pem`, `invalid-der`, `no-certificate`.
    public let code: String
    /// A short explanation.
    public let detail: String

    init(_ code: String, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    /// `code: detail`.
    public var description: String { "\(code): \(detail)" }

    static func unreadableFile(_ detail: String) -> Self { Self("unreadable-file", detail) }
    static func invalidPEM(_ detail: String) -> Self { Self("invalid-pem", detail) }
    static func invalidDER(_ detail: String) -> Self { Self("invalid-der", detail) }
    static func noCertificate(_ detail: String) -> Self { Self("no-certificate", detail) }
}
