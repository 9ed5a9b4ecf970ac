import Pipeline

/// A stage that does no work: it emits one small message per input, so `bench stages` can show
/// what the runner and the transport cost per record apart from any stage (the plumbing every
/// stage pays, and the part a runner regression moves). It declares that every input may wait on
/// the outside, so each record runs on a task of its own under the processing timeout, as verify's
/// App Store requests do.
struct PassThroughStage: Stage {
    typealias Input = [UInt8]
    typealias Output = PassThroughMarker
    static var name: StageName { .ingest }
    static var waitsOn: StageWaiting { .outside }

    func process(_ input: [UInt8], context: StageContext) async throws -> StageResult<PassThroughMarker> {
        .emit([PassThroughMarker(bytes: input.count)])
    }
}

/// The same for a stage that only computes, like ingest: its records run in the runner's batches,
/// as every stage's do except inputs that may wait on the outside.
struct ComputeOnlyPassThroughStage: Stage {
    typealias Input = [UInt8]
    typealias Output = PassThroughMarker
    static var name: StageName { .ingest }
    static var waitsOn: StageWaiting { .nothing }

    func process(_ input: [UInt8], context: StageContext) async throws -> StageResult<PassThroughMarker> {
        .emit([PassThroughMarker(bytes: input.count)])
    }
}

/// The pass-through stages' output: the input's size, under one key.
struct PassThroughMarker: OutboundMessage {
    static var outputTopic: OutputTopic { .ingested }
    let bytes: Int
    var recordKey: String { "pass-through" }
}
