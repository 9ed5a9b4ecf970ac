import CRdKafka
import struct Foundation.Date

/// The librdkafka producer calls ``KafkaProducer`` needs, in Swift terms.
///
/// Thread-safe: librdkafka's produce, poll and flush may be called from any thread.
final class RDKafkaProducerClient: @unchecked Sendable {
    // @unchecked: only immutable state; librdkafka synchronises internally.

    private let client: RDKafkaClient

    /// Creates the producer handle.
    init(properties: [String: String], context: RDKafkaCallbackContext) throws {
        client = try RDKafkaClient(kind: .producer, properties: properties, context: context)
    }

    /// Enqueues `message` with per-message opaque `id` (returned in its delivery report).
    ///
    /// Builds an `rd_kafka_vu_t` array on the stack and calls `rd_kafka_produceva`, so there are
    /// no variadics and no per-message heap allocations besides librdkafka's own copy.
    /// - Returns: `nil` when enqueued, otherwise why not (``KafkaError/Code/queueFull`` included).
    func produce(_ message: KafkaProducerMessage, id: UInt) -> KafkaError? {
        let fixedCount = 5 + (message.key == nil ? 0 : 1) + (message.timestamp == nil ? 0 : 1)
        let count = fixedCount + message.headers.count
        return message.topic.withCString { topic in
            withOptionalBytes(message.key) { key in
                message.value.withUnsafeBytes { value in
                    withHeaderStorage(message.headers) { headerStorage in
                        withUnsafeTemporaryAllocation(of: rd_kafka_vu_t.self, capacity: count) { vus in
                            var index = 0
                            func append(_ type: rd_kafka_vtype_t, _ fill: (inout rd_kafka_vu_t) -> Void) {
                                var vu = rd_kafka_vu_t()
                                vu.vtype = type
                                fill(&vu)
                                vus.initializeElement(at: index, to: vu)
                                index += 1
                            }
                            append(RD_KAFKA_VTYPE_TOPIC) { $0.u.cstr = topic }
                            append(RD_KAFKA_VTYPE_PARTITION) { $0.u.i32 = message.partition ?? -1 }  // -1: RD_KAFKA_PARTITION_UA
                            append(RD_KAFKA_VTYPE_VALUE) {
                                $0.u.mem.ptr = UnsafeMutableRawPointer(mutating: value.baseAddress)
                                $0.u.mem.size = value.count
                            }
                            if let key {
                                append(RD_KAFKA_VTYPE_KEY) {
                                    $0.u.mem.ptr = UnsafeMutableRawPointer(mutating: key.baseAddress)
                                    $0.u.mem.size = key.count
                                }
                            }
                            append(RD_KAFKA_VTYPE_OPAQUE) { $0.u.ptr = UnsafeMutableRawPointer(bitPattern: id) }
                            append(RD_KAFKA_VTYPE_MSGFLAGS) { $0.u.i = RD_KAFKA_MSG_F_COPY }
                            if let timestamp = message.timestamp {
                                append(RD_KAFKA_VTYPE_TIMESTAMP) {
                                    $0.u.i64 = Int64((timestamp.timeIntervalSince1970 * 1000).rounded())
                                }
                            }
                            var cursor = HeaderCursor(position: headerStorage)
                            for header in message.headers {
                                let view = cursor.next(header)
                                append(RD_KAFKA_VTYPE_HEADER) {
                                    $0.u.header.name = view.name
                                    $0.u.header.val = view.value
                                    $0.u.header.size = view.size
                                }
                            }
                            defer { vus.baseAddress!.deinitialize(count: index) }
                            guard let error = rd_kafka_produceva(client.handle, vus.baseAddress, index) else {
                                return nil
                            }
                            return KafkaError(consuming: error, context: "produce to \(message.topic)")
                        }
                    }
                }
            }
        }
    }

    /// Serves queued delivery reports and errors, waiting up to `timeoutMilliseconds`.
    func poll(timeoutMilliseconds: Int32) {
        rd_kafka_poll(client.handle, timeoutMilliseconds)
    }

    /// Makes a blocked ``poll(timeoutMilliseconds:)`` return now.
    func wake() {
        rd_kafka_yield(client.handle)
    }

    /// Waits until every enqueued message has a delivery report.
    /// - Important: Blocks up to `timeoutMilliseconds`.
    func flush(timeoutMilliseconds: Int32) -> KafkaError? {
        let result = rd_kafka_flush(client.handle, timeoutMilliseconds)
        guard result != RD_KAFKA_RESP_ERR_NO_ERROR else { return nil }
        return KafkaError(
            result, context: "flush left \(rd_kafka_outq_len(client.handle)) messages or requests outstanding")
    }

    /// Messages (and requests) librdkafka has not settled yet.
    var outstandingCount: Int { Int(rd_kafka_outq_len(client.handle)) }

    /// Fails every message still waiting in librdkafka's queues (not yet in a request to a
    /// broker) with `_PURGE_QUEUE`, without blocking; messages already sent keep their outcome.
    func purgeQueued() -> KafkaError? {
        let flags = Int32(RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_NON_BLOCKING)
        let result = rd_kafka_purge(client.handle, flags)
        return result == RD_KAFKA_RESP_ERR_NO_ERROR ? nil : KafkaError(result, context: "purge")
    }

    /// The client's fatal error, if any.
    func fatalError() -> KafkaError? {
        client.fatalError()
    }
}

/// Copies header names (NUL-terminated) and values into one contiguous buffer and passes a
/// pointer to it: one allocation per message with headers, none without. ``HeaderCursor``
/// walks the buffer in the same order.
private func withHeaderStorage<T>(_ headers: [KafkaHeader], _ body: (UnsafeRawPointer?) -> T) -> T {
    if headers.isEmpty { return body(nil) }
    var storage: [UInt8] = []
    storage.reserveCapacity(headers.reduce(0) { $0 + $1.key.utf8.count + 1 + ($1.value?.count ?? 0) })
    for header in headers {
        storage.append(contentsOf: header.key.utf8)
        storage.append(0)
        if let value = header.value { storage.append(contentsOf: value) }
    }
    return storage.withUnsafeBytes { body($0.baseAddress) }
}

/// Reads back the layout written by ``withHeaderStorage(_:_:)``, header by header.
private struct HeaderCursor {
    var position: UnsafeRawPointer?

    /// The C name, value and size of `header`, advancing past it.
    mutating func next(_ header: KafkaHeader) -> (name: UnsafePointer<CChar>, value: UnsafeRawPointer?, size: Int) {
        let base = position!
        let name = base.assumingMemoryBound(to: CChar.self)
        let valueStart = base + header.key.utf8.count + 1
        let size = header.value?.count ?? 0
        position = valueStart + size
        return (name, header.value == nil ? nil : valueStart, size)
    }
}

/// `withUnsafeBytes` for an optional array.
private func withOptionalBytes<T>(_ bytes: [UInt8]?, _ body: (UnsafeRawBufferPointer?) -> T) -> T {
    guard let bytes else { return body(nil) }
    return bytes.withUnsafeBytes { body($0) }
}
