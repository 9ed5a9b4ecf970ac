import CRdKafka
import Dispatch

/// The Swift side of librdkafka's callbacks. One instance is registered as the
/// configuration opaque of each `rd_kafka_t`.
///
/// - Important: Lifetime. ``RDKafkaClient`` retains its context for as long as the handle
///   exists and destroys the handle before releasing it, so a C callback can always
///   turn the opaque pointer back into this object with `takeUnretainedValue()`.
final class RDKafkaCallbackContext: Sendable {
    /// A delivery report for a message produced with opaque `id`.
    let delivery: (@Sendable (RDKafkaDelivery) -> Void)?
    /// A client-level error from `error_cb`.
    let error: (@Sendable (KafkaError) -> Void)?
    /// Rebalance steps for consumers in a group.
    let rebalance: RDKafkaRebalanceHandlers?
    /// librdkafka's statistics JSON (`stats_cb`), every `statistics.interval.ms`.
    let statistics: (@Sendable ([UInt8]) -> Void)?

    init(
        delivery: (@Sendable (RDKafkaDelivery) -> Void)? = nil,
        error: (@Sendable (KafkaError) -> Void)? = nil,
        rebalance: RDKafkaRebalanceHandlers? = nil,
        statistics: (@Sendable ([UInt8]) -> Void)? = nil
    ) {
        self.delivery = delivery
        self.error = error
        self.rebalance = rebalance
        self.statistics = statistics
    }

    static func from(_ opaque: UnsafeMutableRawPointer?) -> RDKafkaCallbackContext? {
        guard let opaque else { return nil }
        return Unmanaged<RDKafkaCallbackContext>.fromOpaque(opaque).takeUnretainedValue()
    }
}

/// One delivery report, reduced to plain values in the callback.
struct RDKafkaDelivery: Sendable {
    var id: UInt
    var errorCode: Int32
    var partition: Int32
    var offset: Int64
    /// Milliseconds since the epoch, or `-1` when unknown.
    var timestampMilliseconds: Int64
}

/// Owns one `rd_kafka_t` handle: created in `init`, destroyed exactly once when the
/// owner goes away.
///
/// - Important: `rd_kafka_destroy` blocks (it joins librdkafka's threads), so `deinit`
///   hands it to ``BlockingExecutor`` instead of blocking whichever thread dropped the
///   last reference.
final class RDKafkaClient: @unchecked Sendable {
    // @unchecked: `handle` is immutable and librdkafka's API is thread-safe for the calls we make.

    enum Kind {
        case producer, consumer
    }

    /// The `rd_kafka_t *`.
    let handle: OpaquePointer
    /// Kept alive for as long as `handle`; see ``RDKafkaCallbackContext``.
    private let context: RDKafkaCallbackContext

    /// Creates the handle.
    /// - Parameters:
    ///   - kind: Producer or consumer.
    ///   - properties: librdkafka properties.
    ///   - context: Callback targets; retained until the handle is destroyed.
    /// - Throws: ``KafkaError`` when a property is rejected or `rd_kafka_new` fails.
    init(kind: Kind, properties: [String: String], context: RDKafkaCallbackContext) throws {
        let conf = try RDKafkaConfig.make(properties)
        rd_kafka_conf_set_opaque(conf, Unmanaged.passUnretained(context).toOpaque())
        if context.delivery != nil { rd_kafka_conf_set_dr_msg_cb(conf, rdKafkaDeliveryCallback) }
        if context.error != nil { rd_kafka_conf_set_error_cb(conf, rdKafkaErrorCallback) }
        if context.rebalance != nil { rd_kafka_conf_set_rebalance_cb(conf, rdKafkaRebalanceCallback) }
        if context.statistics != nil { rd_kafka_conf_set_stats_cb(conf, rdKafkaStatisticsCallback) }
        rd_kafka_conf_set_log_cb(conf, rdKafkaLogCallback)

        var errorText = [CChar](repeating: 0, count: 512)
        let type = kind == .producer ? RD_KAFKA_PRODUCER : RD_KAFKA_CONSUMER
        guard let handle = rd_kafka_new(type, conf, &errorText, errorText.count) else {
            rd_kafka_conf_destroy(conf)  // rd_kafka_new only takes ownership on success
            let reason = String(decoding: errorText.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw KafkaError.invalidConfiguration("rd_kafka_new failed: \(reason)")
        }
        self.handle = handle
        self.context = context
    }

    deinit {
        let doomed = RDKafkaDoomedHandle(handle: handle, context: context)
        BlockingExecutor.shared.execute { doomed.destroy() }
    }

    /// The client's fatal error, if one was raised (`rd_kafka_fatal_error`).
    func fatalError() -> KafkaError? {
        var text = [CChar](repeating: 0, count: 512)
        let code = rd_kafka_fatal_error(handle, &text, text.count)
        guard code != RD_KAFKA_RESP_ERR_NO_ERROR else { return nil }
        let reason = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return KafkaError(code: .init(code), message: reason, isRetriable: false, isFatal: true)
    }
}

/// A handle on its way to `rd_kafka_destroy`, together with the context its callbacks use.
private struct RDKafkaDoomedHandle: @unchecked Sendable {
    // @unchecked: owned exclusively by the one block that destroys it.
    let handle: OpaquePointer
    let context: RDKafkaCallbackContext

