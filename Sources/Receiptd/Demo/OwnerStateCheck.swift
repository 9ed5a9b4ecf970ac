import Foundation
import Kafka
import Pipeline

/// The end-of-run check of the owner view: reads all of `entitlements.state` (every partition to
/// its high watermark, the last value per key) and compares every key with the generator's
/// expected state; a key the generator did not expect is wrong too.
///
/// The view is eventually consistent, so the check polls: it reads again whenever the view or
/// the owners group's progress moved, and stops when every key matches, when the view has not
/// changed since the last read and the group has no lag left (settled, and wrong), or when
/// nothing has moved for the stall timeout.
struct OwnerStateCheck {
    struct Mismatch: Sendable {
        var key: String
        var expected: String
        var actual: String
    }

    struct Result: Sendable {
        var checked = 0
        var wrong: [Mismatch] = []
        /// Keys in the view the generator did not expect.
        var unexpected: [String] = []
        var passed: Bool { wrong.isEmpty && unexpected.isEmpty }
    }

    let bootstrapServers: [String]
    let topics: Topics
    let ownersGroup: String
    /// The owners group's input partitions (input and retry tiers), for its lag.
    let ownersInputs: [KafkaTopicPartition]
    /// Partitions of the view.
    let partitions: Int
    let stallTimeout: Duration

    func run(expected: [String: ExpectedEntitlement]) async -> Result {
        var result = Result(checked: expected.count)
        var readAt: Progress?
        var lastMove = ContinuousClock.now
        guard let admin = try? KafkaAdminClient(bootstrapServers: bootstrapServers) else {
            result.wrong.append(Mismatch(key: "(all)", expected: "a readable view", actual: "no admin client"))
            return result
        }
        while true {
            let progress = await self.progress(admin)
            if progress != readAt {
                do {
                    result = Self.compare(expected, try await readView())
                } catch {
                    result.wrong = [Mismatch(key: "(all)", expected: "a readable view", actual: "\(error)")]
                }
                if result.passed { return result }
                readAt = progress
                lastMove = .now
            } else if progress?.lag == 0 {
                return result
            }
            if ContinuousClock.now - lastMove > stallTimeout { return result }
            try? await Task.sleep(for: .milliseconds(500))
        }
    }

    /// The view's high watermarks and the owners group's lag (nil when the cluster does not answer).
    private struct Progress: Equatable {
        var viewEnds: [Int64]
        var lag: Int64
    }

    private func progress(_ admin: KafkaAdminClient) async -> Progress? {
        do {
            var viewEnds: [Int64] = []
            for partition in 0..<Int32(partitions) {
                viewEnds.append(try await admin.watermarks(topic: topics.entitlementState, partition: partition).high)
            }
            var lag: Int64 = 0
            for position in try await admin.committedOffsets(group: ownersGroup, partitions: ownersInputs) {
                let end = try await admin.watermarks(topic: position.topic, partition: position.partition).high
                lag += max(0, end - max(position.offset, 0))
            }
            return Progress(viewEnds: viewEnds, lag: lag)
        } catch {
            return nil
        }
    }

    /// The newest value of every key of the view.
    private func readView() async throws -> [String: EntitlementState] {
        let reader = KafkaPartitionLogReader(bootstrapServers: bootstrapServers, clientId: "receiptd-owner-check",
                                             idleTimeout: .seconds(10))
        var view: [String: EntitlementState] = [:]
        try await reader.read(topic: topics.entitlementState, partitions: (0..<Int32(partitions)).map { $0 }) { record in
            guard let key = record.key.map({ String(decoding: $0, as: UTF8.self) }) else { return }
            view[key] = try? ContractCoding.decode(EntitlementState.self, from: record.value)
        }
        return view
    }

    private static func compare(_ expected: [String: ExpectedEntitlement], _ view: [String: EntitlementState]) -> Result {
        var result = Result(checked: expected.count)
        for (key, want) in expected.sorted(by: { $0.key < $1.key }) {
            let got = view[key].map(ExpectedEntitlement.init)
            if got != want {
                result.wrong.append(Mismatch(key: key, expected: want.description, actual: got?.description ?? "(no state)"))
            }
        }
        result.unexpected = view.keys.filter { expected[$0] == nil }.sorted()
        return result
    }
}
