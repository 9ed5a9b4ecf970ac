import Foundation
import Observability

extension ConfigLoader {
    /// The loader every command uses: the given files in order, then `RECEIPTD_*` variables.
    static func standard(files: [String]) -> ConfigLoader {
        ConfigLoader(files: files, environment: ProcessInfo.processInfo.environment)
    }
}

/// A JSON-lines logger on standard error at the configured level.
func makeLogger(_ configuration: WorkerConfiguration, label: String) -> Logger {
    Logger(label: label, level: Logger.Level(name: configuration.log.level) ?? .info)
}

/// Writes a line to standard error (usage errors, progress).
func printError(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}
