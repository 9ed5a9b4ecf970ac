import Foundation
import Kafka
import Pipeline

/// `receiptd consumption-expiry`: gives every refund consumption request that nobody answered in
/// time its `expired` outcome (``ConsumptionExpiry``). The consumption worker only sees answers, so
/// a request without one needs this sweep; `Deploy/k8s/consumption.yaml` runs it hourly.
struct ConsumptionExpiryCommand: Command {
    static let configuration = CommandConfiguration(
        commandName: "consumption-expiry",
        abstract: "Publish an expired outcome for every consumption request left unanswered past its deadline",
        usage: """
        receiptd consumption-expiry [--grace-minutes N] [--dry-run] [--config FILE]... [--brokers LIST]

          --grace-minutes N   how long after a request's deadline it is left to the retry tiers before it is
                              declared unanswered (default 120: more than the default tiers' 71 minutes)
          --dry-run           count, publish nothing

        Reads topics.consumptionRequests and topics.consumptionOutcomes from their beginning and publishes
        `expired` (reason not-answered) to topics.consumptionOutcomes for each request due with no outcome.
        Running it again changes nothing. The summary goes to standard output; exit 0 when done.
        """)

    var graceMinutes = 120
    var dryRun = false
    var configFiles: [String] = []
    var brokers: String?

    init(arguments: [String]) throws {
        let parser = try ArgumentParser(arguments, options: ["--grace-minutes", "--config", "--brokers"], flags: ["--dry-run"])
        guard parser.positionals.isEmpty else { throw ValidationError("unexpected argument \(parser.positionals[0])") }
        graceMinutes = try parser.integer("--grace-minutes", in: 0...100_000) ?? graceMinutes
        dryRun = parser.flag("--dry-run")
        configFiles = parser.options("--config")
        brokers = parser.option("--brokers")
    }

    func run() async throws -> Int32 {
        let configuration = try ConfigLoader.standard(files: configFiles, brokers: brokers).load()
        let topics = configuration.pipelineTopics
        let reader = configuration.stateReader(for: "consumption-expiry")
        let partitions = Array(0..<Int32(configuration.topics.partitions))
        var requests: [ConsumptionRequest] = []
        var outcomes: [ConsumptionOutcome] = []
        var unreadable = 0
        try await reader.read(topic: topics.consumptionRequests, partitions: partitions) { record in
            if let request = try? ContractCoding.decode(ConsumptionRequest.self, from: record.value) {
                requests.append(request)
            } else {
                unreadable += 1
            }
        }
        try await reader.read(topic: topics.consumptionOutcomes, partitions: partitions) { record in
            if let outcome = try? ContractCoding.decode(ConsumptionOutcome.self, from: record.value) {
                outcomes.append(outcome)
            } else {
                unreadable += 1
            }
        }
        let expired = ConsumptionExpiry.expired(requests: requests, outcomes: outcomes, now: Date(),
                                                grace: TimeInterval(graceMinutes * 60))
        if !dryRun, !expired.isEmpty {
            let sink = try KafkaRecordSink(configuration: configuration.kafka.producer(
                bootstrapServers: configuration.bootstrapServerList, role: "consumption-expiry"))
            do {
                try await sink.send(try expired.map { outcome in
                    OutboundRecord(topic: topics.consumptionOutcomes, key: Array(outcome.recordKey.utf8),
                                   value: try ContractCoding.encode(outcome))
                })
            } catch {
                await sink.close()
                throw error
            }
            await sink.close()
        }
        print("consumption-expiry\(dryRun ? " (dry run)" : ""): \(requests.count) request record(s), \(outcomes.count) outcome(s), "
              + "\(expired.count) \(dryRun ? "would expire" : "expired") (not-answered), \(unreadable) unreadable record(s) skipped")
        return 0
    }
}
