import Foundation

/// RFC 3339 UTC date formatting and parsing without `DateFormatter` (slow, and not `Sendable`).
public enum RFC3339 {
    /// Formats as `YYYY-MM-DDTHH:MM:SSZ` (or with `.mmm` when `fractionalSeconds`).
    public static func string(from date: Date, fractionalSeconds: Bool = false) -> String {
        let totalMillis = (date.timeIntervalSince1970 * 1000).rounded(.down)
        var seconds = Int64((totalMillis / 1000).rounded(.down))
        let millis = Int64(totalMillis) - seconds * 1000
        var days = seconds / 86_400
        seconds -= days * 86_400
        if seconds < 0 { seconds += 86_400; days -= 1 }
        let (year, month, day) = civil(fromDays: days)
        let hour = seconds / 3600, minute = (seconds % 3600) / 60, second = seconds % 60
        var out = pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2)
        out += "T" + pad(hour, 2) + ":" + pad(minute, 2) + ":" + pad(second, 2)
        if fractionalSeconds { out += "." + pad(millis, 3) }
        return out + "Z"
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`; returns nil for anything else.
    ///
    /// Reads the string's UTF-8 in place: every contract timestamp of every record comes through
    /// here, and a copy of the bytes cost an allocation each.
    public static func date(from string: String) -> Date? {
        string.withUTF8InPlace { date(fromUTF8: $0) }
    }

    /// ``date(from:)`` of a string's UTF-8 bytes.
    public static func date(fromUTF8 b: UnsafeBufferPointer<UInt8>) -> Date? {
        func num(_ from: Int, _ count: Int) -> Int64? {
            guard from + count <= b.count else { return nil }
            var v: Int64 = 0
            for i in from..<(from + count) {
                guard b[i] >= 48, b[i] <= 57 else { return nil }
                v = v * 10 + Int64(b[i] - 48)
            }
            return v
        }
        guard b.count >= 20, b[4] == 45, b[7] == 45, b[10] == 84 || b[10] == 116, b[13] == 58, b[16] == 58,
              let y = num(0, 4), let mo = num(5, 2), let d = num(8, 2),
              let h = num(11, 2), let mi = num(14, 2), let s = num(17, 2),
              (1...12).contains(mo), (1...31).contains(d), h < 24, mi < 60, s < 61,
              d <= daysInMonth(mo, of: y) else { return nil }
        var i = 19
        var fraction = 0.0
        if i < b.count, b[i] == 46 {
            i += 1
            var scale = 0.1
            let start = i
            while i < b.count, b[i] >= 48, b[i] <= 57 { fraction += Double(b[i] - 48) * scale; scale /= 10; i += 1 }
            guard i > start else { return nil }
        }
        guard i < b.count else { return nil }
        var offsetSeconds: Int64 = 0
        if b[i] == 90 || b[i] == 122 {
            i += 1
        } else if b[i] == 43 || b[i] == 45 {
            guard let oh = num(i + 1, 2), i + 3 < b.count, b[i + 3] == 58, let om = num(i + 4, 2) else { return nil }
            offsetSeconds = (oh * 3600 + om * 60) * (b[i] == 45 ? -1 : 1)
            i += 6
        } else {
            return nil
        }
        guard i == b.count else { return nil }
        let days = daysFromCivil(y, mo, d)
        let epoch = days * 86_400 + h * 3600 + mi * 60 + s - offsetSeconds
        return Date(timeIntervalSince1970: Double(epoch) + fraction)
    }

    /// Days in month `month` (1 to 12) of proleptic Gregorian year `year`.
    private static func daysInMonth(_ month: Int64, of year: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let s = String(value)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }

    // Howard Hinnant's days-from-civil algorithms (proleptic Gregorian calendar).
    private static func daysFromCivil(_ y0: Int64, _ m: Int64, _ d: Int64) -> Int64 {
        let y = m <= 2 ? y0 - 1 : y0
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    private static func civil(fromDays z0: Int64) -> (Int64, Int64, Int64) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let y = yoe + era * 400
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (m <= 2 ? y + 1 : y, m, d)
    }
}
