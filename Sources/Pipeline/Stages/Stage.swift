/// One step of the pipeline as a plain transform: decoded input in, a ``StageResult`` out.
///
/// The framework (``StageRunner``) owns everything Kafka: decoding the record, timeouts, routing
/// results to topics, retries, dead letters, awaiting acknowledgements and storing offsets.
/// A stage never sees topics, offsets or headers, so it can be tested as a pure function
/// (the Karafka `consume` / hummingbird middleware idea).
///
/// Errors: throw a ``ClassifiedError`` to say whether a failure is worth retrying; anything
/// else counts as transient (parallel-consumer's default).
public protocol Stage: Sendable {
    /// What the stage consumes. Decoded by ``decodeInput(_:)``: JSON contracts by default, the raw
    /// bytes themselves when `Input == [UInt8]` (ingest, which must judge malformed input itself).
    associatedtype Input: Decodable & Sendable
    /// What the stage emits; each message knows its topic role and record key.
    associatedtype Output: OutboundMessage

    /// The stage's name in metrics, logs, headers and contracts.
    static var name: StageName { get }

    /// Processes one input.
    /// - Parameters:
    ///   - input: the decoded record value.
    ///   - context: logger, attempt number, clock and provenance of the record.
    /// - Returns: outputs to emit, a permanent rejection, or a deliberate end without output.
    /// - Throws: a ``ClassifiedError`` (or any error, counted as transient).
    /// - Important: for an input that may wait on the outside (``StageWaiting/outside`` and
    ///   ``mayWaitOnOutside(_:)``), the runner enforces a timeout by cancelling the task; long
    ///   waits inside `process` must be cancellable (they are, for `Task.sleep` and well-behaved
    ///   clients).
    func process(_ input: Input, context: StageContext) async throws -> StageResult<Output>

    /// Whether the runner hands the inputs its batches run to ``process(round:)`` a round at a
    /// time (up to 64, decoded first) instead of to ``process(_:context:)`` one by one. Default
    /// `false`; verify's is `true`, so its signatures are checked back to back. Not for a stage
    /// that waits on ``StageWaiting/deliveries``: its records must be processed one after another.
    static var processesRounds: Bool { get }

    /// Processes one round of inputs, each with its context; the results in the same order.
    /// Default: ``process(_:context:)`` for each in turn. Called only when ``processesRounds``.
    func process(round: consuming [(input: Input, context: StageContext)]) async -> [Result<StageResult<Output>, any Error>]

    /// Turns a record value into ``Input``; a throw dead-letters the record as `undecodable`.
    static func decodeInput(_ value: [UInt8]) throws -> Input

    /// What `process` may wait on, which decides how the runner runs the stage's records (see
    /// ``StageWaiting``). Default ``StageWaiting/outside``.
    static var waitsOn: StageWaiting { get }

    /// For a stage that waits on the outside: whether processing this input may (verify: an App
    /// Store request, not a JWS checked offline). The runner runs inputs that cannot in its
    /// batches, without the processing timeout. Default `true`.
    func mayWaitOnOutside(_ input: Input) -> Bool

    /// The identifying fields of an input, for logs, rejections and outcomes: the input's own
    /// ``SubmissionDescribing/subject`` when it has one (the default does this), else
    /// ``SubmissionSubject/unknown``. Static, so the input is borrowed rather than copied.
    static func subject(of input: Input) -> SubmissionSubject
}

extension Stage {
    public static var waitsOn: StageWaiting { .outside }

    public static var processesRounds: Bool { false }

    public func process(round: consuming [(input: Input, context: StageContext)]) async -> [Result<StageResult<Output>, any Error>] {
        var results: [Result<StageResult<Output>, any Error>] = []
        results.reserveCapacity(round.count)
        for (input, context) in round {
            do {
                results.append(.success(try await process(input, context: context)))
            } catch {
                results.append(.failure(error))
            }
        }
        return results
    }

    public func mayWaitOnOutside(_ input: Input) -> Bool { true }

    /// Decodes a JSON contract (``ContractCoding``).
    public static func decodeInput(_ value: [UInt8]) throws -> Input {
        try ContractCoding.decode(Input.self, from: value)
    }

    public static func subject(of input: Input) -> SubmissionSubject { .unknown }
}

extension Stage where Input: SubmissionDescribing {
    public static func subject(of input: Input) -> SubmissionSubject { input.subject }
}

extension Stage where Input == [UInt8] {
    /// Passes the raw bytes through: the stage validates them itself.
    public static func decodeInput(_ value: [UInt8]) throws -> [UInt8] {
        value
    }
}
