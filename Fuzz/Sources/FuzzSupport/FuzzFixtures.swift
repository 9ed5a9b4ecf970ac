import Foundation
@_spi(Fuzzing) import AppStore

/// The repository's test fixtures, read from the checkout the fuzz package lives in.
///
/// - `Tests/AppStoreTests/Resources/cli/`: openssl-made JWS (valid, DER signature, missing OIDs)
///   and their root, which the fuzz verifier trusts.
/// - `Tests/AppStoreTests/Resources/receipts/`: openssl-made PKCS#7 receipts
///   (`make-receipt-fixtures.sh`: valid, SHA-1, signed attributes, Xcode type, and one per
///   rejection) and their root, which the receipt fuzz verifier trusts.
/// - `../shared/vectors/` (optional, as in the tests): Apple-signed JWS and receipts, and the
///   JWS of Apple's Python library tests. Missing vectors only mean fewer seeds.
public enum FuzzFixtures {
    /// The repository root: `<root>/Fuzz/Sources/FuzzSupport/FuzzFixtures.swift`.
    public static let repository: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `../shared/vectors`, resolved like the tests do.
    public static let sharedVectors: URL = repository.deletingLastPathComponent().appendingPathComponent("shared/vectors")

    /// The openssl CLI fixtures.
    public static let cliDirectory: URL = repository.appendingPathComponent("Tests/AppStoreTests/Resources/cli")

    /// `cli/valid.jws`: a valid transaction (`com.example.cli`, Sandbox) under ``cliRoot``.
    public static let cliValidJWS: String = {
        guard let text = text(cliDirectory.appendingPathComponent("valid.jws")) else {
            fatalError("missing fixture \(cliDirectory.path)/valid.jws")
        }
        return text
    }()

    /// `cli/root.pem`, the root of the openssl CLI fixtures.
    public static let cliRoot: X509Certificate = {
        guard let pem = text(cliDirectory.appendingPathComponent("root.pem")), let root = try? X509Certificate(pem: pem) else {
            fatalError("missing or invalid fixture \(cliDirectory.path)/root.pem")
        }
        return root
    }()

    /// The openssl CLI receipt fixtures.
    public static let receiptDirectory: URL = repository.appendingPathComponent("Tests/AppStoreTests/Resources/receipts")

    /// `receipts/root.pem`, the root of the openssl CLI receipt fixtures.
    public static let receiptRoot: X509Certificate = {
        guard let pem = text(receiptDirectory.appendingPathComponent("root.pem")), let root = try? X509Certificate(pem: pem) else {
            fatalError("missing or invalid fixture \(receiptDirectory.path)/root.pem")
        }
        return root
    }()

    /// Every `receipts/*.b64` (valid and invalid, base64 PKCS#7), by file name.
    public static var receiptFixtures: [(name: String, text: String)] {
        named(files(in: receiptDirectory, extension: "b64"))
    }

    /// Every `cli/*.jws` (valid and invalid), by file name.
    public static var cliJWS: [(name: String, text: String)] {
        named(files(in: cliDirectory, extension: "jws"))
    }

    /// Apple-signed JWS (`apple/jws/*.jws`: transactions, renewal infos, notifications), when present.
    public static var appleJWS: [(name: String, text: String)] {
        named(files(in: sharedVectors.appendingPathComponent("apple/jws"), extension: "jws"))
    }

    /// JWS from Apple's Python library tests (`peer-apple-python/mock_signed_data/*`), when present.
    public static var peerJWS: [(name: String, text: String)] {
        named(files(in: sharedVectors.appendingPathComponent("peer-apple-python/mock_signed_data"), extension: nil))
    }

    /// Base64 StoreKit 1 receipts (`apple/receipts/*.b64`), when present, as text.
    public static var appleReceipts: [(name: String, text: String)] {
        named(files(in: sharedVectors.appendingPathComponent("apple/receipts"), extension: "b64"))
    }

    /// The JWS every genuinely signed input must be one of (for the "never verifies unless
    /// unchanged" invariant): the valid CLI fixture and all Apple-signed vectors.
    public static let genuineJWS: Set<String> = Set([cliValidJWS] + appleJWS.map(\.text) + peerJWS.map(\.text))

    /// The three `.`-separated segments of a compact JWS (fewer or more when malformed).
    public static func segments(_ jws: String) -> [String] {
        jws.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    }

    /// Decodes one canonical base64url segment.
    public static func decodeSegment(_ segment: String) -> [UInt8]? {
        Array(segment.utf8).withUnsafeBufferPointer { FuzzingEntryPoints.decodeBase64URL($0) }
    }

    /// A file's text with surrounding whitespace removed, or `nil` when unreadable.
    public static func text(_ url: URL) -> String? {
        guard let data = FileManager.default.contents(atPath: url.path) else { return nil }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Regular files in a directory, sorted, optionally only those with an extension.
    public static func files(in directory: URL, extension wanted: String?) -> [URL] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.sorted().map { directory.appendingPathComponent($0) }.filter { url in
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue else { return false }
            return wanted.map { url.pathExtension == $0 } ?? !url.lastPathComponent.hasPrefix(".")
        }
    }

    private static func named(_ urls: [URL]) -> [(name: String, text: String)] {
        urls.compactMap { url in text(url).map { (url.deletingPathExtension().lastPathComponent, $0) } }
    }
}