    func destroy() {
        rd_kafka_destroy(handle)
        withExtendedLifetime(context) {}
    }
}

// MARK: - C callbacks (free functions that capture nothing; context comes through the opaque)

private func rdKafkaDeliveryCallback(
    _ rk: OpaquePointer?, _ message: UnsafePointer<rd_kafka_message_t>?, _ opaque: UnsafeMutableRawPointer?
) {
    guard let message, let context = RDKafkaCallbackContext.from(opaque), let delivery = context.delivery else {
        return
    }
    var timestampType = RD_KAFKA_TIMESTAMP_NOT_AVAILABLE
    let timestamp = rd_kafka_message_timestamp(message, &timestampType)
    delivery(
        RDKafkaDelivery(
            id: UInt(bitPattern: message.pointee._private),
            errorCode: message.pointee.err.rawValue,
            partition: message.pointee.partition,
            offset: message.pointee.offset,
            timestampMilliseconds: timestampType == RD_KAFKA_TIMESTAMP_NOT_AVAILABLE ? -1 : timestamp
        ))
}

private func rdKafkaErrorCallback(
    _ rk: OpaquePointer?, _ code: Int32, _ reason: UnsafePointer<CChar>?, _ opaque: UnsafeMutableRawPointer?
) {
    guard let context = RDKafkaCallbackContext.from(opaque), let report = context.error else { return }
    var text = reason.map { String(cString: $0) } ?? ""
    var code = code
    let isFatal = code == RD_KAFKA_RESP_ERR__FATAL.rawValue
    if isFatal, let rk {
        var buffer = [CChar](repeating: 0, count: 512)
        code = rd_kafka_fatal_error(rk, &buffer, buffer.count).rawValue
        text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
    report(KafkaError(code: .init(rawValue: code), message: text, isFatal: isFatal))
}

/// librdkafka's `log_cb`: hands each line to ``KafkaLogging`` (a free function, as C requires).
/// Copies the statistics JSON out and returns 0, so librdkafka frees its buffer.
private func rdKafkaStatisticsCallback(
    _ rk: OpaquePointer?, _ json: UnsafeMutablePointer<CChar>?, _ length: Int, _ opaque: UnsafeMutableRawPointer?
) -> Int32 {
    guard let json, let context = RDKafkaCallbackContext.from(opaque), let statistics = context.statistics else { return 0 }
    statistics(Array(UnsafeRawBufferPointer(start: json, count: length)))
    return 0
}

private func rdKafkaLogCallback(_ rk: OpaquePointer?, _ level: Int32, _ facility: UnsafePointer<CChar>?,
                                _ message: UnsafePointer<CChar>?) {
    KafkaLogging.emit(KafkaLogRecord(severity: level, facility: facility.map { String(cString: $0) } ?? "",
                                     message: message.map { String(cString: $0) } ?? ""))
}
