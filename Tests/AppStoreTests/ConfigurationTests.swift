import Foundation
import Testing
@_spi(Testing) @testable import AppStore

@Suite struct ConfigurationTests {
    @Test func defaultsTrustAppleRootG3InProduction() throws {
        let configuration = SignedDataVerifierConfiguration()
        #expect(configuration.trustAnchors == [AppleRootCertificates.appleRootCAG3])
        #expect(configuration.environment == .production)
        #expect(configuration.bundleIds.isEmpty)
        #expect(configuration.allowedTestEnvironments.isEmpty)
        #expect(configuration.strictCertificateChecks)
        #expect(configuration.limits.chainCacheCapacity == 64)
        try configuration.validate()
    }

    @Test func rejectsImpossibleValues() throws {
        func key(_ change: (inout SignedDataVerifierConfiguration) -> Void) -> String? {
            var configuration = SignedDataVerifierConfiguration()
            change(&configuration)
            do {
                try configuration.validate()
                return nil
            } catch let error as AppStoreConfigurationError {
                return error.key
            } catch {
                return "unexpected"
            }
        }
        #expect(key { $0.trustAnchors = [] } == "trustAnchors")
        #expect(key { $0.bundleIds = ["com.example", ""] } == "bundleIds")
        #expect(key { $0.appAppleId = 0 } == "appAppleId")
        #expect(key { $0.allowedTestEnvironments = [.sandbox] } == "allowedTestEnvironments")
        #expect(key { $0.limits.maxJWSBytes = 0 } == "limits.maxJWSBytes")
        #expect(key { $0.limits.maxHeaderBytes = 70_000 } == "limits.maxHeaderBytes")
        #expect(key { $0.limits.maxPayloadBytes = -1 } == "limits.maxPayloadBytes")
        #expect(key { $0.limits.maxJSONDepth = 0 } == "limits.maxJSONDepth")
        #expect(key { $0.limits.latestDate = $0.limits.earliestDate } == "limits.earliestDate")
        #expect(key { $0.limits.chainCacheCapacity = 0 } == "limits.chainCacheCapacity")
        #expect(key { $0.limits.rejectedHeaderCacheCapacity = 0 } == "limits.rejectedHeaderCacheCapacity")
        #expect(key { $0.allowedTestEnvironments = [.xcode, .localTesting] } == nil)
        #expect(throws: AppStoreConfigurationError.self) {
            try SignedDataVerifier(configuration: .init(trustAnchors: []))
        }
    }

    @Test func reasonCodesAreStableAndUnique() {
        let codes = VerificationReason.allReasons.map(\.code)
        #expect(Set(codes).count == codes.count)
        #expect(codes.allSatisfy { $0.allSatisfy { $0.isLowercase || $0 == "-" || $0.isNumber } })
        for code in ["malformed-jws", "invalid-base64url", "invalid-json", "duplicate-json-member", "json-too-deep", "too-large",
                     "unsupported-algorithm", "forbidden-header", "missing-x5c", "invalid-chain-length", "invalid-certificate",
                     "untrusted-root", "missing-apple-oid", "invalid-chain", "certificate-expired", "certificate-not-yet-valid",
                     "invalid-signature-format", "invalid-signature", "invalid-date", "missing-field", "invalid-field",
                     "bundle-id-mismatch", "environment-mismatch", "app-apple-id-mismatch"] {
            let reason = VerificationReason(code: code)
            #expect(reason?.code == code)
            #expect(reason?.isRetryable == false)
        }
        #expect(VerificationReason.retryableVerificationFailure.isRetryable)
        #expect(VerificationReason(code: "nope") == nil)
        #expect(VerificationError(.invalidChain, "x").description == "invalid-chain: x")
    }
}
