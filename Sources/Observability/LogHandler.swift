import Foundation

/// One log event as handed to a ``LogHandler``.
public struct LogRecord: Sendable {
    public var timestamp: Date
    public var level: Logger.Level
    public var label: String
    public var message: String
    public var metadata: Logger.Metadata

    public init(timestamp: Date, level: Logger.Level, label: String, message: String, metadata: Logger.Metadata) {
        self.timestamp = timestamp
        self.level = level
        self.label = label
        self.message = message
        self.metadata = metadata
    }
}

/// Where log records go. Handlers are shared across tasks, hence `Sendable`.
public protocol LogHandler: Sendable {
    /// Writes or keeps one record. Must not block for long: it is called on hot paths.
    func log(_ record: LogRecord)
}

/// Drops every record.
public struct DiscardingLogHandler: LogHandler {
    public init() {}
    public func log(_ record: LogRecord) {}
}
