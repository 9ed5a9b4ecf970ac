import Synchronization

/// Keeps records in memory so tests can assert what was logged (and that nothing secret was).
public final class InMemoryLogHandler: LogHandler {
    private let storage = Mutex<[LogRecord]>([])

    public init() {}

    public func log(_ record: LogRecord) {
        storage.withLock { $0.append(record) }
    }

    /// Every record so far, oldest first.
    public var records: [LogRecord] { storage.withLock { $0 } }

    /// Forgets every record.
    public func reset() { storage.withLock { $0.removeAll() } }
}
