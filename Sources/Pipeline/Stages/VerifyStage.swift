import AppStore
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
///
/// It processes rounds (``process(round:)``): the signed data of a round is verified with its
/// ES256 checks put off into one ``SignatureBatch`` and run back to back, then each input goes on
/// as in ``process(_:context:)``, with the same outcome.
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
        return outputs(of: input, try await verifier.verify(input, context: context), context: context)
    }

    public static var processesRounds: Bool { true }

    /// Begins the round's offline verifications, checks their signatures back to back, then
    /// finishes each input in order; inputs the verifier does not begin offline go through
    /// ``process(_:context:)``.
    public func process(round: consuming [(input: IngestedSubmission, context: StageContext)]) async
        -> [Result<StageResult<ReceiptVerified>, any Error>] {
        let batch = SignatureBatch(capacity: round.count)
        let supportedKinds = verifier.supportedKinds
        // Each input moves from the round into `begun` and then out of it (reversed through the
        // buffers, whose swaps are moves, then popped): reading them in place copied each one, and
        // every string it holds, per access.
        var begun: [(input: IngestedSubmission, context: StageContext, verification: OfflineVerification?)] = []
        begun.reserveCapacity(round.count)
        round.withUnsafeMutableBufferPointer { $0.reverse() }
        while case let (input, context)? = round.popLast() {
            let verification = supportedKinds.contains(input.kind) ? verifier.beginOffline(input, deferringTo: batch) : nil
            begun.append((consume input, consume context, consume verification))
        }
        batch.checkAll()
        begun.withUnsafeMutableBufferPointer { $0.reverse() }
        var results: [Result<StageResult<ReceiptVerified>, any Error>] = []
        results.reserveCapacity(begun.count)
        while case let (input, context, verification)? = begun.popLast() {
            do {
                if let verification {
                    let transactions = try verifier.finish(verification, of: input, in: batch)
                    results.append(.success(outputs(of: input, transactions, context: context)))
                } else {
                    results.append(.success(try await process(input, context: context)))
                }
            } catch {
                results.append(.failure(error))
            }
        }
        return results
    }

    /// The result of an input whose submission verified to `transactions`.
    private func outputs(of input: IngestedSubmission, _ verified: consuming [VerifiedTransaction],
                         context: StageContext) -> StageResult<ReceiptVerified> {
        var transactions = verified
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
