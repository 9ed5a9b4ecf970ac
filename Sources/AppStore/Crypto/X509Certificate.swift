import COpenSSL
import Foundation

/// An immutable X.509 certificate parsed by OpenSSL, identified by its exact DER bytes.
///
/// Used for trust anchors (``SignedDataVerifierConfiguration/trustAnchors``) and for the
/// certificates of a test PKI. Equality and hashing use ``derBytes``.
///
/// - Important: The instance owns one OpenSSL `X509` handle, freed on `deinit`. OpenSSL 3 guards
///   its lazily computed extension cache with a lock, so concurrent read-only use is safe.
public final class X509Certificate: @unchecked Sendable, Hashable, CustomStringConvertible {
    /// The `X509*`; owned, never exposed publicly.
    let pointer: OpaquePointer
    /// The exact DER encoding this certificate was created from.
    public let derBytes: [UInt8]
    /// SHA-256 of ``derBytes``.
    public let sha256Digest: [UInt8]
    /// Start of the validity period, seconds since 1970.
    let notBeforeSeconds: Int64
    /// End of the validity period, seconds since 1970.
    let notAfterSeconds: Int64

    /// Parses one DER-encoded certificate.
    /// - Parameter der: Exactly one DER certificate, with no trailing bytes.
    /// - Throws: ``X509CertificateError`` (`invalid-der`) when OpenSSL cannot parse it.
    public init(der: [UInt8]) throws {
        defer { ERR_clear_error() }
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress, buffer.count > 0 else { return nil }
            var cursor: UnsafePointer<UInt8>? = base
            guard let x509 = d2i_X509(nil, &cursor, buffer.count) else { return nil }
            guard cursor == base + buffer.count else {
                X509_free(x509)
                return nil
            }
            return x509
        }
        guard let parsed else { throw X509CertificateError.invalidDER("not a single DER certificate (\(der.count) bytes)") }
        guard let notBefore = X509Certificate.epochSeconds(X509_get0_notBefore(parsed)),
              let notAfter = X509Certificate.epochSeconds(X509_get0_notAfter(parsed)) else {
            X509_free(parsed)
            throw X509CertificateError.invalidDER("unreadable validity period")
        }
        self.pointer = parsed
        self.derBytes = der
        self.sha256Digest = SHA256Digest.hash(der)
        self.notBeforeSeconds = notBefore
        self.notAfterSeconds = notAfter
    }

    deinit {
        X509_free(pointer)
    }

    /// Parses a PEM document holding exactly one `CERTIFICATE` block.
    /// - Parameter pem: The PEM text.
    /// - Throws: ``X509CertificateError`` when there is not exactly one valid certificate.
    public convenience init(pem: String) throws {
        let blocks = try PEMDocument.certificateBlocks(in: Array(pem.utf8))
        guard blocks.count == 1 else { throw X509CertificateError.invalidPEM("expected one certificate, found \(blocks.count)") }
        try self.init(der: blocks[0])
    }

    /// Loads every certificate in a file: a PEM file with one or more `CERTIFICATE` blocks, or a
    /// single DER certificate.
    /// - Parameter path: The file path.
    /// - Returns: The certificates in file order (at least one).
    /// - Throws: ``X509CertificateError`` when the file is unreadable or holds no valid certificate.
    public static func load(path: String) throws -> [X509Certificate] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw X509CertificateError.unreadableFile("cannot read \(path)")
        }
        let bytes = [UInt8](data)
        if PEMDocument.looksLikePEM(bytes) {
            let blocks = try PEMDocument.certificateBlocks(in: bytes)
            guard !blocks.isEmpty else { throw X509CertificateError.noCertificate("no CERTIFICATE block in \(path)") }
            return try blocks.map { try X509Certificate(der: $0) }
        }
        return [try X509Certificate(der: bytes)]
    }

    /// SHA-256 of the DER bytes as 64 uppercase hex digits without separators
    /// (Apple Root CA - G3: `63343ABF…9179`).
    public var sha256Fingerprint: String {
        let digits = Array("0123456789ABCDEF".utf8)
        var hex: [UInt8] = []
        hex.reserveCapacity(64)
        for byte in sha256Digest {
            hex.append(digits[Int(byte >> 4)])
            hex.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: hex, as: UTF8.self)
    }

    /// The subject name in OpenSSL's one-line form, e.g. `/CN=Apple Root CA - G3/OU=…`.
    public var subject: String {
        var buffer = [CChar](repeating: 0, count: 512)
        guard X509_NAME_oneline(X509_get_subject_name(pointer), &buffer, Int32(buffer.count)) != nil else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Start of the validity period.
    public var notBefore: Date { Date(timeIntervalSince1970: Double(notBeforeSeconds)) }

    /// End of the validity period.
    public var notAfter: Date { Date(timeIntervalSince1970: Double(notAfterSeconds)) }

    /// The certificate in PEM form.
    public var pemString: String {
        let body = Base64.encode(derBytes)
        var lines = ["-----BEGIN CERTIFICATE-----"]
        var start = body.startIndex
        while start < body.endIndex {
            let end = body.index(start, offsetBy: 64, limitedBy: body.endIndex) ?? body.endIndex
            lines.append(String(body[start..<end]))
            start = end
        }
        lines.append("-----END CERTIFICATE-----")
        return lines.joined(separator: "\n") + "\n"
    }

    /// Subject and fingerprint.
    public var description: String { "X509Certificate(\(subject), sha256 \(sha256Fingerprint))" }

    /// Whether the certificate carries an extension with exactly this dotted OID.
    func hasExtension(oid: String) -> Bool {
        guard let object = OBJ_txt2obj(oid, 1) else { return false }
        defer { ASN1_OBJECT_free(object) }
        return X509_get_ext_by_OBJ(pointer, object, -1) >= 0
    }

    /// Calls `body` with the owned `X509*`; the pointer must not escape.
    func withUnsafeX509Pointer<R>(_ body: (OpaquePointer) throws -> R) rethrows -> R {
        try withExtendedLifetime(self) { try body(pointer) }
    }

    /// Two certificates are equal when their DER bytes are identical.
    public static func == (lhs: X509Certificate, rhs: X509Certificate) -> Bool {
        lhs.derBytes == rhs.derBytes
    }

    /// Hashes the DER bytes.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(derBytes)
    }

    /// Seconds since 1970 for an ASN1_TIME, without relying on the process time zone.
    private static func epochSeconds(_ time: UnsafePointer<ASN1_TIME>?) -> Int64? {
        guard let time else { return nil }
        var components = tm()
        guard ASN1_TIME_to_tm(time, &components) == 1 else { return nil }
        let days = daysFromCivil(year: Int64(components.tm_year) + 1900, month: Int64(components.tm_mon) + 1,
                                 day: Int64(components.tm_mday))
        return days * 86_400 + Int64(components.tm_hour) * 3600 + Int64(components.tm_min) * 60 + Int64(components.tm_sec)
    }

    /// Days since 1970-01-01 in the proleptic Gregorian calendar (H. Hinnant's algorithm).
    static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
