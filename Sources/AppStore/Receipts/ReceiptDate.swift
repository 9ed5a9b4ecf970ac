import Foundation

/// Parses the dates inside app receipts: IA5String timestamps in RFC 3339 form
/// (`2025-12-26T18:39:47Z`), as the App Store writes them. Xcode's StoreKit testing writes a
/// numeric offset without a colon (`2020-07-22T18:33:15+0100`); that form is accepted too, since
/// it is unambiguous. An empty string means "absent" (real receipts carry empty cancellation
/// dates). Fractional seconds (up to 9 digits) are kept.
///
/// Hand-written rather than `ISO8601DateFormatter`: no formatter object to create or share
/// between threads, no per-call allocation beyond one small array, and exactly this grammar.
enum ReceiptDate {
    /// Parses one timestamp.
    /// - Parameter text: The ASCII bytes of the IA5String.
    /// - Returns: The instant, or `nil` when the text is not a valid timestamp.
    static func parse(_ text: ArraySlice<UInt8>) -> Date? {
        let chars = Array(text)
        guard chars.count >= 20 else { return nil }
        func digits(_ start: Int, _ count: Int) -> Int64? {
            guard start + count <= chars.count else { return nil }
            var value: Int64 = 0
            for index in start..<(start + count) {
                let char = chars[index]
                guard char >= 0x30 && char <= 0x39 else { return nil }
                value = value * 10 + Int64(char - 0x30)
            }
            return value
        }
        guard let year = digits(0, 4), chars[4] == UInt8(ascii: "-"),
              let month = digits(5, 2), chars[7] == UInt8(ascii: "-"),
              let day = digits(8, 2), chars[10] == UInt8(ascii: "T"),
              let hour = digits(11, 2), chars[13] == UInt8(ascii: ":"),
              let minute = digits(14, 2), chars[16] == UInt8(ascii: ":"),
              let second = digits(17, 2) else { return nil }
        guard (1...12).contains(month), day >= 1, day <= daysInMonth(year: year, month: month),
              hour <= 23, minute <= 59, second <= 60 else { return nil }

        var index = 19
        var fraction = 0.0
        if chars[index] == UInt8(ascii: ".") {
            var scale = 0.1
            index += 1
            let start = index
            while index < chars.count, chars[index] >= 0x30, chars[index] <= 0x39 {
                fraction += Double(chars[index] - 0x30) * scale
                scale /= 10
                index += 1
            }
            guard index > start, index - start <= 9 else { return nil }
        }
        guard let offset = zoneOffsetSeconds(chars, from: index) else { return nil }
        let days = X509Certificate.daysFromCivil(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    /// `Z`, `±hh:mm` or `±hhmm` at `index`, ending the text; the offset east of UTC in seconds.
    private static func zoneOffsetSeconds(_ chars: [UInt8], from index: Int) -> Int64? {
        guard index < chars.count else { return nil }
        let sign = chars[index]
        if sign == UInt8(ascii: "Z") { return index + 1 == chars.count ? 0 : nil }
        guard sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") else { return nil }
        let rest = Array(chars[(index + 1)...])
        let hourMinute: [UInt8]
        if rest.count == 5, rest[2] == UInt8(ascii: ":") {
            hourMinute = [rest[0], rest[1], rest[3], rest[4]]
        } else if rest.count == 4 {
            hourMinute = rest
        } else {
            return nil
        }
        guard hourMinute.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        let hours = Int64(hourMinute[0] - 0x30) * 10 + Int64(hourMinute[1] - 0x30)
        let minutes = Int64(hourMinute[2] - 0x30) * 10 + Int64(hourMinute[3] - 0x30)
        guard hours <= 23, minutes <= 59 else { return nil }
        let magnitude = hours * 3600 + minutes * 60
        return sign == UInt8(ascii: "-") ? -magnitude : magnitude
    }

    private static func daysInMonth(year: Int64, month: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}
