import Foundation

/// Builds a ``WorkerConfiguration`` from layers, each overriding the one before:
/// 1. the built-in defaults,
/// 2. the files given (e.g. `Config/receiptd.json`, then an environment overlay), merged key by key,
/// 3. environment variables `RECEIPTD_<SECTION>_<KEY>` with camelCase keys written in
///    upper snake case (`kafka.bootstrapServers` -> `RECEIPTD_KAFKA_BOOTSTRAP_SERVERS`),
/// 4. explicit command-line overrides (such as `--brokers`).
///
/// Unknown keys in a file or a `RECEIPTD_*` variable are errors, so a typo never silently falls
/// back to a default.
struct ConfigLoader {
    struct LoadError: Error, CustomStringConvertible {
        var description: String
    }

    /// Variables read by the command line itself, not configuration keys.
    static let reservedVariables: Set<String> = ["RECEIPTD_BINARY", "RECEIPTD_CONFIG", "RECEIPTD_ENV", "RECEIPTD_PARENT_PID"]

    /// `environment` without the `RECEIPTD_*` configuration variables: for a child process given a
    /// configuration file already resolved with them, in which they would override its changes.
    static func withoutConfigurationVariables(_ environment: [String: String]) -> [String: String] {
        environment.filter { !$0.key.hasPrefix("RECEIPTD_") || reservedVariables.contains($0.key) }
    }

    var files: [String] = []
    var environment: [String: String] = [:]
    var overrides: [String: Any] = [:]

    /// The `RECEIPTD_*` variables that set configuration keys, sorted (what `receiptd config` names).
    var configurationVariables: [String] {
        environment.keys.filter { $0.hasPrefix("RECEIPTD_") && !Self.reservedVariables.contains($0) }.sorted()
    }

