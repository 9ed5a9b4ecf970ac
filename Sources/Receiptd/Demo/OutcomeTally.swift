import AppStore
import Foundation
import Kafka
import Pipeline
import Synchronization

/// Reads the pipeline's terminal topics (entitlement changes, rejections, outcomes, dead letters)
/// from the beginning, by explicit assignment (no consumer group, no commits), and accounts for
/// every submission by its `submissionId`.
final class OutcomeTally: Sendable {
    /// What happened to the submissions seen so far.
    struct Counts: Sendable {
        var accounted: Set<String> = []
        var entitlementsByAction: [String: Int] = [:]
        var rejectedByReason: [String: Int] = [:]
        var outcomes: [String: Int] = [:]
        var deadLetters = 0
        var deadLettersByReason: [String: Int] = [:]
        /// Terminal result per submission: `grant`, `rejected:<reason>`, `duplicate-suppressed`, ….
        var verdicts: [String: String] = [:]
        /// Where each entitlement event id was read (`topic/partition/offset`); two positions
        /// mean the event was emitted twice.
        var eventPositions: [String: [String]] = [:]
        /// Each event's first copy: its producer timestamp and the SHA-256 of its bytes.
        var firstCopies: [String: (timestamp: Date, digest: [UInt8])] = [:]
        /// Further copies of an event with the first copy's producer timestamp and bytes, by event id:
        /// one produced message written twice, which only a broker can do (librdkafka's mock cluster
        /// does not de-duplicate an idempotent producer's retried batch after a lost connection;
        /// a real broker does). Any re-emission by a worker is a new message with a new timestamp,
        /// so it stays in ``eventPositions``.
        var brokerRewrites: [String: [String]] = [:]
        /// Records read at positions already seen (a consumer re-fetch, not a pipeline duplicate).
        var rereads = 0
        /// Every position read, so a re-fetched record is counted once.
        var seenPositions: Set<String> = []
        /// Whether a purchase's access is granted to an owner now (`originalTransactionId|owner`),
        /// from its events in order: a grant sets it, a revoke or expire clears it.
        var granted: [String: Bool] = [:]
        /// Purchases granted to an owner while already granted to them (no revoke or expire in
        /// between): a double grant, or a consumable's units granted twice.
        var doubleGrants: Set<String> = []
        /// Where each published submission landed (`topic/partition/offset` -> submissionId).
        var origins: [String: String] = [:]
        /// Verdicts on records too malformed to name their submission, by source position.
        var unattributed: [String: String] = [:]

        /// The accounted count a measurement waits for (``OutcomeTally/expectAccounted(_:)``), and
        /// when it was first reached: taken by the record that reached it, where the harness's poll
        /// noticed up to its interval later and counted that wait in `bench pipeline`'s window.
        var completionTarget = Int.max
        var completedAt: ContinuousClock.Instant?

        static let actions: Set<String> = ["grant", "renew", "update", "expire", "revoke"]

        mutating func noteCompletion() {
            if completedAt == nil, accounted.count >= completionTarget { completedAt = .now }
        }

        /// Records where an entitlement event was read. - Returns: false when this copy is the
        /// first copy's message written again by the broker (same producer timestamp and bytes:
        /// ``brokerRewrites``), which is not an emission of the pipeline's.
        mutating func recordEvent(_ eventId: String, at position: String, timestamp: Date?, value: [UInt8]) -> Bool {
            let digest = SHA256.hash(value)
            if eventPositions[eventId, default: []].isEmpty {
                if let timestamp { firstCopies[eventId] = (timestamp, digest) }
            } else if let first = firstCopies[eventId], first.timestamp == timestamp, first.digest == digest {
                brokerRewrites[eventId, default: []].append(position)
                return false
            }
            eventPositions[eventId, default: []].append(position)
            return true
        }

        /// Follows a purchase's access per owner through its events (read in order: every event of
        /// a purchase is in one partition) to find double grants.
        mutating func track(action: String, purchase: String, owner: String) {
            let key = purchase + "|" + owner
            switch action {
            case "grant":
                if granted[key] == true { doubleGrants.insert(key) }
                granted[key] = true
            case "revoke", "expire": granted[key] = false
            default: break
            }
        }

        /// Records `verdict` for the submission `submissionId`, or for the input at `source`.
        mutating func settle(submissionId: String?, source: String?, verdict: String) {
            if let id = submissionId ?? source.flatMap({ origins[$0] }) {
                // A final verdict (entitlement, rejection, outcome) is never replaced by a dead
                // letter read later from another topic: the record may have been replayed since.
                if verdict.hasPrefix("dead-letter:"), let existing = verdicts[id], !existing.hasPrefix("dead-letter:") { return }
                // The first event of a submission is its verdict (an upgrade ends the old entitlement,
                // then starts the new); a submission re-processed after a crash is suppressed the
                // second time: it still made its change.
                if Self.actions.contains(verdict) || verdict == "duplicate-suppressed" || verdict == "stale-suppressed",
                   let existing = verdicts[id], Self.actions.contains(existing) { return }
                verdicts[id] = verdict
                accounted.insert(id)
            } else if let source {
                unattributed[source] = verdict
            }
        }
    }

    private let counts = Mutex(Counts())
    private let consumer: KafkaConsumer
    private let topics: Topics

