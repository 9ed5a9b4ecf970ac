import Foundation
import Synchronization

/// Writes each record as one JSON object per line (`ts`, `level`, `logger`, `msg`, then metadata keys),
/// the format log shippers ingest without parsing rules.
///
/// Writes are serialised by a lock so concurrent records never interleave within a line.
public final class JSONLogHandler: LogHandler {
    private let fileDescriptor: Int32
    private let lock = Mutex(())

    /// A handler writing to standard error (standard output stays free for command results).
    public static let standardError = JSONLogHandler(fileDescriptor: 2)
    /// A handler writing to standard output.
    public static let standardOutput = JSONLogHandler(fileDescriptor: 1)

    /// - Parameter fileDescriptor: an open descriptor the handler writes to; it never closes it.
    public init(fileDescriptor: Int32) {
        self.fileDescriptor = fileDescriptor
    }

    public func log(_ record: LogRecord) {
        var line = "{\"ts\":\""
        line += JSONLogHandler.timestamp(record.timestamp)
        line += "\",\"level\":\"\(record.level)\",\"logger\":"
        JSONString.appendQuoted(record.label, to: &line)
        line += ",\"msg\":"
        JSONString.appendQuoted(record.message, to: &line)
        for key in record.metadata.keys.sorted() {
            line += ","
            JSONString.appendQuoted(key, to: &line)
            line += ":"
            switch record.metadata[key]! {
            case .string(let s): JSONString.appendQuoted(s, to: &line)
            case .int(let i): line += String(i)
            case .double(let d): line += d.isFinite ? String(d) : "null"
            case .bool(let b): line += b ? "true" : "false"
            }
        }
        line += "}\n"
        let fd = fileDescriptor
        lock.withLock { _ in
            var bytes = Array(line.utf8)
            var offset = 0
            while offset < bytes.count {
                let written = bytes.withUnsafeMutableBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
                if written <= 0 { if errno == EINTR { continue }; return }
                offset += written
            }
            bytes.removeAll()
        }
    }

    /// RFC 3339 UTC with milliseconds.
    static func timestamp(_ date: Date) -> String {
        RFC3339.string(from: date, fractionalSeconds: true)
    }
}
