import Foundation
import Observability
import Synchronization
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

    /// Lazy metadata is built per emitted record only, and merges like eager metadata (later wins).
    @Test func lazyMetadataIsBuiltOnlyForEmittedRecords() {
        let handler = InMemoryLogHandler()
        let builds = Mutex(0)
        let logger = Logger(label: "t", level: .notice, handler: handler)
            .with([LoggingKeys.kafkaPartition: 1])
            .with(lazy: {
                builds.withLock { $0 += 1 }
                return [LoggingKeys.kafkaPartition: 2, LoggingKeys.kafkaOffset: 7]
            })
        logger.info("dropped")
        #expect(builds.withLock { $0 } == 0)
        logger.notice("kept", metadata: [LoggingKeys.kafkaOffset: 8])
        #expect(builds.withLock { $0 } == 1)
        #expect(handler.records.map(\.message) == ["kept"])
        #expect(handler.records[0].metadata[LoggingKeys.kafkaPartition] == 2)
        #expect(handler.records[0].metadata[LoggingKeys.kafkaOffset] == 8)
    }

    /// A second lazy layer merges after the first (later wins), both built per emitted record.
    @Test func lazyLayersMergeInOrder() {
        let handler = InMemoryLogHandler()
        let logger = Logger(label: "t", handler: handler)
            .with(lazy: { [LoggingKeys.kafkaPartition: 1, LoggingKeys.kafkaOffset: 7] })
            .with(lazy: { [LoggingKeys.kafkaPartition: 2] })
        logger.info("x")
        #expect(handler.records[0].metadata[LoggingKeys.kafkaPartition] == 2)
        #expect(handler.records[0].metadata[LoggingKeys.kafkaOffset] == 7)
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
