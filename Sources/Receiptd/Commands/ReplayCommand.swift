import Foundation
import Kafka
import Observability
import Pipeline

/// `receiptd replay`: moves dead letters back to the topics they came from, with the logic in
/// ``DeadLetterReplayer`` (Pipeline/Replay) and only options, Kafka wiring and printing here.
struct ReplayCommand: Command {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Republish dead letters to their original topics (filtered, rate-limited, dry-run)",
        usage: """
        receiptd replay [--config FILE]... [--brokers LIST] [--from TOPIC]
                        [--reason CODE]... [--bundle-id ID] [--since TIME] [--until TIME]
                        [--partition N] [--from-offset N] [--to-offset N]
                        [--dry-run] [--rate N] [--replay-id ID]

          --config FILE      configuration file (repeatable; later files override earlier ones)
          --brokers LIST     Kafka bootstrap servers (overrides kafka.bootstrapServers)
          --from TOPIC       the dead-letter topic (default topics.deadLetter, receipts.dead-letter)
          --reason CODE      only dead letters with this receiptd-reason (repeatable)
          --bundle-id ID     only dead letters whose value has this bundleId
          --since TIME       only dead letters that last failed at or after TIME (RFC 3339)
          --until TIME       only dead letters that last failed before TIME (RFC 3339)
          --partition N      only this partition of the dead-letter topic
          --from-offset N    first offset to read (inclusive; per partition)
          --to-offset N      last offset to read (inclusive; per partition)
          --dry-run          print what would move, one line per record; publish nothing
          --rate N           publish at most N records per second
          --replay-id ID     the id written to receiptd-replay-id (default: a new UUID)

        Reads the topic by explicit assignment (no consumer group, nothing committed) up to its end
        as of the start. Each match is republished to its receiptd-original-topic with key and value
        byte for byte, without receiptd-attempt and the other receiptd-* headers, plus
        receiptd-replayed-at and receiptd-replay-id. Prints the summary on standard output and a
        progress line (counts, ETA) on standard error. Exits 0 when done, 1 if it stopped part-way.
        """)

    static let optionNames: Set<String> = [
        "--config", "--brokers", "--from", "--reason", "--bundle-id", "--since", "--until", "--partition",
        "--from-offset", "--to-offset", "--rate", "--replay-id",
    ]

    var configFiles: [String]
    var brokers: String?
    var topic: String?
    var filter = ReplayFilter()
    var dryRun: Bool
    var rate: Double?
    var replayId: String?

    init(arguments: [String]) throws {
        let parser = try ArgumentParser(arguments, options: Self.optionNames, flags: ["--dry-run"])
        guard parser.positionals.isEmpty else { throw ValidationError("unexpected argument \(parser.positionals[0])") }
        configFiles = parser.options("--config")
        brokers = parser.option("--brokers")
        topic = parser.option("--from")
        dryRun = parser.flag("--dry-run")
        filter.reasons = Set(parser.options("--reason").map(ReasonCode.init(rawValue:)))
        filter.bundleId = parser.option("--bundle-id")
        filter.since = try Self.instant(parser, "--since")
        filter.until = try Self.instant(parser, "--until")
        filter.partition = try parser.integer("--partition", in: 0...Int(Int32.max)).map(Int32.init)
        filter.fromOffset = try parser.integer("--from-offset", in: 0...Int.max).map(Int64.init)
        filter.toOffset = try parser.integer("--to-offset", in: 0...Int.max).map(Int64.init)
        if let raw = parser.option("--rate") {
            guard let value = Double(raw), value > 0, value <= 1_000_000 else {
                throw ValidationError("--rate must be a number of records per second in (0, 1000000], got '\(raw)'")
            }
            rate = value
        }
        replayId = parser.option("--replay-id")
        if let replayId, replayId.isEmpty || replayId.utf8.count > 128 {
            throw ValidationError("--replay-id must be 1-128 characters")
        }
        do { try filter.validate() } catch let error as PipelineConfigurationError {
            throw ValidationError(error.description)
        }
    }

    private static func instant(_ parser: ArgumentParser, _ name: String) throws -> Date? {
        guard let raw = parser.option(name) else { return nil }
        guard let date = RFC3339.date(from: raw) else {
            throw ValidationError("\(name) must be an RFC 3339 time such as 2026-11-30T06:00:00Z, got '\(raw)'")
        }
        return date
    }

    func run() async throws -> Int32 {
        let configuration = try ConfigLoader.standard(files: configFiles, brokers: brokers).load()
        let logger = makeLogger(configuration, label: "receiptd.replay")
        let topics = configuration.pipelineTopics
        let brokerList = configuration.bootstrapServerList
        let reader = KafkaDeadLetterReader(bootstrapServers: brokerList, properties: configuration.kafka.properties,
                                           topic: topic ?? topics.deadLetter)
        var producer: KafkaRecordSink?
        if !dryRun {
            producer = try KafkaRecordSink(configuration: configuration.kafka.producer(bootstrapServers: brokerList, role: "replay"))
        }
        var options = DeadLetterReplayer.Options(filter: filter, dryRun: dryRun, rate: rate,
                                                 allowedTopics: Set(StageName.allCases.map(topics.input(of:))))
        if let replayId { options.replayId = replayId }
        let replayer = DeadLetterReplayer(reader: reader, sink: producer ?? UnusedSink(), logger: logger)
        do {
            let summary = try await replayer.run(options, listing: { print($0) }, progress: { printError($0.description) })
            await producer?.close()
            print(summary.description)
            return 0
        } catch let error as ReplayError {
            await producer?.close()
            print(error.summary.description)
            printError("error: replay stopped part-way: \(error.underlying)")
            return 1
        }
    }
}

/// The sink of a dry run: never called.
private struct UnusedSink: RecordSink {
    func send(_ records: [OutboundRecord]) async throws {
        preconditionFailure("a dry run publishes nothing")
    }
}
