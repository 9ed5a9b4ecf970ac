/// What every subcommand describes about itself (the `CommandConfiguration` shape).
struct CommandConfiguration: Sendable {
    var commandName: String
    var abstract: String
    var usage: String
}

/// A subcommand: parsed from its arguments, validated, then run.
protocol Command: Sendable {
    static var configuration: CommandConfiguration { get }
    /// Parses the arguments after the subcommand name.
    /// - Throws: ``ValidationError`` with a precise message.
    init(arguments: [String]) throws
    /// Does the work. Returns the process exit status.
    func run() async throws -> Int32
}
