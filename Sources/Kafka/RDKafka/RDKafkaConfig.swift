import CRdKafka

/// Builds an `rd_kafka_conf_t` from string properties: the single point where typed
/// configuration becomes librdkafka's strings.
enum RDKafkaConfig {
    /// Creates a configuration object. The caller owns it until it hands it to `rd_kafka_new`.
    /// - Parameter properties: librdkafka property names and values.
    /// - Returns: A new `rd_kafka_conf_t *`.
    /// - Throws: ``KafkaError`` (``KafkaError/Code/invalidConfiguration``) naming the rejected key.
    static func make(_ properties: [String: String]) throws -> OpaquePointer {
        guard let conf = rd_kafka_conf_new() else {
            throw KafkaError.invalidConfiguration("rd_kafka_conf_new failed")
        }
        var errorText = [CChar](repeating: 0, count: 512)
        for (key, value) in properties.sorted(by: { $0.key < $1.key }) {
            let result = rd_kafka_conf_set(conf, key, value, &errorText, errorText.count)
            if result != RD_KAFKA_CONF_OK {
                rd_kafka_conf_destroy(conf)
                let reason = String(decoding: errorText.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                throw KafkaError.invalidConfiguration("librdkafka rejected \"\(key)\": \(reason)")
            }
        }
        return conf
    }
}
