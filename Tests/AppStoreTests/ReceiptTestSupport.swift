import Foundation
import Testing
@_spi(Testing) @testable import AppStore

/// The real Apple receipts of `../shared/vectors/apple/receipts` (README section 3) and the
/// committed test-CA receipts of `Resources/receipts` (`make-receipt-fixtures.sh`).
enum ReceiptVectors {
    /// The README's "now" (2026-11-30T00:00:00Z): every real receipt leaf has expired by then.
    static let now = Date(timeIntervalSince1970: 1_795_996_800)
    /// A clock fixed at ``now``.
    static let clock: @Sendable () -> Date = { now }

    static let appleReceipts = [
        "r1-sandbox-g5-2025-dev.bonzer.weeka.app",
        "r2-production-g5-2024-org.getpure.pure-iphone",
        "r3-sandbox-wwdrg1-sha1-2020-com.nutcall.alert",
        "r4-production-wwdrg1-sha1-2015-com.mustafadur.Kargotakip",
        "r5-sandbox-g5-2025-com.XMCodey.apple.ClipTrace",
    ]
    static let xcodeReceipt = "r6-xcode-storekit-testing-NOT-apple-signed"

    static var available: Bool {
        FileManager.default.fileExists(atPath: Vectors.directory.appendingPathComponent("apple/receipts").path)
    }

    static func base64(_ name: String) throws -> String {
        try Vectors.text("apple/receipts/\(name).b64")
    }

    static func parsed(_ name: String) throws -> [String: Any] {
        let data = try Data(contentsOf: Vectors.directory.appendingPathComponent("apple/receipts/\(name).parsed.json"))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// A committed test-CA fixture (`Resources/receipts/<name>.b64`).
    static func fixture(_ name: String) throws -> String {
        try Fixtures.text("receipts/\(name).b64")
    }

    /// The test CA's root (`Resources/receipts/root.pem`).
    static func testRoot() throws -> X509Certificate {
        try X509Certificate(pem: try Fixtures.text("receipts/root.pem"))
    }

    /// A verifier trusting the test CA (its 2025-01-01 receipts verify at their creation date).
    static func testVerifier(bundleIds: Set<String> = ["com.example.receipts"],
                             configure: (inout AppReceiptVerifierConfiguration) throws -> Void = { _ in }) throws -> AppReceiptVerifier {
        var configuration = AppReceiptVerifierConfiguration(trustAnchors: [try testRoot()], bundleIds: bundleIds)
        try configure(&configuration)
        return try AppReceiptVerifier(configuration: configuration, clock: clock)
    }

    /// Parses the JSON date forms of `*.parsed.json` (`…Z` and Xcode's `…+0100`); `""` is nil.
    static func date(_ value: Any?) -> Date?? {
        guard let text = value as? String else { return .none }
        if text.isEmpty { return .some(nil) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = text.hasSuffix("Z") ? "yyyy-MM-dd'T'HH:mm:ss'Z'" : "yyyy-MM-dd'T'HH:mm:ssZ"
        return .some(formatter.date(from: text))
    }
}

extension VerificationResult {
    /// The rejection code, or `"valid"` (receipt tests).
    var receiptCode: String {
        switch self {
        case .valid: "valid"
        case .invalid(let error): error.reason.code
        }
    }
}

/// Base64 of bytes (test-side helper over the module's encoder).
func receiptBase64(_ bytes: [UInt8]) -> String { Base64.encode(bytes) }

/// The DER bytes of a base64 receipt.
func receiptDER(_ base64: String) throws -> [UInt8] { try #require(Base64.decode(base64)) }

/// First index of `needle` in `haystack`.
func receiptIndex(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
    guard !needle.isEmpty, needle.count <= haystack.count else { return nil }
    for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
        if haystack[start..<(start + needle.count)].elementsEqual(needle) { return start }
    }
    return nil
}
