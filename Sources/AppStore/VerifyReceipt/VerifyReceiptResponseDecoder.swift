/// Decodes `verifyReceipt` response bodies (`responseBody`) with the module's strict JSON parser.
///
/// Legacy members are loosely typed by Apple (`quantity` is `"1"`, `is-retryable` is `true` or
/// `1`), so scalar members accept a string, an integer or a boolean and keep it as a string; the
/// structure (objects, arrays) and the required members are strict.
enum VerifyReceiptResponseDecoder {
    /// The members every answer has, success or not.
    struct Envelope {
        var status: Int
        var rawEnvironment: String?
        var isRetryable: Bool?
        var object: JSONObject
    }

    struct Invalid: Error {
        var detail: String
    }

    static func envelope(_ body: [UInt8]) throws(Invalid) -> Envelope {
        let value: JSONValue
        do throws(VerificationError) {
            value = try JSONParser.parse(body, maxDepth: 16)
        } catch {
            throw Invalid(detail: error.detail)
        }
        guard case .object(let object) = value else { throw Invalid(detail: "not a JSON object") }
        guard let statusText = scalar(object["status"]), let status = Int(statusText) else {
            throw Invalid(detail: "missing or non-integer status")
        }
        let retryable = scalar(object["is-retryable"]).map { $0 == "true" || $0 == "1" }
        return Envelope(status: status, rawEnvironment: scalar(object["environment"]), isRetryable: retryable, object: object)
    }

    static func result(_ envelope: Envelope, environment: AppStoreEnvironment) throws(Invalid) -> VerifyReceiptResult {
        let object = envelope.object
        var receipt = JSONObject()
        switch object["receipt"] {
        case .object(let member)?: receipt = member
        case nil, .null?: break
        default: throw Invalid(detail: "receipt must be an object")
        }
        return VerifyReceiptResult(
            status: envelope.status, environment: environment, rawEnvironment: envelope.rawEnvironment,
            bundleId: scalar(receipt["bundle_id"]), applicationVersion: scalar(receipt["application_version"]),
            originalApplicationVersion: scalar(receipt["original_application_version"]),
            receiptCreationDateMs: scalar(receipt["receipt_creation_date_ms"]),
            inApp: try objects(receipt, "in_app").map(transaction),
            latestReceiptInfo: try objects(object, "latest_receipt_info").map(transaction),
            pendingRenewalInfo: try objects(object, "pending_renewal_info").map(pendingRenewal),
            latestReceipt: scalar(object["latest_receipt"]))
    }

    private static func transaction(_ item: JSONObject) throws(Invalid) -> VerifyReceiptTransaction {
        guard let transactionId = scalar(item["transaction_id"]), !transactionId.isEmpty else {
            throw Invalid(detail: "a transaction has no transaction_id")
        }
        guard let productId = scalar(item["product_id"]), !productId.isEmpty else {
            throw Invalid(detail: "a transaction has no product_id")
        }
        for key in ["purchase_date_ms", "expires_date_ms", "cancellation_date_ms", "original_purchase_date_ms"] {
            if let text = scalar(item[key]), Int64(text) == nil { throw Invalid(detail: "\(key) is not integer milliseconds") }
        }
        return VerifyReceiptTransaction(
            transactionId: transactionId, originalTransactionId: scalar(item["original_transaction_id"]),
            productId: productId, purchaseDateMs: scalar(item["purchase_date_ms"]),
            originalPurchaseDateMs: scalar(item["original_purchase_date_ms"]), expiresDateMs: scalar(item["expires_date_ms"]),
            cancellationDateMs: scalar(item["cancellation_date_ms"]), cancellationReason: scalar(item["cancellation_reason"]),
            quantity: scalar(item["quantity"]).flatMap { Int($0) }, inAppOwnershipType: scalar(item["in_app_ownership_type"]),
            webOrderLineItemId: scalar(item["web_order_line_item_id"]), isTrialPeriod: scalar(item["is_trial_period"]),
            subscriptionGroupIdentifier: scalar(item["subscription_group_identifier"]))
    }

    private static func pendingRenewal(_ item: JSONObject) throws(Invalid) -> VerifyReceiptPendingRenewal {
        VerifyReceiptPendingRenewal(
            originalTransactionId: scalar(item["original_transaction_id"]), productId: scalar(item["product_id"]),
            autoRenewProductId: scalar(item["auto_renew_product_id"]), autoRenewStatus: scalar(item["auto_renew_status"]),
            expirationIntent: scalar(item["expiration_intent"]),
            isInBillingRetryPeriod: scalar(item["is_in_billing_retry_period"]),
            gracePeriodExpiresDateMs: scalar(item["grace_period_expires_date_ms"]))
    }

    /// A string, integer or boolean member as text; `nil` when absent, `null` or structured.
    static func scalar(_ value: JSONValue?) -> String? {
        switch value {
        case .string(let text)?: text
        case .integer(let number)?: String(number)
        case .bool(let flag)?: flag ? "true" : "false"
        default: nil
        }
    }

    private static func objects(_ object: JSONObject, _ key: String) throws(Invalid) -> [JSONObject] {
        do throws(VerificationError) {
            return try ServerAPIJSON.objects(object, key)
        } catch {
            throw Invalid(detail: error.detail)
        }
    }
}
