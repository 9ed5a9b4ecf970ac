import Foundation

/// The `receiptd` command: one binary, one subcommand per role, so every worker, tool and demo
/// runs the same code.
@main
enum Receiptd {
    static let subcommands: [any Command.Type] = [
        IngestCommand.self, VerifyCommand.self, FulfilCommand.self, OwnersCommand.self, EntitlementsCommand.self,
        BrokerCommand.self, CheckCommand.self, ReplayCommand.self, DemoCommand.self, BenchCommand.self, ConfigCommand.self,
        FakeAppStoreCommand.self, ChaosCommand.self, DevCommand.self, NotificationsCommand.self, ReconcileCommand.self, ConsumptionCommand.self, ConsumptionExpiryCommand.self,
    ]

    static var usage: String {
        var text = "receiptd: Apple in-app-purchase receipts -> entitlements, over Kafka\n\nUSAGE: receiptd <subcommand> [options]\n\nSUBCOMMANDS:\n"
        for command in subcommands {
            let name = command.configuration.commandName
            text += "  " + name + String(repeating: " ", count: max(1, 10 - name.count)) + command.configuration.abstract + "\n"
        }
        return text + "\nSee 'receiptd <subcommand> --help'."
    }

    static func main() async {
        var arguments = Array(CommandLine.arguments.dropFirst())
        guard let name = arguments.first, name != "--help", name != "-h", name != "help" else {
            print(usage)
            exit(arguments.isEmpty ? 64 : 0)
        }
        arguments.removeFirst()
        guard let type = subcommands.first(where: { $0.configuration.commandName == name }) else {
            printError("error: unknown subcommand '\(name)'\n\n\(usage)")
            exit(64)
        }
        if arguments.contains("--help") || arguments.contains("-h") {
            print("\(type.configuration.abstract)\n\nUSAGE: \(type.configuration.usage)")
            exit(0)
        }
        // Only a mistake in the arguments prints the usage text (exit 64); an error once they were
        // understood (a configuration value, a file that cannot be read) is one line (exit 1).
        let command: any Command
        do {
            command = try type.init(arguments: arguments)
        } catch {
            printError("error: \(error)\n\nUSAGE: \(type.configuration.usage)")
            exit(64)
        }
        do {
            exit(try await command.run())
        } catch {
            printError("error: \(error)")
            exit(1)
        }
    }
}
