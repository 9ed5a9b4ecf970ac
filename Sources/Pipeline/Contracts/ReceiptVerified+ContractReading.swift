/// Fulfil's input, read without `Decoder` containers (mirrors `init(from:)`).
extension ReceiptVerified: ContractReadable {
    init(reading r: ContractReader) throws {
        // One call of the (not inlined) initializer, as ``IngestedSubmission``'s reader.
        self.init(schema: try r.schema(Self.schema), submissionId: try r.string("submissionId"),
                  bundleId: try r.string("bundleId"), userId: try r.string("userId"),
                  kind: try r.rawValue(SubmissionKind.self, "kind"), verifiedAt: try r.timestamp("verifiedAt"),
                  transaction: try r.nested(VerifiedTransaction.self, "transaction"))
    }
}
