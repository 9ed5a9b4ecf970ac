import Foundation

/// The part of librdkafka's statistics (`statistics.interval.ms`, see librdkafka's
/// STATISTICS.md) that operators act on: queue depths, broker state and round-trip, the group's
/// state and rebalances, and each partition's consumer lag. Decoded from the JSON librdkafka
/// hands to its statistics callback; fields absent in a version decode as defaults.
public struct KafkaStatistics: Sendable, Decodable, Equatable {
    /// The client's name (`rdkafka#consumer-1`).
    public var name: String = ""
    /// `consumer` or `producer`.
    public var type: String = ""
    /// Operations (callbacks, events) waiting in the application queue (`replyq`).
    public var replyQueue: Int64 = 0
    /// Messages in the producer queues (`msg_cnt`).
    public var messageCount: Int64 = 0
    public var brokers: [String: Broker] = [:]
    public var topics: [String: Topic] = [:]
    /// Present for group consumers.
    public var consumerGroup: ConsumerGroup?

    public struct Broker: Sendable, Decodable, Equatable {
        /// `UP`, `DOWN`, `INIT`, `CONNECT`, …
        public var state: String = ""
        /// The broker's node id (`-1` for bootstrap brokers).
        public var nodeId: Int64 = -1
        /// Requests awaiting a response (`waitresp_cnt`).
        public var waitingResponses: Int64 = 0
        /// Requests waiting to be sent (`outbuf_cnt`).
        public var outboundQueue: Int64 = 0
        /// Average round-trip time in microseconds over the last interval (`rtt.avg`).
        public var rttAverageMicroseconds: Int64 = 0
        /// `configured`, `learned`, or `logical`/`internal` for librdkafka's own placeholders
        /// (the group coordinator handle), which are not separate brokers.
        public var source: String = ""

        /// Whether this entry is a real broker connection (not a placeholder).
        public var isBroker: Bool { nodeId >= 0 && source != "logical" && source != "internal" }

        enum CodingKeys: String, CodingKey {
            case state, nodeid, waitresp_cnt, outbuf_cnt, rtt, source
        }
        struct Window: Decodable { var avg: Int64? }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            state = try c.decodeIfPresent(String.self, forKey: .state) ?? ""
            nodeId = try c.decodeIfPresent(Int64.self, forKey: .nodeid) ?? -1
            waitingResponses = try c.decodeIfPresent(Int64.self, forKey: .waitresp_cnt) ?? 0
            outboundQueue = try c.decodeIfPresent(Int64.self, forKey: .outbuf_cnt) ?? 0
            rttAverageMicroseconds = try c.decodeIfPresent(Window.self, forKey: .rtt)?.avg ?? 0
            source = try c.decodeIfPresent(String.self, forKey: .source) ?? ""
        }
    }

    public struct Topic: Sendable, Decodable, Equatable {
        /// Keyed by partition number; librdkafka's internal `-1` partition is left out.
        public var partitions: [Int32: Partition] = [:]

        enum CodingKeys: String, CodingKey { case partitions }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            let raw = try c.decodeIfPresent([String: Partition].self, forKey: .partitions) ?? [:]
            for (key, value) in raw {
                if let number = Int32(key), number >= 0 { partitions[number] = value }
            }
        }
    }

    public struct Partition: Sendable, Decodable, Equatable {
        /// Messages between the committed (or stored) offset and the high watermark; `-1` when unknown.
        public var consumerLag: Int64 = -1
        /// Messages fetched and waiting for the application (`fetchq_cnt`).
        public var fetchQueue: Int64 = 0
        /// Whether this client consumes the partition (`fetch_state` other than `none`).
        public var isFetching: Bool = false
        /// The partition's high and low watermarks (`hi_offset`, `lo_offset`; `-1` when unknown).
        public var highWatermark: Int64 = -1
        public var lowWatermark: Int64 = -1

        /// The lag: librdkafka's own once the group has a committed offset; before that (a
        /// partition nobody committed on) everything retained, `hi_offset - lo_offset`. Nil when
        /// neither is known yet.
        public var lag: Int64? {
            if consumerLag >= 0 { return consumerLag }
            if highWatermark >= 0, lowWatermark >= 0 { return highWatermark - lowWatermark }
            return nil
        }

        enum CodingKeys: String, CodingKey { case consumer_lag, fetchq_cnt, fetch_state, hi_offset, lo_offset }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            consumerLag = try c.decodeIfPresent(Int64.self, forKey: .consumer_lag) ?? -1
            fetchQueue = try c.decodeIfPresent(Int64.self, forKey: .fetchq_cnt) ?? 0
            let state = try c.decodeIfPresent(String.self, forKey: .fetch_state) ?? "none"
            isFetching = state != "none" && state != "stopped"
            highWatermark = try c.decodeIfPresent(Int64.self, forKey: .hi_offset) ?? -1
            lowWatermark = try c.decodeIfPresent(Int64.self, forKey: .lo_offset) ?? -1
        }
    }

    public struct ConsumerGroup: Sendable, Decodable, Equatable {
        /// The coordinator connection state (`up` once a coordinator is known).
        public var state: String = ""
        /// The join state: `steady` once a rebalance has finished and this member has its assignment.
        public var joinState: String = ""
        /// Rebalances this member went through (`rebalance_cnt`).
        public var rebalanceCount: Int64 = 0
        /// Partitions currently assigned (`assignment_size`).
        public var assignmentSize: Int64 = 0

        enum CodingKeys: String, CodingKey { case state, join_state, rebalance_cnt, assignment_size }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            state = try c.decodeIfPresent(String.self, forKey: .state) ?? ""
            joinState = try c.decodeIfPresent(String.self, forKey: .join_state) ?? ""
            rebalanceCount = try c.decodeIfPresent(Int64.self, forKey: .rebalance_cnt) ?? 0
            assignmentSize = try c.decodeIfPresent(Int64.self, forKey: .assignment_size) ?? 0
        }
    }

    enum CodingKeys: String, CodingKey {
        case name, type, replyq, msg_cnt, brokers, topics, cgrp
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decodeIfPresent(String.self, forKey: .name) ?? ""
        type = try c.decodeIfPresent(String.self, forKey: .type) ?? ""
        replyQueue = try c.decodeIfPresent(Int64.self, forKey: .replyq) ?? 0
        messageCount = try c.decodeIfPresent(Int64.self, forKey: .msg_cnt) ?? 0
        brokers = try c.decodeIfPresent([String: Broker].self, forKey: .brokers) ?? [:]
        topics = try c.decodeIfPresent([String: Topic].self, forKey: .topics) ?? [:]
        consumerGroup = try c.decodeIfPresent(ConsumerGroup.self, forKey: .cgrp)
    }

    /// Decodes librdkafka's statistics JSON. - Returns: nil when it is not what librdkafka emits.
    public static func decode(_ json: [UInt8]) -> KafkaStatistics? {
        try? JSONDecoder().decode(KafkaStatistics.self, from: Data(json))
    }

    /// Whether a broker (other than a bootstrap placeholder) is connected. The group
    /// coordinator's logical connection counts: before its first assignment a consumer talks
    /// only to the coordinator, and that is the cluster answering.
    public var hasBrokerUp: Bool {
        brokers.values.contains { $0.state == "UP" && ($0.isBroker || $0.source == "logical") }
    }
}