    /// - Throws: ``LoadError`` naming the file, key or variable at fault.
    func load() throws -> WorkerConfiguration {
        var tree = try Self.tree(of: WorkerConfiguration())
        for file in files {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw LoadError(description: "cannot read config file \(file)")
            }
            let object: Any
            do { object = try JSONSerialization.jsonObject(with: data) } catch {
                throw LoadError(description: "\(file) is not valid JSON: \(Self.jsonProblem(error, in: data))")
            }
            guard let overlay = object as? [String: Any] else {
                throw LoadError(description: "\(file) must hold a JSON object")
            }
            try Self.merge(Self.resolvingPaths(in: overlay, relativeTo: file), into: &tree, path: [], source: file)
        }
        try applyEnvironment(to: &tree)
        try Self.merge(overrides, into: &tree, path: [], source: "command line")
        let configuration: WorkerConfiguration
        do {
            let data = try JSONSerialization.data(withJSONObject: tree)
            configuration = try JSONDecoder().decode(WorkerConfiguration.self, from: data)
        } catch {
            throw LoadError(description: "invalid configuration: \(error)")
        }
        // Checked here, so every command refuses an unknown codec at once: its producers are built
        // only after it has waited for the brokers.
        do { _ = try configuration.kafka.compressionCodec() } catch { throw LoadError(description: "\(error)") }
        return configuration
    }

    /// Where and why JSON could not be parsed: Foundation's debug description names the character
    /// offset (its localized description says only "not in the correct format"), turned into a line
    /// and column here.
    static func jsonProblem(_ error: any Error, in data: Data) -> String {
        let nsError = error as NSError
        let detail = (nsError.userInfo[NSDebugDescriptionErrorKey] as? String)
            ?? (nsError.userInfo[NSUnderlyingErrorKey] as? NSError)?.userInfo[NSDebugDescriptionErrorKey] as? String
            ?? nsError.localizedDescription
        let offset = (nsError.userInfo["NSJSONSerializationErrorIndex"] as? Int)
            ?? detail.range(of: #"character (\d+)"#, options: .regularExpression)
                .flatMap { Int(detail[$0].dropFirst("character ".count)) }
        guard let offset, offset <= data.count else { return detail }
        let prefix = data.prefix(offset)
        let line = prefix.filter { $0 == 0x0A }.count + 1
        let column = offset - (prefix.lastIndex(of: 0x0A).map { $0 + 1 } ?? 0) + 1
        return "line \(line), column \(column): \(detail)"
    }

    /// Objects of raw librdkafka properties: any key, values as strings, never walked as sections.
    static let freeFormKeys: Set<String> = ["properties", "consumerProperties", "producerProperties"]

    /// Keys whose values are file paths: a relative one in a file means relative to that file's
    /// directory (a configuration file names its catalogue and keys wherever it is run from).
    /// Variables and the built-in defaults stay relative to the working directory.
    static let pathKeys: Set<String> = [
        "fulfil.catalogue", "verify.trustRoots", "verify.receiptTrustRoots", "verify.serverApi.keyPath",
        "verify.verifyReceipt.sharedSecretPath",
    ]

    static func resolvingPaths(in overlay: [String: Any], relativeTo file: String, path: [String] = []) -> [String: Any] {
        let directory = URL(fileURLWithPath: file).deletingLastPathComponent()
        func resolve(_ value: String) -> String {
            value.isEmpty || value.hasPrefix("/") ? value : directory.appendingPathComponent(value).standardized.path
        }
        var out = overlay
        for (key, value) in overlay {
            let keyPath = (path + [key]).joined(separator: ".")
            if let section = value as? [String: Any], !Self.freeFormKeys.contains(key) {
                out[key] = resolvingPaths(in: section, relativeTo: file, path: path + [key])
            } else if pathKeys.contains(keyPath) {
                if let single = value as? String { out[key] = resolve(single) }
                if let list = value as? [String] { out[key] = list.map(resolve) }
            }
        }
        return out
    }

    /// The configuration as a JSON tree.
    static func tree(of configuration: WorkerConfiguration) throws -> [String: Any] {
        let data = try JSONEncoder().encode(configuration)
        return try JSONSerialization.jsonObject(with: data) as! [String: Any]
    }

    private static func merge(_ overlay: [String: Any], into tree: inout [String: Any], path: [String], source: String) throws {
        for (key, value) in overlay {
            let keyPath = (path + [key]).joined(separator: ".")
            guard let existing = tree[key] else {
                throw LoadError(description: "\(source): unknown configuration key '\(keyPath)'")
            }
            if let section = existing as? [String: Any] {
                guard let sub = value as? [String: Any] else {
                    throw LoadError(description: "\(source): '\(keyPath)' must be an object")
                }
                if Self.freeFormKeys.contains(key) {
                    // Free-form librdkafka properties: any key, values as strings.
                    tree[key] = section.merging(sub.mapValues { "\($0)" }) { _, new in new }
                } else if key == "budgets" {
                    // Keyed by App Store endpoint; the names are checked where the budgets are built.
                    tree[key] = section.merging(sub) { _, new in new }
                } else {
                    var merged = section
                    try merge(sub, into: &merged, path: path + [key], source: source)
                    tree[key] = merged
                }
            } else {
                tree[key] = value
            }
        }
    }

    private func applyEnvironment(to tree: inout [String: Any]) throws {
        var leaves: [String: (path: [String], value: Any)] = [:]
        Self.collectLeaves(of: WorkerConfiguration(), path: [], into: &leaves)
        for (name, raw) in environment where name.hasPrefix("RECEIPTD_") && !Self.reservedVariables.contains(name) {
            guard let leaf = leaves[name] else {
                throw LoadError(description: "unknown configuration variable \(name) (known: \(leaves.keys.sorted().joined(separator: ", ")))")
            }
            let converted: Any
            switch leaf.value {
            case _ where leaf.path.last == "budgets":
                guard let object = try? JSONSerialization.jsonObject(with: Data(raw.utf8)) as? [String: Any] else {
                    throw LoadError(description: "\(name) must be a JSON object of {\"requests\": N, \"windowSeconds\": S}")
                }
                converted = object
            case is Bool:
                guard let b = ["true": true, "false": false, "1": true, "0": false][raw.lowercased()] else {
                    throw LoadError(description: "\(name) must be true or false")
                }
                converted = b
            case is Int, is Int64:
                guard let i = Int64(raw) else { throw LoadError(description: "\(name) must be an integer") }
                converted = i
            case is Double:
                guard let d = Double(raw) else { throw LoadError(description: "\(name) must be a number") }
                converted = d
            case is [String]:
                converted = raw.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            case is [Double]:
                let items = raw.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
                let numbers = items.compactMap(Double.init)
                guard numbers.count == items.count else {
                    throw LoadError(description: "\(name) must be a comma-separated list of numbers")
                }
                converted = numbers
            case is [String: String]:
                guard let object = try? JSONSerialization.jsonObject(with: Data(raw.utf8)) as? [String: String] else {
                    throw LoadError(description: "\(name) must be a JSON object of strings")
                }
                // Key by key over the files' map, as files merge: a harness's workers re-read the
                // variables over the file it wrote, whose map holds the embedded broker's settings.
                let existing = (Self.value(at: leaf.path, in: tree) as? [String: Any] ?? [:]).mapValues { "\($0)" }
                converted = existing.merging(object) { _, variable in variable }
            default:
                converted = raw
            }
            Self.setValue(converted, at: leaf.path, in: &tree)
        }
    }

    /// `RECEIPTD_<PATH>` for every leaf of the configuration, with its default value (for its type).
    private static func collectLeaves(of node: Any, path: [String], into out: inout [String: (path: [String], value: Any)]) {
        for child in Mirror(reflecting: node).children {
            guard let key = child.label else { continue }
            let value = child.value
            if value is String || value is Bool || value is Int || value is Int64 || value is Double
                || value is [String] || value is [Double] || value is [String: String] {
                out["RECEIPTD_" + (path + [key]).map(upperSnake).joined(separator: "_")] = (path + [key], value)
            } else {
                collectLeaves(of: value, path: path + [key], into: &out)
            }
        }
    }

    /// `productionBaseURL` -> `PRODUCTION_BASE_URL`: a word starts at an upper-case letter that
    /// follows a lower-case one or a digit, or that starts a new word after an acronym
    /// (`URLPath` -> `URL_PATH`); an acronym stays one word.
    static func upperSnake(_ camel: String) -> String {
        let chars = Array(camel)
        var out = ""
        for (i, ch) in chars.enumerated() {
            if ch.isUppercase, i > 0 {
                let previous = chars[i - 1]
                let next = i + 1 < chars.count ? chars[i + 1] : nil
                if previous.isLowercase || previous.isNumber || (previous.isUppercase && next?.isLowercase == true) {
                    out += "_"
                }
            }
            out += ch.uppercased()
        }
        return out
    }

    private static func value(at path: [String], in tree: [String: Any]) -> Any? {
        guard let first = path.first else { return nil }
        if path.count == 1 { return tree[first] }
        return (tree[first] as? [String: Any]).flatMap { value(at: Array(path.dropFirst()), in: $0) }
    }

    private static func setValue(_ value: Any, at path: [String], in tree: inout [String: Any]) {
        guard let first = path.first else { return }
        if path.count == 1 { tree[first] = value; return }
        var sub = tree[first] as? [String: Any] ?? [:]
        setValue(value, at: Array(path.dropFirst()), in: &sub)
        tree[first] = sub
    }
}
