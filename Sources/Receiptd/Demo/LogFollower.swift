import Foundation

/// Reads the lines a process appends to its log file, each once, from where the last read stopped
/// (`tail -f` in small form). `receiptd dev` follows each worker's log for its readiness line.
struct LogFollower {
    let path: String
    private var offset: UInt64 = 0
    /// The start of a line whose newline has not been written yet.
    private var partial = Data()

    init(path: String) {
        self.path = path
    }

    /// The complete lines appended since the last call (none if the file is missing).
    mutating func newLines() -> [String] {
        guard let handle = FileHandle(forReadingAtPath: path) else { return [] }
        defer { try? handle.close() }
        guard (try? handle.seek(toOffset: offset)) != nil, let data = try? handle.readToEnd(), !data.isEmpty else { return [] }
        offset += UInt64(data.count)
        partial.append(data)
        guard let lastNewline = partial.lastIndex(of: UInt8(ascii: "\n")) else { return [] }
        let complete = partial[partial.startIndex..<lastNewline]
        partial = Data(partial[(lastNewline + 1)...])
        return complete.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true)
            .map { String(decoding: $0, as: UTF8.self) }
    }

    /// Whether `line` is a JSON log record whose message is `message`.
    static func isRecord(_ line: String, message: String) -> Bool {
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return false }
        return object["msg"] as? String == message
    }
}
