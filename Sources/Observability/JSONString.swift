/// JSON string-literal escaping, defined once for the hand-written JSON writers (log lines,
/// demo generators) that must not pay for Foundation's `JSONSerialization`.
public enum JSONString {
    /// Appends `value` to `out` as a quoted JSON string (RFC 8259 escapes; control characters as `\uXXXX`).
    public static func appendQuoted(_ value: String, to out: inout String) {
        out += "\""
        // Fast path: most values (ids, base64, JWS) need no escaping and are appended whole.
        let needsEscaping: (UInt8) -> Bool = { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }
        let escape = value.utf8.withContiguousStorageIfAvailable { $0.contains(where: needsEscaping) }
            ?? value.utf8.contains(where: needsEscaping)
        if !escape {
            out += value
            out += "\""
            return
        }
        for scalar in value.unicodeScalars {
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

    /// `value` as a quoted JSON string.
    public static func quoted(_ value: String) -> String {
        var out = ""
        appendQuoted(value, to: &out)
        return out
    }
}
