import Foundation

/// `receiptd config`: prints the configuration a worker would run with, after files and
/// `RECEIPTD_*` variables, so operators can see what is actually in effect.
struct ConfigCommand: Command {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Print the resolved configuration (files + RECEIPTD_* variables)",
        usage: """
        receiptd config [--config FILE]... [--brokers LIST]

        Prints the resolved configuration as JSON on standard output, and on standard error which
        files and RECEIPTD_* variables it was resolved from. librdkafka property values are redacted;
        secrets are never values here, only paths to files.
        """)

    var configFiles: [String]
    var brokers: String?

    init(arguments: [String]) throws {
        let parser = try ArgumentParser(arguments, options: ["--config", "--brokers"])
        guard parser.positionals.isEmpty else { throw ValidationError("unexpected argument \(parser.positionals[0])") }
        configFiles = parser.options("--config")
        brokers = parser.option("--brokers")
    }

    func run() async throws -> Int32 {
        let loader = ConfigLoader.standard(files: configFiles, brokers: brokers)
        var configuration = try loader.load()
        printError("receiptd config: built-in defaults"
                   + configFiles.map { ", then \($0)" }.joined()
                   + loader.configurationVariables.map { ", then \($0)" }.joined()
                   + (brokers == nil ? "" : ", then --brokers"))
        // Raw librdkafka properties may hold credentials (sasl.password): never print their values.
        configuration.kafka.properties = configuration.kafka.properties.mapValues { _ in "<redacted>" }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        print(String(decoding: try encoder.encode(configuration), as: UTF8.self))
        return 0
    }
}
