import Foundation

/// A structured logger passed explicitly down the call tree (libraries accept a logger, never create one).
///
/// Shaped after swift-log: a cheap value type carrying a label, a minimum level, metadata that is
/// attached to every record, and a ``LogHandler`` that decides where records go. Messages and
/// metadata are autoclosures, so a record below the level costs one comparison.
///
/// - Important: never log secrets, whole receipts or whole JWS strings; log hashes or ids
///   (see ``LoggingKeys``).
public struct Logger: Sendable {
    /// Severity, ordered from the most verbose to the most severe.
    public enum Level: Int, Sendable, Comparable, CaseIterable, CustomStringConvertible {
        case trace, debug, info, notice, warning, error, critical

        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }

        public var description: String {
            switch self {
            case .trace: "trace"
            case .debug: "debug"
            case .info: "info"
            case .notice: "notice"
            case .warning: "warning"
            case .error: "error"
            case .critical: "critical"
            }
        }

        /// Parses `trace|debug|info|notice|warning|error|critical` (case-insensitive).
        public init?(name: String) {
            guard let level = Level.allCases.first(where: { $0.description == name.lowercased() }) else { return nil }
            self = level
        }
    }

    /// Metadata attached to a record: dotted keys (``LoggingKeys``) to values.
    public typealias Metadata = [String: MetadataValue]

    /// What produced the records, e.g. `receiptd.verify`.
    public var label: String
    /// Records below this level are dropped before their message is built.
    public var logLevel: Level
    /// Metadata added to every record of this logger.
    public var metadata: Metadata
    /// Metadata built only when a record is emitted (``with(lazy:)``), merged after ``metadata``.
    /// One closure, not a list: a per-record logger then costs no array of its own.
    private var deferred: (@Sendable () -> Metadata)?
    /// Where records go.
    public var handler: any LogHandler

    /// Creates a logger.
    /// - Parameters:
    ///   - label: the component name.
    ///   - level: the minimum level that is emitted.
    ///   - handler: the destination; JSON lines on standard error by default.
    public init(label: String, level: Level = .info, handler: any LogHandler = JSONLogHandler.standardError) {
        self.label = label
        self.logLevel = level
        self.metadata = [:]
        self.handler = handler
    }

    /// A logger that discards everything (tests and benchmarks that do not care).
    public static let disabled = Logger(label: "disabled", level: .critical, handler: DiscardingLogHandler())

    /// Reads or sets one metadata value of this logger.
    public subscript(metadataKey key: String) -> MetadataValue? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Returns a copy of this logger with extra metadata merged in.
    public func with(_ extra: Metadata) -> Logger {
        var copy = self
        copy.metadata.merge(extra) { _, new in new }
        return copy
    }

    /// Returns a copy of this logger whose records also carry `extra`, built only when a record is
    /// emitted: for per-record loggers (the stage runner's), most of which never log at their level.
    public func with(lazy extra: @escaping @Sendable () -> Metadata) -> Logger {
        var copy = self
        if let earlier = deferred {
            copy.deferred = { earlier().merging(extra()) { _, new in new } }
        } else {
            copy.deferred = extra
        }
        return copy
    }

    /// Emits one record if `level` is at or above ``logLevel``.
    public func log(level: Level, _ message: @autoclosure () -> String,
                    metadata extra: @autoclosure () -> Metadata? = nil) {
        guard level >= logLevel else { return }
        var merged = metadata
        if let deferred { merged.merge(deferred()) { _, new in new } }
        if let extra = extra() { merged.merge(extra) { _, new in new } }
        handler.log(LogRecord(timestamp: Date(), level: level, label: label, message: message(), metadata: merged))
    }

    public func trace(_ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata? = nil) {
        log(level: .trace, message(), metadata: metadata())
    }
    public func debug(_ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata? = nil) {
        log(level: .debug, message(), metadata: metadata())
    }
    public func info(_ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata? = nil) {
        log(level: .info, message(), metadata: metadata())
    }
    public func notice(_ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata? = nil) {
        log(level: .notice, message(), metadata: metadata())
    }
    public func warning(_ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata? = nil) {
        log(level: .warning, message(), metadata: metadata())
    }
    public func error(_ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata? = nil) {
        log(level: .error, message(), metadata: metadata())
    }
    public func critical(_ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata? = nil) {
        log(level: .critical, message(), metadata: metadata())
    }
}
