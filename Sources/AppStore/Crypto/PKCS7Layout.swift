/// The outer layout of a DER-encoded PKCS#7 receipt, found without OpenSSL so that a receipt whose
/// certificates were already verified never has them parsed again.
///
/// Why: OpenSSL 3.0 decodes every embedded certificate's public key through its provider decoder
/// machinery, a few hundred microseconds per certificate on this project's machines; App Store
/// receipts embed three, which would dominate a warm verification. With this layout the verifier
/// keys its chain cache on the exact bytes of the `certificates` field plus the signer's
/// `IssuerAndSerialNumber` and, on a hit, hands OpenSSL the same SignedData re-encoded without
/// the certificates: `d2i_PKCS7` then only parses the envelope and the content, and
/// `PKCS7_verify` checks the signature with the cached, already verified leaf (see
/// ``PKCS7Container/verifySignature(signer:)``). Nothing else is taken from this walk: every
/// other byte is passed to OpenSSL unchanged.
///
/// ```
/// ContentInfo ::= SEQUENCE { contentType OBJECT IDENTIFIER, content [0] EXPLICIT SignedData }
/// SignedData  ::= SEQUENCE { version, digestAlgorithms SET, contentInfo SEQUENCE,
///                            certificates [0] IMPLICIT OPTIONAL, crls [1] IMPLICIT OPTIONAL, signerInfos SET }
/// ```
/// Only DER (definite lengths) is handled; BER input such as Xcode's receipts yields `nil`, and
/// the caller falls back to parsing everything with OpenSSL.
struct PKCS7Layout {
    /// The exact encoding of the `certificates` field (identifier, length and contents).
    let certificates: ArraySlice<UInt8>
    /// How many certificates that field holds, counted without parsing any of them: a receipt
    /// padded with hundreds of certificates is refused before OpenSSL decodes each one (tens of
    /// milliseconds for a 200 KB receipt, against well under one for a genuine one).
    let certificateCount: Int
    /// The exact encoding of the only SignerInfo's `sid` (issuer and serial of the signer).
    let signerIdentifier: ArraySlice<UInt8>
    /// The same ContentInfo, re-encoded without the `certificates` field.
    let withoutCertificates: [UInt8]

    /// Splits a receipt.
    /// - Parameter der: The decoded receipt.
    /// - Returns: The layout, or `nil` when the input is not DER of the expected shape (including
    ///   when it has no certificates field or not exactly one SignerInfo).
    init?(der: [UInt8]) {
        do throws(VerificationError) {
            var top = DERReader(der)
            let contentInfo = try top.next(tag: DERReader.Tag.sequence, "ContentInfo")
            guard top.isAtEnd else { return nil }
            var outer = try top.reader(over: contentInfo)
            let contentType = try outer.next(tag: 0x06, "contentType")
            let explicit = try outer.next(tag: 0xA0, "content")
            guard outer.isAtEnd else { return nil }
            var wrapper = try outer.reader(over: explicit)
            let signedData = try wrapper.next(tag: DERReader.Tag.sequence, "SignedData")
            guard wrapper.isAtEnd else { return nil }
            var fields = try wrapper.reader(over: signedData)
            var kept: [UInt8] = []
            kept.reserveCapacity(signedData.contentCount)
            var found: DERReader.Element?
            var last: DERReader.Element?
            var index = 0
            while !fields.isAtEnd {
                let field = try fields.next()
                if index >= 3 && field.tag == 0xA0 {
                    guard found == nil else { return nil }
                    found = field
                } else {
                    kept.append(contentsOf: fields.encoding(of: field))
                }
                last = field
                index += 1
            }
            guard let found, let signerInfos = last, signerInfos.tag == DERReader.Tag.set else { return nil }
            var infos = try fields.reader(over: signerInfos)
            let info = try infos.next(tag: DERReader.Tag.sequence, "SignerInfo")
            guard infos.isAtEnd else { return nil }
            var infoFields = try infos.reader(over: info)
            _ = try infoFields.next(tag: DERReader.Tag.integer, "SignerInfo version")
            let sid = try infoFields.next()
            let signedDataEncoding = DERReader.header(tag: DERReader.Tag.sequence, count: kept.count) + kept
            let explicitEncoding = DERReader.header(tag: 0xA0, count: signedDataEncoding.count) + signedDataEncoding
            let body = Array(outer.encoding(of: contentType)) + explicitEncoding
            var certificateList = try fields.reader(over: found)
            var count = 0
            while !certificateList.isAtEnd {
                _ = try certificateList.next()
                count += 1
            }
            certificateCount = count
            certificates = fields.encoding(of: found)
            signerIdentifier = infoFields.encoding(of: sid)
            withoutCertificates = DERReader.header(tag: DERReader.Tag.sequence, count: body.count) + body
        } catch {
            return nil
        }
    }
}
