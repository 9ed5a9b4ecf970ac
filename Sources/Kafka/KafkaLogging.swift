import Glibc
import Synchronization

/// One log line from librdkafka (connection failures, rebalances, commit problems).
public struct KafkaLogRecord: Sendable {
    /// syslog severity as librdkafka reports it: 0 emergency … 3 error, 4 warning, 5 notice, 6 info, 7 debug.
    public var severity: Int32
    /// librdkafka's facility, e.g. `FAIL`, `COMMITFAIL`, `REQTMOUT`.
    public var facility: String
    /// The message, which starts with the client's name.
    public var message: String
}

/// Where librdkafka's own log lines go, process-wide (librdkafka logs from its internal threads,
/// before any Swift object could be asked).
///
/// By default lines of severity warning and above are written to standard error, as librdkafka
/// itself would; a worker installs a sink once at start-up to turn them into structured log
/// records instead.
public enum KafkaLogging {
    private static let sink = Mutex<(@Sendable (KafkaLogRecord) -> Void)?>(nil)

    /// Installs (or with `nil` removes) the process-wide sink.
    public static func bootstrap(_ handler: (@Sendable (KafkaLogRecord) -> Void)?) {
        sink.withLock { $0 = handler }
    }

    /// Delivers one record (called on librdkafka's threads).
    static func emit(_ record: KafkaLogRecord) {
        if let handler = sink.withLock({ $0 }) {
            handler(record)
        } else if record.severity <= 4 {
            let line = "%\(record.severity)|\(record.facility)| \(record.message)\n"
            _ = line.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count - 1) }
        }
    }
}
