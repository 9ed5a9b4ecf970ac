import AppStore

/// A submission's offline verification begun into a ``SignatureBatch``
/// (``SubmissionVerifier/beginOffline(_:deferringTo:)``): what the JWS it carries verified to, but
/// for an ES256 check waiting in the batch.
public struct OfflineVerification {
    enum Pending {
        case transaction(PendingVerification<JWSTransactionDecodedPayload>)
        case notification(PendingVerification<ResponseBodyV2DecodedPayload>)
        case renewalInfo(PendingVerification<JWSRenewalInfoDecodedPayload>)
    }

    let pending: Pending
}
