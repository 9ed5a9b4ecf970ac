import Foundation
import Kafka
import Observability

extension ConfigLoader {
    /// The loader every command uses: the given files in order, then `RECEIPTD_*` variables.
    static func standard(files: [String]) -> ConfigLoader {
        ConfigLoader(files: files, environment: ProcessInfo.processInfo.environment)
    }

    /// The standard loader with a `--brokers` option, when given, over `kafka.bootstrapServers`.
    static func standard(files: [String], brokers: String?) -> ConfigLoader {
        var loader = standard(files: files)
        if let brokers { loader.overrides["kafka"] = ["bootstrapServers": brokers] }
        return loader
    }
}

/// A JSON-lines logger on standard error at the configured level; librdkafka's own lines are
/// routed into it too (label `<label>.kafka`), so a worker's output is uniformly structured.
func makeLogger(_ configuration: WorkerConfiguration, label: String) -> Logger {
    let logger = Logger(label: label, level: Logger.Level(name: configuration.log.level) ?? .info)
    routeKafkaLogs(to: logger.with([:]))
    return logger
}

/// Sends librdkafka's log lines to `logger`, mapping syslog severities to levels.
func routeKafkaLogs(to logger: Logger) {
    var kafkaLogger = logger
    kafkaLogger.label += ".kafka"
    let target = kafkaLogger
    KafkaLogging.bootstrap { record in
        let level: Logger.Level = switch record.severity {
        case ...3: .error
        case 4: .warning
        case 5: .notice
        case 6: .info
        default: .debug
        }
        target.log(level: level, record.message, metadata: ["kafka.facility": .string(record.facility)])
    }
}

/// Writes a line to standard error (usage errors, progress).
func printError(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}
