import Foundation
import AppStore

/// The app receipt verifiers `FuzzReceipt` uses, the receipts that may verify, and the
/// invariants every answer must satisfy.
///
/// Trust anchors: the openssl CLI receipt root (`receipts/valid.b64` and its variants verify) and
/// Apple Inc. Root (Apple's real receipts verify at their creation date). Any bundle id, any
/// environment plus `Xcode`, the fixed clock of ``FuzzVerifier/now``: as many inputs as possible
/// get past the signature to the payload, dates and claims.
///
/// Two verifiers, because the verify stage has two paths: ``warm`` verified every genuine receipt
/// at start-up, so a mutant that keeps a genuine certificate set takes the cache-hit path (the
/// envelope re-encoded without certificates, the signature checked against the cached leaf); a
/// ``cold()`` one has an empty cache and parses and checks everything. Their verdicts must agree.
public enum FuzzReceiptVerifier {
    /// The verifier configuration (see the type's documentation).
    public static let configuration = AppReceiptVerifierConfiguration(
        trustAnchors: [FuzzFixtures.receiptRoot, AppleRootCertificates.appleIncRoot],
        bundleIds: [], environment: .any, allowedTestEnvironments: [.xcode])

    /// Every receipt the fixtures hold: the CLI fixtures and Apple's real receipts (including the
    /// 105 KB `r3`, which only the start-up verification reads), by name.
    public static var allReceipts: [(name: String, text: String)] {
        FuzzFixtures.receiptFixtures.map { ("cli-\($0.name)", $0.text) }
            + FuzzFixtures.appleReceipts.map { ("apple-\($0.name)", $0.text) }
    }

    private static let warmState: (verifier: AppReceiptVerifier, genuine: Set<AppReceipt>) = {
        let verifier = cold()
        var genuine = Set<AppReceipt>()
        for (_, text) in allReceipts {
            if case .valid(let receipt) = verifier.verifyAndDecodeAppReceipt(text) { genuine.insert(receipt) }
        }
        fuzzCheck(!genuine.isEmpty, "no fixture receipt verifies: the fuzz target would never reach a valid path")
        return (verifier, genuine)
    }()

    /// The shared verifier whose cache holds every genuine receipt's chain.
    public static var warm: AppReceiptVerifier { warmState.verifier }

    /// The decoded genuine receipts: a valid answer must be one of them, since any other signed
    /// content would be a forgery.
    public static var genuine: Set<AppReceipt> { warmState.genuine }

    /// A verifier with an empty chain cache.
    public static func cold() -> AppReceiptVerifier {
        do {
            return try AppReceiptVerifier(configuration: configuration, clock: { FuzzVerifier.now })
        } catch {
            fatalError("invalid fuzz receipt verifier configuration: \(error)")
        }
    }

    /// What ``AppReceiptVerifier`` may answer (its documentation, in check order).
    public static let verifierReasons: Set<VerificationReason> = [
        .tooLarge, .invalidBase64, .invalidReceipt, .receiptSignatureInvalid, .untrustedRoot, .invalidChain,
        .missingAppleOID, .invalidCertificate, .invalidField, .invalidDate, .certificateExpired,
        .certificateNotYetValid, .missingField, .bundleIdMismatch, .environmentMismatch,
    ]

    /// What ``ReceiptUtility/extractTransactionIds(appReceipt:limits:)`` may throw.
    public static let utilityReasons: Set<VerificationReason> = [.tooLarge, .invalidBase64, .invalidReceipt, .invalidField, .invalidDate]

    /// What the payload walker may throw.
    public static let payloadReasons: Set<VerificationReason> = [.invalidReceipt, .invalidField, .invalidDate]

    /// Rejections a warm verifier may answer from its cache instead of checking again.
    public static let cachedReasons: Set<VerificationReason> = [.untrustedRoot, .invalidChain, .missingAppleOID, .invalidCertificate]

    /// Receipt-level attribute types the model names (they never land in `otherAttributes`).
    public static let namedReceiptTypes: Set<Int64> = [0, 2, 3, 4, 5, 12, 17, 18, 19, 21]

    /// In-app attribute types the model names.
    public static let namedPurchaseTypes: Set<Int64> = [1701, 1702, 1703, 1704, 1705, 1706, 1707, 1708, 1711, 1712, 1713, 1719, 1721]

    /// The invariants of a rejection: a reason from `allowed`, final, with a short non-empty
    /// detail (details are fixed templates; 200 bytes leaves room for OpenSSL's error strings
    /// and would catch a detail that carried the input).
    /// - Parameters:
    ///   - error: The rejection.
    ///   - allowed: The reasons the entry point documents.
    ///   - entry: Which entry point answered, for the message.
    public static func checkRejection(_ error: VerificationError, allowed: Set<VerificationReason>, _ entry: String) {
        fuzzCheck(allowed.contains(error.reason), "\(entry): undocumented reason \(error)")
        fuzzCheck(!error.isRetryable, "\(entry): an offline check answered a retryable failure: \(error)")
        fuzzCheck(!error.detail.isEmpty && error.detail.utf8.count <= 200, "\(entry): empty or long detail: \(error.detail.prefix(300))")
    }

    /// The invariants of a decoded payload: named attribute types are decoded into the model,
    /// never left raw; a raw attribute's value reads as an INTEGER or as a string, never both
    /// (``ReceiptAttribute/integerValue`` and ``ReceiptAttribute/stringValue`` walk bytes nothing
    /// has validated).
    public static func checkDecoded(_ receipt: AppReceipt, _ entry: String) {
        for attribute in receipt.otherAttributes {
            fuzzCheck(!namedReceiptTypes.contains(attribute.type), "\(entry): attribute \(attribute.type) left raw")
            checkRaw(attribute, entry)
        }
        for purchase in receipt.inAppPurchases {
            for attribute in purchase.otherAttributes {
                fuzzCheck(!namedPurchaseTypes.contains(attribute.type), "\(entry): in-app attribute \(attribute.type) left raw")
                checkRaw(attribute, entry)
            }
        }
    }

    private static func checkRaw(_ attribute: ReceiptAttribute, _ entry: String) {
        fuzzCheck(attribute.integerValue == nil || attribute.stringValue == nil,
                  "\(entry): attribute \(attribute.type) reads as an INTEGER and as a string")
    }
}
