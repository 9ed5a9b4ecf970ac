/// The `Get Transaction Info` response (`TransactionInfoResponse`): one signed transaction.
///
/// The signed string is kept raw, because only the caller knows which ``SignedDataVerifier``
/// (trust anchors, bundle ids, environment policy) applies; ``verifiedTransaction(using:)``
/// is the one-line way to check it.
public struct TransactionInfoResponse: Sendable, Hashable {
    /// The transaction as a JWS, as Apple signed it.
    public var signedTransactionInfo: String
    /// The environment that answered (after any fallback).
    public var environment: AppStoreEnvironment

    /// Creates a response.
    /// - Parameters:
    ///   - signedTransactionInfo: The JWS.
    ///   - environment: The environment that answered.
    public init(signedTransactionInfo: String, environment: AppStoreEnvironment) {
        self.signedTransactionInfo = signedTransactionInfo
        self.environment = environment
    }

    init(body: [UInt8], environment: AppStoreEnvironment) throws(AppStoreServerAPIError) {
        let object = try ServerAPIJSON.object(body, environment: environment)
        self.init(signedTransactionInfo: try ServerAPIJSON.requiredString(object, "signedTransactionInfo", environment),
                  environment: environment)
    }

    /// Verifies and decodes the transaction.
    /// - Parameter verifier: The verifier configured for this app.
    /// - Returns: The decoded transaction, or why it was rejected.
    public func verifiedTransaction(using verifier: SignedDataVerifier) -> VerificationResult<JWSTransactionDecodedPayload> {
        verifier.verifyAndDecodeTransaction(signedTransactionInfo)
    }
}

/// One page of `Get Transaction History` (v2, `HistoryResponse`): up to 20 signed transactions of
/// the customer, with the `revision` token that asks for the next page while ``hasMore`` is true.
public struct HistoryResponse: Sendable, Hashable {
    /// Token for the next page (and, on the last page, for later incremental calls).
    public var revision: String?
    /// Whether more pages follow.
    public var hasMore: Bool
    /// The app's bundle id as Apple echoed it.
    public var bundleId: String?
    /// The app's App Store id.
    public var appAppleId: Int64?
    /// Raw `environment` member.
    public var rawEnvironment: String?
    /// The transactions as JWS.
    public var signedTransactions: [String]
    /// The environment that answered (pass it back for the next page).
    public var environment: AppStoreEnvironment

    init(body: [UInt8], environment: AppStoreEnvironment) throws(AppStoreServerAPIError) {
        let object = try ServerAPIJSON.object(body, environment: environment)
        do throws(VerificationError) {
            revision = try object.optionalString("revision")
            hasMore = try object.optionalBool("hasMore") ?? false
            bundleId = try object.optionalString("bundleId")
            appAppleId = try object.optionalInt64("appAppleId")
            rawEnvironment = try object.optionalString("environment")
            signedTransactions = try object.optionalStringArray("signedTransactions") ?? []
        } catch {
            throw ServerAPIJSON.invalid(error.detail, environment)
        }
        self.environment = environment
        if hasMore && revision == nil { throw ServerAPIJSON.invalid("hasMore without a revision", environment) }
    }

    /// Verifies and decodes every transaction of the page, in order.
    /// - Parameter verifier: The verifier configured for this app.
    /// - Returns: One result per signed transaction.
    public func verifiedTransactions(using verifier: SignedDataVerifier) -> [VerificationResult<JWSTransactionDecodedPayload>] {
        signedTransactions.map { verifier.verifyAndDecodeTransaction($0) }
    }
}

/// `Get All Subscription Statuses` (`StatusResponse`): for each subscription group, the latest
/// transaction and renewal info of each subscription the customer has.
public struct StatusResponse: Sendable, Hashable {
    /// Raw `environment` member.
    public var rawEnvironment: String?
    /// The app's bundle id as Apple echoed it.
    public var bundleId: String?
    /// The app's App Store id.
    public var appAppleId: Int64?
    /// One item per subscription group.
    public var data: [SubscriptionGroupIdentifierItem]
    /// The environment that answered.
    public var environment: AppStoreEnvironment

    /// A subscription group and its latest transactions.
    public struct SubscriptionGroupIdentifierItem: Sendable, Hashable {
        /// The group id.
        public var subscriptionGroupIdentifier: String?
        /// The latest transaction of each subscription in the group.
        public var lastTransactions: [LastTransactionsItem]
    }

