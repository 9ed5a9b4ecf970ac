import Foundation
import Testing
@_spi(Testing) @testable import AppStore

/// The notification verdicts of Apple's `app-store-server-library-python` test data
/// (`../shared/vectors/peer-apple-python/mock_signed_data/`, see its README). Apple's tests run
/// with strict X.509 checks off and `appAppleId` 1234; codes map as in ``PeerApplePythonTests``,
/// with `INVALID_APP_IDENTIFIER` → `bundle-id-mismatch` or `app-apple-id-mismatch`.
@Suite struct NotificationPeerApplePythonTests {
    static let base = "peer-apple-python/"
    /// Inside the test chains' validity (the date Apple's x509 tests use); `wrongBundleId` has no
    /// signedDate, so its chain is checked at this clock.
    static let clock: @Sendable () -> Date = { Date(timeIntervalSince1970: 1_761_962_975) }

    private func verifier(anchor: X509Certificate? = nil, environment: AppStoreEnvironmentPolicy = .sandbox,
                          bundleIds: Set<String> = ["com.example"], appAppleId: Int64? = 1234,
                          strict: Bool = false) throws -> SignedDataVerifier {
        let root = try anchor ?? X509Certificate(der: Vectors.bytes(Self.base + "certs/testCA.der"))
        return try SignedDataVerifier(configuration: .init(
            trustAnchors: [root], bundleIds: bundleIds, appAppleId: appAppleId, environment: environment,
            strictCertificateChecks: strict), clock: Self.clock)
    }

    private func mock(_ name: String) throws -> String { try Vectors.text(Self.base + "mock_signed_data/" + name) }

    /// x5c[2] of a mock file: `testNotification` carries a second test root that Apple ignores.
    private func embeddedRoot(_ jws: String) throws -> X509Certificate {
        let header = try #require(Base64URL.decode(segment(jws, 0)))
        guard case .object(let object) = try JSONParser.parse(header, maxDepth: 8), case .array(let x5c)? = object["x5c"],
              case .string(let root) = x5c[2] else { throw VerificationError(.invalidJSON, "unexpected header") }
        return try X509Certificate(der: try #require(Base64.decode(root)))
    }

    @Test func testNotificationDecodes() throws {
        guard Vectors.peerAvailable else { print(Vectors.skipMessage); return }
        let jws = try mock("testNotification")
        // Stricter than Apple (OK): x5c[2] is not the configured testCA.der, and we compare it.
        #expect(try verifier().verifyAndDecodeNotification(jws).code == "untrusted-root")
        // Trusting the root the file embeds reproduces Apple's verdicts.
        let anchor = try embeddedRoot(jws)
        let notification = try verifier(anchor: anchor).verifyAndDecodeNotification(jws).get()   // Apple: OK, TEST
        #expect(notification.notificationType == .test)
        #expect(notification.rawNotificationType == "TEST")
        #expect(notification.notificationUUID == "9ad56bd2-0bc6-42e0-af24-fd996d87a1e6")
        #expect(notification.signedDate == Date(millisecondsSince1970: 1_681_314_324_000))
        #expect(notification.version == nil)
        #expect(notification.data?.appAppleId == 1234)
        #expect(notification.data?.environment == .sandbox)
        #expect(notification.data?.bundleId == "com.example")
        #expect(NotificationEffect(notification) == .informational(notificationType: "TEST", subtype: nil))
    }

    @Test func testNotificationWithProductionVerifiers() throws {
        guard Vectors.peerAvailable else { print(Vectors.skipMessage); return }
        let jws = try mock("testNotification")
        let anchor = try embeddedRoot(jws)
        // test_app_store_server_notification_decoding_production → INVALID_ENVIRONMENT.
        #expect(try verifier(anchor: anchor, environment: .production).verifyAndDecodeNotification(jws).code
                == "environment-mismatch")
        // test_wrong_app_apple_id_for_server_notification (appAppleId 1235) → INVALID_APP_IDENTIFIER.
        #expect(try verifier(anchor: anchor, environment: .production, appAppleId: 1235).verifyAndDecodeNotification(jws).code
                == "app-apple-id-mismatch")
        // Apple's library default, strict X.509 on: VERIFICATION_FAILURE (test certificates lack key identifiers).
        #expect(try verifier(anchor: anchor, strict: true).verifyAndDecodeNotification(jws).code == "invalid-chain")
    }

    @Test func wrongBundleIdNotification() throws {
        guard Vectors.peerAvailable else { print(Vectors.skipMessage); return }
        let jws = try mock("wrongBundleId")
        // test_wrong_bundle_id_for_server_notification (bundle com.examplex) → INVALID_APP_IDENTIFIER.
        #expect(try verifier(bundleIds: ["com.examplex"]).verifyAndDecodeNotification(jws).code == "bundle-id-mismatch")
        // With the matching bundle, Apple reports INVALID_ENVIRONMENT: data has no environment.
        #expect(try verifier(bundleIds: ["com.example.wrong"]).verifyAndDecodeNotification(jws).code == "environment-mismatch")
        // Without signedDate the chain was checked at the clock: a clock after the test chain expired fails.
        let late = try SignedDataVerifier(configuration: .init(
            trustAnchors: [X509Certificate(der: Vectors.bytes(Self.base + "certs/testCA.der"))], bundleIds: ["com.example.wrong"],
            environment: .any, strictCertificateChecks: false), clock: { Date(timeIntervalSince1970: 2_280_946_846) })
        #expect(late.verifyAndDecodeNotification(jws).code == "certificate-expired")
    }

    @Test func otherMockFilesAreNotNotifications() throws {
        guard Vectors.peerAvailable else { print(Vectors.skipMessage); return }
        // A transaction or renewal info is no notification: notificationType is missing.
        #expect(try verifier().verifyAndDecodeNotification(mock("renewalInfo")).code == "missing-field")
        #expect(try verifier().verifyAndDecodeNotification(mock("missingX5CHeaderClaim")).code == "missing-x5c")
        #expect(try verifier().verifyAndDecodeNotification(mock("legacyTransaction")).code == "malformed-jws")
        #expect(try verifier().verifyAndDecodeNotification("a.b.c.d").code == "malformed-jws")
    }
}
