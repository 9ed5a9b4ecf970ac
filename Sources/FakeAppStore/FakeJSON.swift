import Observability

/// A JSON document the fake writes, rendered with members in insertion order and integers as
/// integers (the strict verifier insists on integer millisecond dates, which Foundation's encoder
/// does not guarantee for `Date`).
enum FakeJSON: Sendable {
    case null
    case bool(Bool)
    case integer(Int64)
    case string(String)
    case array([FakeJSON])
    case object([(String, FakeJSON)])

    /// The UTF-8 bytes of the rendered document.
    var bytes: [UInt8] { Array(text.utf8) }

    /// The rendered document.
    var text: String {
        var out = ""
        render(into: &out)
        return out
    }

    private func render(into out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let flag): out += flag ? "true" : "false"
        case .integer(let number): out += String(number)
        case .string(let text): JSONString.appendQuoted(text, to: &out)
        case .array(let elements):
            out += "["
            for (index, element) in elements.enumerated() {
                if index > 0 { out += "," }
                element.render(into: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (index, member) in members.enumerated() {
                if index > 0 { out += "," }
                JSONString.appendQuoted(member.0, to: &out)
                out += ":"
                member.1.render(into: &out)
            }
            out += "}"
        }
    }
}
