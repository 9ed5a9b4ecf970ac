import Observability

/// Builds a flat JSON object as text, in insertion order.
///
/// The generators build tens of thousands of records per second; Foundation's
/// `JSONSerialization` with sorted keys goes through ICU collation on Linux and costs about
/// 0.4 ms per record, which would make the demo and benchmarks measure the generator instead of
/// the pipeline.
struct JSONText {
    private var text = "{"
    private var first = true

    private mutating func key(_ name: String) {
        if !first { text += "," }
        first = false
        JSONString.appendQuoted(name, to: &text)
        text += ":"
    }

    mutating func add(_ name: String, _ value: String) {
        key(name)
        JSONString.appendQuoted(value, to: &text)
    }

    mutating func add(_ name: String, _ value: Int64) {
        key(name)
        text += String(value)
    }

    mutating func add(_ name: String, _ value: Int) { add(name, Int64(value)) }

    mutating func add(_ name: String, _ value: Bool) {
        key(name)
        text += value ? "true" : "false"
    }

    /// Adds a nested object built with another ``JSONText``.
    mutating func add(_ name: String, object: JSONText) {
        key(name)
        text += String(decoding: object.bytes, as: UTF8.self)
    }

    /// The finished object's UTF-8 bytes.
    var bytes: [UInt8] { Array((text + "}").utf8) }
}
