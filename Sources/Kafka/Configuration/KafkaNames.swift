/// Shared checks behind the `validate()` methods, each returning a precise problem
/// description (or `nil`) so every configuration type reports errors the same way.
enum KafkaNames {
    /// Kafka's topic name rules: 1...249 characters from `[a-zA-Z0-9._-]`, not `.` or `..`.
    static func topicProblem(_ topic: String, field: String) -> String? {
        if topic.isEmpty { return "\(field) must not be empty" }
        if topic.utf8.count > 249 {
            return "\(field) \"\(topic.prefix(40))…\" is \(topic.utf8.count) bytes; Kafka allows at most 249"
        }
        if topic == "." || topic == ".." { return "\(field) must not be \"\(topic)\"" }
        let allowed = topic.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2E || byte == 0x5F || byte == 0x2D
        }
        if !allowed {
            return "\(field) \"\(topic)\" may only contain ASCII letters, digits, '.', '_' and '-'"
        }
        return nil
    }

    /// `host:port` entries (optionally `PROTOCOL://host:port`), at least one.
    static func bootstrapProblem(_ servers: [String], field: String) -> String? {
        if servers.isEmpty { return "\(field) must list at least one \"host:port\"" }
        for server in servers {
            var address = Substring(server)
            if let scheme = address.firstRange(of: "://") { address = address[scheme.upperBound...] }
            if address.contains(where: { $0 == "," || $0 == " " || $0 == "\t" }) {
                return "\(field) entry \"\(server)\" must be a single \"host:port\" (use one array element per broker)"
            }
            guard let colon = address.lastIndex(of: ":"), colon != address.startIndex else {
                return "\(field) entry \"\(server)\" must have the form \"host:port\""
            }
            guard let port = Int(address[address.index(after: colon)...]), (1...65_535).contains(port) else {
                return "\(field) entry \"\(server)\" has an invalid port; expected 1...65535"
            }
        }
        return nil
    }

    /// A duration that must lie in `range` (in milliseconds), for librdkafka's `*.ms` properties.
    static func durationProblem(
        _ duration: Duration, field: String, atLeastMilliseconds low: Int64, atMostMilliseconds high: Int64
    ) -> String? {
        let milliseconds = duration.kafkaMilliseconds
        if duration < .zero || milliseconds < low || milliseconds > high {
            return "\(field) must be between \(low) ms and \(high) ms, got \(duration)"
        }
        return nil
    }

    /// A problem for any `additionalProperties` key that a typed field or a fixed semantic owns.
    static func reservedKeyProblem(_ properties: [String: String], reserved: [String: String]) -> String? {
        for key in properties.keys.sorted() {
            if let owner = reserved[key] {
                return "additionalProperties[\"\(key)\"] is not allowed: \(owner)"
            }
            if key.isEmpty { return "additionalProperties contains an empty key" }
        }
        return nil
    }
}

extension Duration {
    /// The duration in whole milliseconds (rounded down), the unit librdkafka's properties use.
    var kafkaMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
