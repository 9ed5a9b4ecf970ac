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
        case .string(let text): Self.quote(text, into: &out)
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
                Self.quote(member.0, into: &out)
                out += ":"
                member.1.render(into: &out)
            }
            out += "}"
        }
    }

    private static func quote(_ text: String, into out: inout String) {
        out += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }
}
