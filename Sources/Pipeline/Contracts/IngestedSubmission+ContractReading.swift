/// Verify's input, read without `Decoder` containers (mirrors `init(from:)`).
extension IngestedSubmission: ContractReadable {
    init(reading r: ContractReader) throws {
        self.init(schema: try r.schema(Self.schema), submissionId: try r.string("submissionId"),
                  bundleId: try r.string("bundleId"), userId: try r.string("userId"),
                  kind: try r.rawValue(SubmissionKind.self, "kind"), payload: try r.text("payload"),
                  payloadSHA256: try r.string("payloadSHA256"), submittedAt: try r.timestamp("submittedAt"),
                  ingestedAt: try r.timestamp("ingestedAt"))
    }
}
