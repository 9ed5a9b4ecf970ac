import Pipeline

/// A stage that does no work: it emits one small message per input, so `bench stages` can show
/// what the runner and the transport cost per record apart from any stage (the plumbing every
/// stage pays, and the part a runner regression moves).
struct PassThroughStage: Stage {
    typealias Input = [UInt8]
    typealias Output = Marker
    static var name: StageName { .ingest }
    /// Like verify, fulfil and owners: the runner's per-record timeout is armed.
    static var waitsOnOutside: Bool { true }

    /// The output: the input's size, keyed like the input so ordering work is the same.
    struct Marker: OutboundMessage {
        static var outputTopic: OutputTopic { .ingested }
        let bytes: Int
        var recordKey: String { "pass-through" }
    }

    func process(_ input: [UInt8], context: StageContext) async throws -> StageResult<Marker> {
        .emit([Marker(bytes: input.count)])
    }
}
