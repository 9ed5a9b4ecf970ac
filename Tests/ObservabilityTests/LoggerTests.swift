import Foundation
import Observability
import Testing

@Suite struct LoggerTests {
    @Test func dropsRecordsBelowLevelWithoutBuildingThem() {
        let handler = InMemoryLogHandler()
        let logger = Logger(label: "t", level: .warning, handler: handler)
        logger.info("\(Self.mustNotBeCalled())")
        logger.warning("kept", metadata: ["k": 1])
        #expect(handler.records.map(\.message) == ["kept"])
        #expect(handler.records.first?.metadata["k"] == .int(1))
    }

    static func mustNotBeCalled() -> String {
        Issue.record("message autoclosure evaluated below level")
        return ""
    }

    @Test func mergesLoggerAndRecordMetadata() {
        let handler = InMemoryLogHandler()
        var logger = Logger(label: "t", handler: handler)
        logger[metadataKey: LoggingKeys.stageName] = "verify"
        logger.with([LoggingKeys.kafkaPartition: 3]).info("x", metadata: [LoggingKeys.kafkaOffset: 42])
        let record = handler.records[0]
        #expect(record.metadata[LoggingKeys.stageName] == "verify")
        #expect(record.metadata[LoggingKeys.kafkaPartition] == 3)
        #expect(record.metadata[LoggingKeys.kafkaOffset] == 42)
    }

    @Test func jsonLinesAreValidJSONWithEscapes() throws {
        var pipe: [Int32] = [0, 0]
        #expect(Foundation.pipe(&pipe) == 0)
        let handler = JSONLogHandler(fileDescriptor: pipe[1])
        Logger(label: "l\"x", handler: handler).error("line\nbreak \u{1}", metadata: ["a.b": "q\"", "n": 2, "f": true])
        close(pipe[1])
        let data = FileHandle(fileDescriptor: pipe[0], closeOnDealloc: true).readDataToEndOfFile()
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.hasSuffix("}\n"))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["msg"] as? String == "line\nbreak \u{1}")
        #expect(object["logger"] as? String == "l\"x")
        #expect(object["level"] as? String == "error")
        #expect(object["a.b"] as? String == "q\"")
        #expect(object["n"] as? Int == 2)
        #expect(object["f"] as? Bool == true)
    }
}
