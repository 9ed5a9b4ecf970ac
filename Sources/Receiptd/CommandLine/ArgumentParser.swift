/// A usage error: printed with the command's usage text, exit status 64 (EX_USAGE).
struct ValidationError: Error, CustomStringConvertible {
    var message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}

/// A small argument parser in swift-argument-parser's spirit: each command declares which
/// `--options` take a value and which are boolean `--flags`, so parsing is unambiguous, and
/// anything undeclared is a usage error instead of being silently ignored.
///
/// Accepts `--name value`, `--name=value`, repeated options, and `--` to end options.
struct ArgumentParser {
    private var values: [String: [String]] = [:]
    private var flagsSeen: Set<String> = []
    private(set) var positionals: [String] = []
    private var consumed: Set<String> = []

    /// - Parameters:
    ///   - arguments: the arguments after the subcommand name.
    ///   - options: names (with `--`) that take a value.
    ///   - flags: names (with `--`) that take none.
    /// - Throws: ``ValidationError`` for unknown options or a missing value.
    init(_ arguments: [String], options: Set<String>, flags: Set<String> = []) throws {
        var index = 0
        var onlyPositionals = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if onlyPositionals || !argument.hasPrefix("--") || argument == "-" {
                positionals.append(argument)
                continue
            }
            if argument == "--" { onlyPositionals = true; continue }
            var name = argument
            var inlineValue: String?
            if let eq = argument.firstIndex(of: "=") {
                name = String(argument[..<eq])
                inlineValue = String(argument[argument.index(after: eq)...])
            }
            if flags.contains(name) {
                guard inlineValue == nil else { throw ValidationError("\(name) takes no value") }
                flagsSeen.insert(name)
            } else if options.contains(name) {
                if let inlineValue {
                    values[name, default: []].append(inlineValue)
                } else {
                    guard index < arguments.count else { throw ValidationError("missing value for \(name)") }
                    values[name, default: []].append(arguments[index])
                    index += 1
                }
            } else {
                throw ValidationError("unknown option \(name)")
            }
        }
    }

    /// The last value given for `name`, if any.
    func option(_ name: String) -> String? { values[name]?.last }

    /// Every value given for a repeatable option, in order.
    func options(_ name: String) -> [String] { values[name] ?? [] }

    /// Whether a boolean flag was given.
    func flag(_ name: String) -> Bool { flagsSeen.contains(name) }

    /// The value of `name` parsed as an integer within `range`.
    func integer(_ name: String, in range: ClosedRange<Int>) throws -> Int? {
        guard let raw = option(name) else { return nil }
        guard let value = Int(raw), range.contains(value) else {
            throw ValidationError("\(name) must be an integer in \(range.lowerBound)...\(range.upperBound), got '\(raw)'")
        }
        return value
    }

    /// The value of `name` parsed as a duration in seconds (fractions allowed).
    func seconds(_ name: String) throws -> Duration? {
        guard let raw = option(name) else { return nil }
        guard let value = Double(raw), value >= 0, value < 1e7 else {
            throw ValidationError("\(name) must be a number of seconds, got '\(raw)'")
        }
        return .milliseconds(Int64(value * 1000))
    }
}
