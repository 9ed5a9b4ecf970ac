import COpenSSL
import Foundation

/// Builds X.509 v3 certificates with the OpenSSL API (no `openssl` process), for ``TestPKI``.
enum CertificateBuilder {
    /// What to put in one certificate.
    struct Specification {
        var commonName: String
        var subjectKey: EVPKey
        /// Issuer certificate and key; `nil` for a self-signed certificate.
        var issuer: (certificate: X509Certificate, key: EVPKey)?
        var isCA: Bool
        var pathLength: Int?
        var keyUsage: String
        /// Dotted OIDs added as non-critical extensions whose value is DER NULL (Apple's marker shape).
        var markerOIDs: [String]
        var validFrom: Date
        var validUntil: Date
    }

    /// Creates, signs (ECDSA with SHA-256) and DER-encodes a certificate.
    /// - Throws: ``OpenSSLError`` when an OpenSSL step fails.
    static func make(_ spec: Specification) throws -> X509Certificate {
        defer { ERR_clear_error() }
        guard let x509 = X509_new() else { throw OpenSSLError("X509_new") }
        defer { X509_free(x509) }
        guard X509_set_version(x509, 2) == 1 else { throw OpenSSLError("X509_set_version") }
        var serial: Int64 = 0
        withUnsafeMutableBytes(of: &serial) { _ = RAND_bytes($0.baseAddress?.assumingMemoryBound(to: UInt8.self), 8) }
        guard ASN1_INTEGER_set_int64(X509_get_serialNumber(x509), (serial & Int64.max) | 1) == 1 else {
            throw OpenSSLError("ASN1_INTEGER_set_int64")
        }
        guard ASN1_TIME_set(X509_getm_notBefore(x509), time_t(spec.validFrom.timeIntervalSince1970.rounded(.down))) != nil,
              ASN1_TIME_set(X509_getm_notAfter(x509), time_t(spec.validUntil.timeIntervalSince1970.rounded(.down))) != nil else {
            throw OpenSSLError("ASN1_TIME_set")
        }
        guard X509_set_pubkey(x509, spec.subjectKey.pointer) == 1 else { throw OpenSSLError("X509_set_pubkey") }
        let name = X509_get_subject_name(x509)
        for (field, value) in [("C", "US"), ("O", "receiptd test PKI"), ("CN", spec.commonName)] {
            guard X509_NAME_add_entry_by_txt(name, field, MBSTRING_UTF8, value, -1, -1, 0) == 1 else {
                throw OpenSSLError("X509_NAME_add_entry_by_txt")
            }
        }
        let issuerPointer = spec.issuer?.certificate.pointer ?? x509
        guard X509_set_issuer_name(x509, X509_get_subject_name(issuerPointer)) == 1 else { throw OpenSSLError("X509_set_issuer_name") }

        var context = X509V3_CTX()
        X509V3_set_ctx(&context, issuerPointer, x509, nil, nil, 0)
        var basic = spec.isCA ? "critical,CA:TRUE" : "critical,CA:FALSE"
        if spec.isCA, let pathLength = spec.pathLength { basic += ",pathlen:\(pathLength)" }
        try addExtension(x509, &context, NID_basic_constraints, basic)
        try addExtension(x509, &context, NID_key_usage, "critical," + spec.keyUsage)
        try addExtension(x509, &context, NID_subject_key_identifier, "hash")
        if spec.issuer != nil { try addExtension(x509, &context, NID_authority_key_identifier, "keyid:always") }
        for oid in spec.markerOIDs { try addMarker(x509, oid: oid) }

        let signingKey = spec.issuer?.key ?? spec.subjectKey
        guard X509_sign(x509, signingKey.pointer, EVP_sha256()) > 0 else { throw OpenSSLError("X509_sign") }
        let length = i2d_X509(x509, nil)
        guard length > 0 else { throw OpenSSLError("i2d_X509") }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d_X509(x509, &cursor)
        }
        guard written == length else { throw OpenSSLError("i2d_X509") }
        return try X509Certificate(der: der)
    }

    private static func addExtension(_ x509: OpaquePointer, _ context: inout X509V3_CTX, _ nid: Int32, _ value: String) throws {
        guard let ext = X509V3_EXT_conf_nid(nil, &context, nid, value) else { throw OpenSSLError("X509V3_EXT_conf_nid(\(value))") }
        defer { X509_EXTENSION_free(ext) }
        guard X509_add_ext(x509, ext, -1) == 1 else { throw OpenSSLError("X509_add_ext") }
    }

    private static func addMarker(_ x509: OpaquePointer, oid: String) throws {
        guard let object = OBJ_txt2obj(oid, 1) else { throw OpenSSLError("OBJ_txt2obj(\(oid))") }
        defer { ASN1_OBJECT_free(object) }
        guard let value = ASN1_OCTET_STRING_new() else { throw OpenSSLError("ASN1_OCTET_STRING_new") }
        defer { ASN1_OCTET_STRING_free(value) }
        let derNull: [UInt8] = [0x05, 0x00]
        guard ASN1_OCTET_STRING_set(value, derNull, 2) == 1,
              let ext = X509_EXTENSION_create_by_OBJ(nil, object, 0, value) else {
            throw OpenSSLError("X509_EXTENSION_create_by_OBJ")
        }
        defer { X509_EXTENSION_free(ext) }
        guard X509_add_ext(x509, ext, -1) == 1 else { throw OpenSSLError("X509_add_ext") }
    }
}