    /// - Parameters:
    ///   - bootstrapServers: the cluster.
    ///   - topics: the pipeline's topic names.
    ///   - partitions: partitions per topic.
    ///   - properties: raw librdkafka consumer properties: the workers' own, so that on the
    ///     embedded broker (which holds an empty fetch for the whole `fetch.wait.max.ms`) the tally
    ///     sees the last outcomes as soon as the workers' consumers would, not up to 500 ms later.
    init(bootstrapServers: [String], topics: Topics, partitions: Int, properties: [String: String] = [:]) throws {
        var assignment: [KafkaTopicPartitionOffset] = []
        for topic in [topics.entitlementsChanged, topics.rejected, topics.outcomes, topics.deadLetter] {
            for p in 0..<partitions {
                assignment.append(.beginning(topic: topic, partition: Int32(p)))
            }
        }
        var configuration = KafkaConsumerConfiguration(bootstrapServers: bootstrapServers, consumptionStrategy: .partitions(assignment))
        configuration.clientId = "receiptd-tally"
        configuration.maxBufferedMessages = 10_000
        configuration.additionalProperties = properties
        consumer = try KafkaConsumer(configuration: configuration)
        self.topics = topics
    }

    /// A copy of the counts now.
    var snapshot: Counts { counts.withLock { $0 } }

    /// Submissions accounted for so far (cheaper than a snapshot).
    var accountedCount: Int { counts.withLock { $0.accounted.count } }

    /// Marks the moment `count` submissions are accounted for (now, if they already are).
    func expectAccounted(_ count: Int) {
        counts.withLock { counts in
            counts.completionTarget = count
            counts.noteCompletion()
        }
    }

    /// When ``expectAccounted(_:)``'s count was first reached, if it has been.
    var completedAt: ContinuousClock.Instant? { counts.withLock { $0.completedAt } }

    /// Submissions with a final verdict (anything but a dead letter).
    var finalCount: Int { counts.withLock { $0.verdicts.values.filter { !$0.hasPrefix("dead-letter:") }.count } }

    /// Those of `ids` with a final verdict (anything but a dead letter).
    func settled(_ ids: some Sequence<String>) -> Set<String> {
        counts.withLock { counts in
            Set(ids.filter { counts.verdicts[$0].map { !$0.hasPrefix("dead-letter:") } ?? false })
        }
    }

    /// Tells the tally where submissions were published, so verdicts that carry only their
    /// source position (ingest rejections of unparseable records) are attributed.
    func register(origins: [(String, String)]) {
        counts.withLock { counts in
            for (origin, submissionId) in origins {
                counts.origins[origin] = submissionId
                if let verdict = counts.unattributed.removeValue(forKey: origin) {
                    counts.verdicts[submissionId] = verdict
                    counts.accounted.insert(submissionId)
                }
            }
            counts.noteCompletion()
        }
    }

    /// Consumes until cancelled.
    func run() async {
        do {
            for try await message in consumer.messages {
                record(message)
            }
        } catch {}
    }

    func close() async { await consumer.close() }

    private func record(_ message: KafkaConsumerMessage) {
        // The contracts' strict parser, over a tape: the tally shares the cores with the pipeline it
        // measures, and a tree of an entitlement change (its purchase state included) built a
        // `String` for every value where the tally reads six.
        let members: JSONMembers? = switch try? JSONMembers.read(message.value, maxDepth: 32, maxTapeMembers: 64) {
        case .success(let members)?: members
        default: nil
        }
        func string(_ key: String) -> String? {
            if case .string(let value)? = members?[key] { value } else { nil }
        }
        let submissionId = string("submissionId")
        func header(_ name: String) -> String? {
            message.headers.last { $0.key == name }?.value.map { String(decoding: $0, as: UTF8.self) }
        }
        var source: String?
        if let topic = header(RecordHeaders.sourceTopic), let partition = header(RecordHeaders.sourcePartition),
           let offset = header(RecordHeaders.sourceOffset) {
            source = "\(topic)/\(partition)/\(offset)"
        }
        let position = "\(message.topic)/\(message.partition)/\(message.offset)"
        counts.withLock { counts in
            defer { counts.noteCompletion() }
            guard counts.seenPositions.insert(position).inserted else {
                counts.rereads += 1
                return
            }
            switch message.topic {
            case topics.entitlementsChanged:
                let action = string("action") ?? "?"
                let eventId = string("eventId") ?? position
                let firstCopy = counts.eventPositions[eventId, default: []].isEmpty
                guard counts.recordEvent(eventId, at: position, timestamp: message.timestamp, value: message.value) else { return }
                counts.entitlementsByAction[action, default: 0] += 1
                if firstCopy, let purchase = string("originalTransactionId"),
                   let bundleId = string("bundleId"), let userId = string("userId") {
                    counts.track(action: action, purchase: purchase, owner: bundleId + "/" + userId)
                }
                counts.settle(submissionId: submissionId, source: nil, verdict: action)
            case topics.rejected:
                let reason = string("reason") ?? "?"
                counts.rejectedByReason[reason, default: 0] += 1
                counts.settle(submissionId: submissionId, source: source, verdict: "rejected:" + reason)
            case topics.outcomes:
                let outcome = string("outcome") ?? "?"
                counts.outcomes[outcome, default: 0] += 1
                counts.settle(submissionId: submissionId, source: source, verdict: outcome)
            default:
                counts.deadLetters += 1
                let reason = header(RecordHeaders.reason) ?? "?"
                counts.deadLettersByReason[reason, default: 0] += 1
                var origin: String?
                if let topic = header(RecordHeaders.originalTopic), let partition = header(RecordHeaders.originalPartition),
                   let offset = header(RecordHeaders.originalOffset) {
                    origin = "\(topic)/\(partition)/\(offset)"
                }
                counts.settle(submissionId: submissionId, source: origin, verdict: "dead-letter:" + reason)
            }
        }
    }
}
