import Foundation
import Testing
@testable import Receiptd

/// ``LogFollower`` hands out each complete line once, holds a line until its newline is written,
/// and recognises a JSON log record by its message.
@Suite struct LogFollowerTests {
    @Test func returnsEachCompleteLineOnce() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("receiptd-follow-\(UUID().uuidString).log").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        var follower = LogFollower(path: path)
        #expect(follower.newLines().isEmpty)  // not created yet
        FileManager.default.createFile(atPath: path, contents: Data("one\ntw".utf8))
        #expect(follower.newLines() == ["one"])
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        handle.seekToEndOfFile()
        handle.write(Data("o\nthree\n".utf8))
        try handle.close()
        #expect(follower.newLines() == ["two", "three"])
        #expect(follower.newLines().isEmpty)
    }

    @Test func recognisesARecordByItsMessage() {
        let line = #"{"ts":"2026-12-01T00:00:00.000Z","level":"notice","logger":"receiptd.verify","msg":"partitions assigned"}"#
        #expect(LogFollower.isRecord(line, message: "partitions assigned"))
        #expect(!LogFollower.isRecord(line, message: "stage worker started"))
        #expect(!LogFollower.isRecord("partitions assigned", message: "partitions assigned"))
    }
}
