import Foundation
import Kafka

/// Looks owners up in the per-owner view (`entitlements.state`) without reading all of it: each
/// `bundleId/userId/entitlement` key lives in the partition the producer's partitioner chose for
/// it on `entitlements.owner-updates` (co-partitioned), and receiptd's producers keep librdkafka's
/// default `consistent_random` partitioner: CRC-32 of the key modulo the partition count.
public struct OwnerViewReader: Sendable {
    private let reader: any PartitionLogReader
    private let topic: String

    /// - Parameters:
    ///   - reader: reads the view's topic.
    ///   - topic: `entitlements.state`.
    public init(reader: any PartitionLogReader, topic: String) {
        self.reader = reader
        self.topic = topic
    }

    /// The newest state of each of `owner`'s entitlements among `entitlements`, ordered by name.
    /// - Parameter partitions: the topic's partition count.
    public func states(of owner: OwnerKey, entitlements: Set<String>, partitions: Int) async throws -> [EntitlementState] {
        let keys = Set(entitlements.map { OwnerEntitlementKey(owner: owner, entitlement: $0).encoded })
        let numbers = Set(keys.map { Self.partition(of: $0, partitions: partitions) }).sorted()
        var found: [String: EntitlementState] = [:]
        try await reader.read(topic: topic, partitions: numbers) { record in
            guard let key = record.key.map({ String(decoding: $0, as: UTF8.self) }), keys.contains(key),
                  let state = try? ContractCoding.decode(EntitlementState.self, from: record.value) else { return }
            found[key] = state
        }
        return found.values.sorted { $0.entitlement < $1.entitlement }
    }

    /// The partition librdkafka's `consistent_random` partitioner gives a non-empty key.
    public static func partition(of key: String, partitions: Int) -> Int32 {
        Int32(CRC32.checksum(Array(key.utf8)) % UInt32(max(1, partitions)))
    }
}

/// CRC-32 (IEEE 802.3, reflected, as zlib and librdkafka's `rd_crc32` compute it).
enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }
}
