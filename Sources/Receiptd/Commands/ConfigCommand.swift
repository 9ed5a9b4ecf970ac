import Foundation

/// `receiptd config`: prints the configuration a worker would run with, after files and
/// `RECEIPTD_*` variables, so operators can see what is actually in effect.
struct ConfigCommand: Command {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Print the resolved configuration (files + RECEIPTD_* variables)",
        usage: "receiptd config [--config FILE]... [--brokers LIST]")

    var configFiles: [String]
    var brokers: String?

    init(arguments: [String]) throws {
        let parser = try ArgumentParser(arguments, options: ["--config", "--brokers"])
        guard parser.positionals.isEmpty else { throw ValidationError("unexpected argument \(parser.positionals[0])") }
        configFiles = parser.options("--config")
        brokers = parser.option("--brokers")
    }

    func run() async throws -> Int32 {
        var configuration = try ConfigLoader.standard(files: configFiles, brokers: brokers).load()
        // Raw librdkafka properties may hold credentials (sasl.password): never print their values.
        configuration.kafka.properties = configuration.kafka.properties.mapValues { _ in "<redacted>" }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        print(String(decoding: try encoder.encode(configuration), as: UTF8.self))
        return 0
    }
}