    /// The latest state of one subscription.
    public struct LastTransactionsItem: Sendable, Hashable {
        /// Raw `status`; see ``status``.
        public var rawStatus: Int32?
        /// The subscription's original transaction id.
        public var originalTransactionId: String?
        /// The latest transaction as JWS.
        public var signedTransactionInfo: String?
        /// The renewal info as JWS.
        public var signedRenewalInfo: String?

        /// The typed status; `nil` for values this version does not know.
        public var status: SubscriptionStatus? { rawStatus.flatMap(SubscriptionStatus.init(rawValue:)) }

        /// Verifies and decodes the transaction; `nil` when absent.
        /// - Parameter verifier: The verifier configured for this app.
        public func verifiedTransaction(using verifier: SignedDataVerifier) -> VerificationResult<JWSTransactionDecodedPayload>? {
            signedTransactionInfo.map { verifier.verifyAndDecodeTransaction($0) }
        }

        /// Verifies and decodes the renewal info; `nil` when absent.
        /// - Parameter verifier: The verifier configured for this app.
        public func verifiedRenewalInfo(using verifier: SignedDataVerifier) -> VerificationResult<JWSRenewalInfoDecodedPayload>? {
            signedRenewalInfo.map { verifier.verifyAndDecodeRenewalInfo($0) }
        }
    }

    /// Apple's subscription status values.
    public enum SubscriptionStatus: Int32, Sendable, Hashable, CaseIterable {
        /// `1`: active.
        case active = 1
        /// `2`: expired.
        case expired = 2
        /// `3`: in the billing retry period.
        case billingRetry = 3
        /// `4`: in the billing grace period.
        case billingGracePeriod = 4
        /// `5`: revoked.
        case revoked = 5
    }

    init(body: [UInt8], environment: AppStoreEnvironment) throws(AppStoreServerAPIError) {
        let object = try ServerAPIJSON.object(body, environment: environment)
        do throws(VerificationError) {
            rawEnvironment = try object.optionalString("environment")
            bundleId = try object.optionalString("bundleId")
            appAppleId = try object.optionalInt64("appAppleId")
            data = []
            for group in try ServerAPIJSON.objects(object, "data") {
                var items: [LastTransactionsItem] = []
                for item in try ServerAPIJSON.objects(group, "lastTransactions") {
                    items.append(LastTransactionsItem(
                        rawStatus: try item.optionalInt32("status"),
                        originalTransactionId: try item.optionalString("originalTransactionId"),
                        signedTransactionInfo: try item.optionalString("signedTransactionInfo"),
                        signedRenewalInfo: try item.optionalString("signedRenewalInfo")))
                }
                data.append(SubscriptionGroupIdentifierItem(
                    subscriptionGroupIdentifier: try group.optionalString("subscriptionGroupIdentifier"),
                    lastTransactions: items))
            }
        } catch {
            throw ServerAPIJSON.invalid(error.detail, environment)
        }
        self.environment = environment
    }
}

/// Strict decoding of Server API bodies; any deviation is `appstore-api-invalid-response`.
enum ServerAPIJSON {
    static func invalid(_ detail: String, _ environment: AppStoreEnvironment) -> AppStoreServerAPIError {
        AppStoreServerAPIError(reason: .apiInvalidResponse, httpStatus: 200, environment: environment,
                               detail: "response body: \(detail)")
    }

    static func object(_ body: [UInt8], environment: AppStoreEnvironment) throws(AppStoreServerAPIError) -> JSONObject {
        let value: JSONValue
        do throws(VerificationError) {
            value = try JSONParser.parse(body, maxDepth: 16)
        } catch {
            throw invalid(error.detail, environment)
        }
        guard case .object(let object) = value else { throw invalid("not a JSON object", environment) }
        return object
    }

    static func requiredString(_ object: JSONObject, _ key: String,
                               _ environment: AppStoreEnvironment) throws(AppStoreServerAPIError) -> String {
        do throws(VerificationError) {
            return try object.requiredString(key)
        } catch {
            throw invalid(error.detail, environment)
        }
    }

    /// The objects of an array member (absent or `null` is empty).
    static func objects(_ object: JSONObject, _ key: String) throws(VerificationError) -> [JSONObject] {
        switch object[key] {
        case .none, .some(.null):
            return []
        case .some(.array(let elements)):
            var objects: [JSONObject] = []
            for element in elements {
                guard case .object(let member) = element else {
                    throw VerificationError(.invalidField, "field \(key) must be an array of objects")
                }
                objects.append(member)
            }
            return objects
        case .some:
            throw VerificationError(.invalidField, "field \(key) must be an array of objects")
        }
    }
}
