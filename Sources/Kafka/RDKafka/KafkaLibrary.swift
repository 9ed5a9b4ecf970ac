import CRdKafka

/// Facts about the linked librdkafka.
public enum KafkaLibrary {
    /// The version string (`2.0.2`), for build info and bug reports.
    public static var version: String { String(cString: rd_kafka_version_str()) }
}
