import Foundation
import Testing
@_spi(Testing) @testable import AppStore

/// Fixed instants used across the tests (no test depends on the wall clock).
enum TestClock {
    /// 2024-01-01T00:00:00Z.
    static let validFrom = Date(timeIntervalSince1970: 1_704_067_200)
    /// 2026-01-01T00:00:00Z.
    static let validUntil = Date(timeIntervalSince1970: 1_767_225_600)
    /// 2025-01-01T00:00:00Z, inside the test PKI's window.
    static let inside = Date(timeIntervalSince1970: 1_735_689_600)
    static let insideMilliseconds: Int64 = 1_735_689_600_000
    /// A clock fixed at ``inside``.
    static let fixed: @Sendable () -> Date = { inside }
}

/// Locations of the shared vectors, resolved from this file: `<package>/Tests/AppStoreTests/` →
/// `<package>/../shared/vectors` (same relative place in the main repository).
enum Vectors {
    static let directory: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("shared/vectors")

    static var appleAvailable: Bool {
        FileManager.default.fileExists(atPath: directory.appendingPathComponent("apple/jws").path)
    }

    static var peerAvailable: Bool {
        FileManager.default.fileExists(atPath: directory.appendingPathComponent("peer-apple-python/mock_signed_data").path)
    }

    static let skipMessage = "SKIPPED: shared vectors not found at \(directory.path)"

    static func text(_ relativePath: String) throws -> String {
        let data = try Data(contentsOf: directory.appendingPathComponent(relativePath))
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func bytes(_ relativePath: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: directory.appendingPathComponent(relativePath)))
    }
}

/// Committed fixtures produced by `Resources/make-fixtures.sh` (openssl CLI).
enum Fixtures {
    static func text(_ name: String) throws -> String {
        let url = try #require(Bundle.module.url(forResource: "Resources/\(name)", withExtension: nil))
        return String(decoding: try Data(contentsOf: url), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// A test PKI plus helpers to build valid and forged JWS.
struct Harness {
    let pki: TestPKI

    init(options: TestPKI.Options = TestPKI.Options(), validFrom: Date = TestClock.validFrom,
         validUntil: Date = TestClock.validUntil, prefix: String = "harness") throws {
        pki = try TestPKI.generate(validFrom: validFrom, validUntil: validUntil, commonNamePrefix: prefix, options: options)
    }

    func verifier(bundleIds: Set<String> = ["com.example.app"], environment: AppStoreEnvironmentPolicy = .sandbox,
                  allowedTestEnvironments: Set<AppStoreEnvironment> = [], appAppleId: Int64? = nil,
                  trustAnchors: [X509Certificate]? = nil, limits: SignedDataVerifierConfiguration.Limits = .init(),
                  clock: @escaping @Sendable () -> Date = TestClock.fixed) throws -> SignedDataVerifier {
        try SignedDataVerifier(configuration: SignedDataVerifierConfiguration(
            trustAnchors: trustAnchors ?? [pki.root], bundleIds: bundleIds, appAppleId: appAppleId,
            environment: environment, allowedTestEnvironments: allowedTestEnvironments, limits: limits), clock: clock)
    }

    /// A transaction payload as JSON text, with members replaced or removed.
    static func transactionJSON(_ overrides: [String: String?] = [:]) -> String {
        var members: [(String, String)] = [
            ("transactionId", "\"2000000000000002\""),
            ("originalTransactionId", "\"2000000000000001\""),
            ("webOrderLineItemId", "\"2000000000000003\""),
            ("bundleId", "\"com.example.app\""),
            ("productId", "\"com.example.app.pro.monthly\""),
            ("subscriptionGroupIdentifier", "\"21000000\""),
            ("purchaseDate", "1735689000000"),
            ("originalPurchaseDate", "1735600000000"),
            ("expiresDate", "1738367400000"),
            ("quantity", "1"),
            ("type", "\"Auto-Renewable Subscription\""),
            ("appAccountToken", "\"7e3fb20b-4cdb-47cc-936d-99d65f608138\""),
            ("inAppOwnershipType", "\"PURCHASED\""),
            ("signedDate", "\(TestClock.insideMilliseconds)"),
            ("environment", "\"Sandbox\""),
            ("transactionReason", "\"PURCHASE\""),
            ("storefront", "\"USA\""),
            ("storefrontId", "\"143441\""),
            ("price", "9990"),
            ("currency", "\"USD\""),
            ("appTransactionId", "\"704897469903383919\""),
        ]
        for (key, value) in overrides {
            if let index = members.firstIndex(where: { $0.0 == key }) {
                if let value { members[index].1 = value } else { members.remove(at: index) }
            } else if let value {
                members.append((key, value))
            }
        }
        return "{" + members.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
    }

    func signTransaction(_ overrides: [String: String?] = [:]) throws -> String {
        try pki.signer.sign(payloadJSON: Self.transactionJSON(overrides))
    }

    /// Signs a payload under an arbitrary header JSON with the leaf key.
    func sign(headerJSON: String, payloadJSON: String) throws -> String {
        try JWSSigner(key: pki.leafKey, headerJSON: Array(headerJSON.utf8)).sign(payloadJSON: payloadJSON)
    }

    /// `{"alg":"ES256","x5c":[…]}` with a custom `x5c` list and extra members.
    func headerJSON(x5c: [String]? = nil, alg: String = "\"ES256\"", extra: String = "") -> String {
        let list = (x5c ?? pki.chain).map { "\"\($0)\"" }.joined(separator: ",")
        return "{\"alg\":\(alg),\"x5c\":[\(list)]\(extra)}"
    }
}

extension VerificationResult {
    /// The rejection code, or `"valid"`.
    var code: String {
        switch self {
        case .valid: "valid"
        case .invalid(let error): error.reason.code
        }
    }
}

/// Replaces one segment (0, 1, 2) of a compact JWS.
func replacingSegment(_ jws: String, _ index: Int, with segment: String) -> String {
    var parts = jws.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    parts[index] = segment
    return parts.joined(separator: ".")
}

func segment(_ jws: String, _ index: Int) -> String {
    String(jws.split(separator: ".", omittingEmptySubsequences: false)[index])
}
