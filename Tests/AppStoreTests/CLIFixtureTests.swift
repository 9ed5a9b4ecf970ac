import Foundation
import Testing
@_spi(Testing) @testable import AppStore

/// Fixtures made by `Resources/make-fixtures.sh` with the openssl CLI: an independent signer and
/// certificate builder cross-check the verifier (signing input, r‖s conversion, OIDs, strict profile).
@Suite struct CLIFixtureTests {
    private func verifier() throws -> SignedDataVerifier {
        let root = try X509Certificate(pem: try Fixtures.text("cli/root.pem"))
        return try SignedDataVerifier(configuration: .init(trustAnchors: [root], bundleIds: ["com.example.cli"], environment: .sandbox))
    }

    @Test func opensslSignedTransactionVerifies() throws {
        let transaction = try verifier().verifyAndDecodeTransaction(try Fixtures.text("cli/valid.jws")).get()
        #expect(transaction.transactionId == "3000000000000001")
        #expect(transaction.type == .nonConsumable)
        #expect(transaction.price == 4990)
        #expect(transaction.storefront == "FRA")
    }

    @Test func opensslDERSignatureIsRejected() throws {
        #expect(try verifier().verifyAndDecodeTransaction(try Fixtures.text("cli/der-signature.jws")).code == "invalid-signature-format")
    }

    @Test func opensslChainsWithoutAppleOIDsAreRejected() throws {
        #expect(try verifier().verifyAndDecodeTransaction(try Fixtures.text("cli/leaf-without-oid.jws")).code == "missing-apple-oid")
        #expect(try verifier().verifyAndDecodeTransaction(try Fixtures.text("cli/intermediate-without-oid.jws")).code == "missing-apple-oid")
    }

    @Test func opensslChainIsNotTrustedByDefault() throws {
        let verifier = try SignedDataVerifier(configuration: .init(environment: .sandbox))
        #expect(verifier.verifyAndDecodeTransaction(try Fixtures.text("cli/valid.jws")).code == "untrusted-root")
    }
}
