import Foundation

/// Kafka through `kcat`, a client receiptd did not write, as an app backend would use it: produce
/// `key<TAB>value` lines, read whole topics back.
struct Kcat {
    static let path = ["/usr/bin/kcat", "/usr/local/bin/kcat"].first { FileManager.default.isExecutableFile(atPath: $0) }
    static var available: Bool { path != nil }

    let bootstrap: String

    /// A record read back.
    struct Record {
        let key: String
        let value: String
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(value.utf8))) as? [String: Any] ?? [:] }
    }

    /// Produces records (single-line values) to `topic`, keyed.
    func produce(_ topic: String, _ records: [(key: String, value: [UInt8])]) throws {
        let input = records.map { $0.key + "\t" + String(decoding: $0.value, as: UTF8.self) }.joined(separator: "\n") + "\n"
        let (status, _, errors) = try run(["-P", "-b", bootstrap, "-t", topic, "-K", "\t"], input: input)
        guard status == 0 else { throw KcatError(description: "kcat produce to \(topic) exited \(status): \(errors)") }
    }

    /// Every record of `topic` (all partitions, from the beginning to the end).
    func consume(_ topic: String) throws -> [Record] {
        let (status, output, errors) = try run(["-C", "-b", bootstrap, "-t", topic, "-o", "beginning", "-e", "-q",
                                                "-f", "%k\t%s\n"], input: nil)
        guard status == 0 else { throw KcatError(description: "kcat consume of \(topic) exited \(status): \(errors)") }
        return output.split(separator: "\n").compactMap { line -> Record? in
            let parts = line.split(separator: "\t", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2 else { return nil }
            return Record(key: String(parts[0]), value: String(parts[1]))
        }
    }

    private func run(_ arguments: [String], input: String?) throws -> (Int32, String, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.path ?? "kcat")
        process.arguments = arguments
        let output = Pipe(), errors = Pipe(), stdin = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = stdin
        try process.run()
        if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
        try stdin.fileHandleForWriting.close()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
    }
}

struct KcatError: Error, CustomStringConvertible {
    let description: String
}
