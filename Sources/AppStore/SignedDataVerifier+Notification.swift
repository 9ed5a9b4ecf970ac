import Foundation
import Observability

extension SignedDataVerifier {
    /// Verifies an App Store Server Notification V2 `signedPayload`, and the transaction and
    /// renewal info nested in it, and decodes them.
    ///
    /// Steps, first failure wins:
    /// 1. The outer JWS exactly as a transaction (header policy, cached chain, ES256, strict JSON),
    ///    with the chain checked at the notification's `signedDate`, or at the clock's time when it
    ///    has none (Apple's rule; 2022 notifications lack it).
    /// 2. Shape (`missing-field`): `notificationType` and `notificationUUID`; the container the type
    ///    carries (`data` for purchase types and `TEST`, `summary` or `data` for
    ///    `RENEWAL_EXTENSION`, `externalPurchaseToken`, `appData` for `RESCIND_CONSENT`, any one of
    ///    them for unknown types).
    /// 3. Claims, in Apple's order, on the first present of `data`, `summary`,
    ///    `externalPurchaseToken`, `appData`: bundle id (`bundle-id-mismatch`), then `appAppleId`
    ///    (`app-apple-id-mismatch`) when one is configured and the policy is Production or the
    ///    notification is Production (so a Production verifier rejects a notification without
    ///    `appAppleId`, as Apple's `INVALID_APP_IDENTIFIER`), then environment
    ///    (`environment-mismatch`).
    /// 4. What the ``NotificationEffect`` needs (`missing-field`): `data.signedTransactionInfo` for
    ///    effects that act on a transaction, the transaction or renewal info for every effect
    ///    that concerns one subscription.
    /// 5. `data.signedTransactionInfo` and `data.signedRenewalInfo`, each as its own JWS under the
    ///    same policy (``verifyAndDecodeTransaction(_:)``, ``verifyAndDecodeRenewalInfo(_:)``,
    ///    chain checked at its own `signedDate`). A failure rejects the whole notification with
    ///    the nested reason; the detail starts with the nested field's name.
    /// 6. Binding (`nested-mismatch`): the nested transaction's `bundleId` and both nested
    ///    `environment`s must equal `data`'s, and the transaction and renewal info must agree on
    ///    `originalTransactionId`. Apple's payloads always satisfy this; it guarantees that the
    ///    decoded nested data describes this notification's app and environment.
    ///
    /// Stricter than Apple's library, which verifies neither the nested JWS nor the shape, and
    /// looks at no `x5c[2]` (see ``SignedDataVerifier``).
    /// - Parameter signedPayload: The `signedPayload` member of the notification POST body.
    /// - Returns: The notification with ``NotificationData/transactionInfo`` and
    ///   ``NotificationData/renewalInfo`` set when present, or why it was rejected.
    public func verifyAndDecodeNotification(_ signedPayload: String) -> VerificationResult<ResponseBodyV2DecodedPayload> {
        signedPayload.withUTF8InPlace { verifyAndDecodeNotification(utf8: $0) }
    }

    /// ``verifyAndDecodeNotification(_:)`` over the JWS's UTF-8 bytes where they are.
    public func verifyAndDecodeNotification(utf8 signedPayload: UnsafeBufferPointer<UInt8>) -> VerificationResult<ResponseBodyV2DecodedPayload> {
        finish(begin(signedPayload, as: .notification, deferringTo: nil,
                     notification(_:clockUse:signingInput:deferringTo:)), in: nil)
    }

    /// ``verifyAndDecodeNotification(utf8:)`` with the outer JWS's ES256 check put off into `batch`
    /// (see ``beginTransaction(utf8:deferringTo:)``); the nested JWS are checked here, after it in
    /// the order of steps, so a failing outer signature still wins.
    public func beginNotification(utf8 signedPayload: UnsafeBufferPointer<UInt8>,
                                  deferringTo batch: SignatureBatch) -> PendingVerification<ResponseBodyV2DecodedPayload> {
        PendingVerification(begin(signedPayload, as: .notification, deferringTo: batch,
                                  notification(_:clockUse:signingInput:deferringTo:)))
    }

    private func notification(_ signedPayload: UnsafeBufferPointer<UInt8>, clockUse: ClockUse, signingInput: SigningInputDigest?,
                              deferringTo batch: SignatureBatch?) -> VerificationResult<ResponseBodyV2DecodedPayload> {
        let dateRange = core.dateRange
        return decode(signedPayload, clockUse: clockUse, signingInput: signingInput,
                      deferringTo: batch) { json throws(VerificationError) in
            var notification = try ResponseBodyV2DecodedPayload(json: json, dateRange: dateRange)
            try checkContainer(of: notification)
            let identity = notification.appIdentity
            try checkBundleId(identity.bundleId)
            try checkNotificationAppAppleId(identity.appAppleId, rawEnvironment: identity.rawEnvironment)
            try checkEnvironment(identity.rawEnvironment)
            try checkEffectRequirements(of: notification)
            if var data = notification.data {
                try verifyNested(in: &data, clockUse: clockUse)
                notification.data = data
            }
            return notification
        }
    }

