import Foundation

/// Validates JSON documents against the schemas in `Config/schemas/` with a real JSON Schema
/// implementation: Debian's `python3-jsonschema` (`Draft202012Validator`, format checking on), run
/// as a subprocess of `/usr/bin/python3`. That path, not `python3` on `PATH` (a pyenv python here),
/// is the one `scripts/setup` installs the package for; `-I` keeps user site-packages and
/// `PYTHON*` variables out.
enum JSONSchemaValidator {
    static let python = "/usr/bin/python3"

    /// `Config/schemas/` of this package.
    static let schemaDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Config/schemas")

    /// Whether `/usr/bin/python3` can import `jsonschema` (`apt-get install python3-jsonschema`).
    static let isAvailable: Bool = {
        guard FileManager.default.isExecutableFile(atPath: python) else { return false }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = ["-I", "-c", "import jsonschema"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }()

    /// One document to validate: `schema` names a file `Config/schemas/<schema>.schema.json`.
    /// `closed` validates against a copy with every `additionalProperties: true` turned to `false`,
    /// so a member the encoder writes but the schema does not describe is an error.
    struct Case: Sendable {
        var id: String
        var schema: String
        var json: [UInt8]
        var closed = false
    }

    /// What the validator said.
    struct Report: Decodable, Sendable {
        /// `jsonschema` when the library checks `date-time` itself, `fallback` when the script's own
        /// RFC 3339 check stands in (Debian 12 lacks the optional `rfc3339-validator`).
        var dateTime: String
        /// Schema files that are not valid Draft 2020-12 schemas, with why.
        var schemaErrors: [String: [String]]
        /// Per case id, every error as `<instance path>: <message>` (empty: valid).
        var results: [String: [String]]
    }

    /// Writes the cases to a temporary directory and validates each in one subprocess.
    static func validate(_ cases: [Case]) throws -> Report {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("receiptd-schemas-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var manifest: [[String: Any]] = []
        for (index, item) in cases.enumerated() {
            let instance = directory.appendingPathComponent("\(index).json")
            try Data(item.json).write(to: instance)
            manifest.append(["id": item.id, "closed": item.closed, "instance": instance.path,
                             "schema": schemaDirectory.appendingPathComponent("\(item.schema).schema.json").path])
        }
        let manifestFile = directory.appendingPathComponent("manifest.json")
        try JSONSerialization.data(withJSONObject: manifest).write(to: manifestFile)
        let errorFile = directory.appendingPathComponent("stderr.txt")
        _ = FileManager.default.createFile(atPath: errorFile.path, contents: nil)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = ["-I", "-c", script, manifestFile.path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = try FileHandle(forWritingTo: errorFile)
        try process.run()
        let stdout = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let stderr = (try? String(contentsOf: errorFile, encoding: .utf8)) ?? ""
            throw ValidatorFailed(description: "python exited \(process.terminationStatus): \(stderr)")
        }
        return try JSONDecoder().decode(Report.self, from: stdout)
    }

    struct ValidatorFailed: Error, CustomStringConvertible {
        var description: String
    }

    /// Validates every case of the manifest (argv[1]) and prints one JSON report.
    static let script = #"""
import json, re, sys
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

checker = Draft202012Validator.FORMAT_CHECKER
native = "date-time" in checker.checkers
if not native:
    # Without the optional rfc3339-validator, jsonschema skips date-time silently; this RFC 3339
    # (section 5.6) check with a calendar check stands in for it.
    rfc3339 = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?"
                         r"([Zz]|[+-]([0-9]{2}):([0-9]{2}))")

    @checker.checks("date-time")
    def date_time(instance):
        if not isinstance(instance, str):
            return True
        m = rfc3339.fullmatch(instance)
        if m is None:
            return False
        y, mo, d, h, mi, s = (int(g) for g in m.groups()[:6])
        leap = y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)
        days = [31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        if not (1 <= mo <= 12 and 1 <= d <= days[mo - 1] and h <= 23 and mi <= 59 and s <= 60):
            return False
        return m.group(9) is None or (int(m.group(9)) <= 23 and int(m.group(10)) <= 59)

def closed(node):
    if isinstance(node, dict):
        return {k: False if k == "additionalProperties" and v is True else closed(v) for k, v in node.items()}
    if isinstance(node, list):
        return [closed(v) for v in node]
    return node

def leaves(error):
    if error.context:
        for sub in error.context:
            yield from leaves(sub)
    else:
        yield error

schemas, schema_errors, results = {}, {}, {}
for case in json.load(open(sys.argv[1], encoding="utf-8")):
    path = case["schema"]
    if path not in schemas:
        schemas[path] = json.load(open(path, encoding="utf-8"))
        try:
            Draft202012Validator.check_schema(schemas[path])
        except SchemaError as e:
            schema_errors[path] = [e.message]
    schema = closed(schemas[path]) if case["closed"] else schemas[path]
    validator = Draft202012Validator(schema, format_checker=checker)
    instance = json.load(open(case["instance"], encoding="utf-8"))
    results[case["id"]] = sorted({("/".join(str(p) for p in e.absolute_path) or "(root)") + ": " + e.message
                                  for top in validator.iter_errors(instance) for e in leaves(top)})
print(json.dumps({"dateTime": "jsonschema" if native else "fallback", "schemaErrors": schema_errors,
                  "results": results}))
"""#
}
