import Foundation
import Testing
@_spi(Testing) @testable import AppStore

/// The embedded Apple Inc. Root, the receipt configuration's validation, and the new reason codes.
@Suite struct ReceiptTrustTests {
    @Test func appleIncRootIsTheRealOne() throws {
        let root = AppleRootCertificates.appleIncRoot
        #expect(root.sha256Fingerprint == "B0B1730ECBC7FF4505142C49F1295E6EDA6BCAED7E2C68C5BE91B5A11001F024")
        #expect(root.subject.contains("CN=Apple Root CA"))
        #expect(root.notBefore == Date(timeIntervalSince1970: 1_146_001_236))   // 2006-04-25T21:40:36Z
        #expect(root.notAfter == Date(timeIntervalSince1970: 2_054_670_036))    // 2035-02-09T21:40:36Z
        #expect(root.derBytes.count == 1215)
        guard Vectors.appleAvailable else { print(Vectors.skipMessage); return }
        #expect(root.derBytes == (try Vectors.bytes("apple/certs/AppleIncRootCertificate.cer")))
    }

    @Test func configurationIsValidated() throws {
        func key(_ change: (inout AppReceiptVerifierConfiguration) -> Void) -> String? {
            var configuration = AppReceiptVerifierConfiguration()
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
        #expect(key { _ in } == nil)
        #expect(key { $0.trustAnchors = [] } == "trustAnchors")
        #expect(key { $0.bundleIds = [""] } == "bundleIds")
        #expect(key { $0.allowedTestEnvironments = [.sandbox] } == "allowedTestEnvironments")
        #expect(key { $0.limits.maxReceiptBytes = 0 } == "limits.maxReceiptBytes")
        #expect(key { $0.limits.maxCertificates = 0 } == "limits.maxCertificates")
        #expect(key { $0.limits.chainCacheCapacity = 0 } == "limits.chainCacheCapacity")
        #expect(key { $0.limits.rejectedChainCacheCapacity = 1_000_000 } == "limits.rejectedChainCacheCapacity")
        #expect(throws: AppStoreConfigurationError.self) { try AppReceiptVerifier(configuration: .init(trustAnchors: [])) }
        let defaults = AppReceiptVerifierConfiguration()
        #expect(defaults.environment == .any && defaults.validityDate == .receiptCreationDate && defaults.strictCertificateChecks)
    }

    @Test func receiptReasonCodesExist() {
        for code in ["invalid-base64", "invalid-receipt", "receipt-signature-invalid"] {
            let reason = VerificationReason(code: code)
            #expect(reason?.code == code)
            #expect(reason?.isRetryable == false)
            #expect(VerificationReason.allReasons.contains { $0.code == code })
        }
        #expect(VerificationReason.invalidReceipt.code == "invalid-receipt")
        #expect(VerificationReason.receiptSignatureInvalid.code == "receipt-signature-invalid")
        #expect(VerificationReason.invalidBase64.code == "invalid-base64")
    }

    @Test func receiptTypesMapToEnvironments() {
        #expect(AppReceiptType.production.environment == .production)
        #expect(AppReceiptType.productionVPP.environment == .production)
        #expect(AppReceiptType.productionSandbox.environment == .sandbox)
        #expect(AppReceiptType.productionVPPSandbox.environment == .sandbox)
        #expect(AppReceiptType.xcode.environment == .xcode)
        var receipt = AppReceipt()
        receipt.rawReceiptType = "SomethingNew"
        #expect(receipt.receiptType == nil && receipt.environment == nil)
    }
}
