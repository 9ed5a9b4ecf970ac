import Observability

/// Verify: turns one `receipt-ingested/v1` into one `receipt-verified/v1` per verified
/// transaction, keyed by `originalTransactionId`.
///
/// The cryptography is the injected ``SubmissionVerifier``'s business; this stage adds the
/// pipeline rules around it:
/// - a kind outside ``SubmissionVerifier/supportedKinds`` → reject `unsupported-kind`;
/// - a verifier error → thrown on (the runner rejects permanent ones, retries or dead-letters
///   transient ones);
/// - no transactions → `done` with outcome `no-transactions`;
/// - a transaction with an empty `transactionId` or `originalTransactionId` (nothing to key on)
///   → reject `invalid-transaction`.
public struct VerifyStage: Stage {
    public typealias Input = IngestedSubmission
    public typealias Output = ReceiptVerified
    public static var name: StageName { .verify }

    private let verifier: any SubmissionVerifier

    /// Creates the stage around a verifier.
    public init(verifier: any SubmissionVerifier) {
        self.verifier = verifier
    }

    /// Only when the verifier says so; an unsupported kind is rejected at once.
    public func mayWaitOnOutside(_ input: IngestedSubmission) -> Bool {
        verifier.supportedKinds.contains(input.kind) && verifier.mayWaitOnNetwork(input)
    }

    public func process(_ input: IngestedSubmission, context: StageContext) async throws -> StageResult<ReceiptVerified> {
        guard verifier.supportedKinds.contains(input.kind) else {
            return .reject(reason: .unsupportedKind,
                           detail: "kind \(input.kind.rawValue) is not supported by this verifier yet")
        }
        var transactions = try await verifier.verify(input, context: context)
        guard !transactions.isEmpty else {
            return .done(outcome: .noTransactions)
        }
        if let bad = transactions.first(where: { $0.transactionId.isEmpty || $0.originalTransactionId.isEmpty }) {
            return .reject(reason: .invalidTransaction,
                           detail: "verifier returned a transaction without ids (productId \(bad.productId))")
        }
        context.logger.debug("submission verified into \(transactions.count) transaction(s)", metadata: [
            LoggingKeys.submissionId: .string(input.submissionId),
            LoggingKeys.payloadSHA256: .string(input.payloadSHA256),
        ])
        // Each transaction moves into its output (a `map` would copy it, eight references): the
        // buffer reversed and then popped, as ``RecordRouter`` moves outputs (`Array.reverse()` copies).
        var outputs: [ReceiptVerified] = []
        outputs.reserveCapacity(transactions.count)
        transactions.withUnsafeMutableBufferPointer { $0.reverse() }
        while let transaction = transactions.popLast() {
            outputs.append(ReceiptVerified(submissionId: input.submissionId, bundleId: input.bundleId, userId: input.userId,
                                           kind: input.kind, verifiedAt: context.now, transaction: transaction))
        }
        return .emit(outputs)
    }
}