    /// `missing-field` unless the container the notification type carries is present.
    func checkContainer(of notification: ResponseBodyV2DecodedPayload) throws(VerificationError) {
        let present: Bool
        let expected: String
        switch notification.notificationType {
        case .externalPurchaseToken?:
            (present, expected) = (notification.externalPurchaseToken != nil, "externalPurchaseToken")
        case .rescindConsent?:
            (present, expected) = (notification.appData != nil, "appData")
        case .renewalExtension?:
            (present, expected) = (notification.summary != nil || notification.data != nil, "summary or data")
        case nil:
            let any = notification.data != nil || notification.summary != nil
                || notification.externalPurchaseToken != nil || notification.appData != nil
            (present, expected) = (any, "one of data, summary, externalPurchaseToken, appData")
        case .some:
            (present, expected) = (notification.data != nil, "data")
        }
        guard present else {
            let type = notification.notificationType.map { " for notificationType \($0.rawValue)" } ?? ""
            throw VerificationError(.missingField, "field \(expected) is required\(type)")
        }
    }

    /// `app-apple-id-mismatch` when an app id is configured, the policy or the notification is
    /// Production, and the notification's `appAppleId` differs (or is absent).
    func checkNotificationAppAppleId(_ appAppleId: Int64?, rawEnvironment: String?) throws(VerificationError) {
        guard let expected = configuration.appAppleId else { return }
        guard configuration.environment == .production || rawEnvironment == AppStoreEnvironment.production.rawValue else { return }
        guard appAppleId == expected else {
            throw VerificationError(.appAppleIdMismatch, "appAppleId does not match the configured app")
        }
    }

    /// `missing-field` when the effect needs a nested JWS the notification lacks.
    func checkEffectRequirements(of notification: ResponseBodyV2DecodedPayload) throws(VerificationError) {
        let effect = NotificationEffect(notification)
        let hasTransaction = notification.data?.signedTransactionInfo != nil
        let hasRenewal = notification.data?.signedRenewalInfo != nil
        let type = notification.notificationType.map { " for notificationType \($0.rawValue)" } ?? ""
        if effect.needsTransaction, !hasTransaction {
            throw VerificationError(.missingField, "field data.signedTransactionInfo is required\(type)")
        }
        if effect.concernsSubscription, !hasTransaction, !hasRenewal {
            throw VerificationError(.missingField, "field data.signedTransactionInfo or data.signedRenewalInfo is required\(type)")
        }
    }

    /// Verifies and decodes the nested JWS of `data` and binds them to it.
    func verifyNested(in data: inout NotificationData, clockUse: ClockUse) throws(VerificationError) {
        if let jws = data.signedTransactionInfo {
            let field = "data.signedTransactionInfo"
            let verified = jws.withUTF8InPlace { self.transaction($0, clockUse: clockUse) }
            let transaction = try nested(verified, field: field)
            guard transaction.bundleId == data.bundleId else {
                throw VerificationError(.nestedMismatch, "\(field): bundleId differs from data.bundleId")
            }
            guard transaction.rawEnvironment == data.rawEnvironment else {
                throw VerificationError(.nestedMismatch, "\(field): environment differs from data.environment")
            }
            data.transactionInfo = transaction
        }
        if let jws = data.signedRenewalInfo {
            let field = "data.signedRenewalInfo"
            let verified = jws.withUTF8InPlace { self.renewalInfo($0, clockUse: clockUse) }
            let renewalInfo = try nested(verified, field: field)
            guard renewalInfo.rawEnvironment == data.rawEnvironment else {
                throw VerificationError(.nestedMismatch, "\(field): environment differs from data.environment")
            }
            if let renewalOriginal = renewalInfo.originalTransactionId,
               let transactionOriginal = data.transactionInfo?.originalTransactionId,
               renewalOriginal != transactionOriginal {
                throw VerificationError(.nestedMismatch,
                                        "\(field): originalTransactionId differs from the transaction's")
            }
            data.renewalInfo = renewalInfo
        }
    }

    /// The nested payload, or its error with the field name prepended to the detail.
    private func nested<T>(_ result: VerificationResult<T>, field: String) throws(VerificationError) -> T {
        switch result {
        case .valid(let value): return value
        case .invalid(let error): throw VerificationError(error.reason, "\(field): \(error.detail)")
        }
    }
}
