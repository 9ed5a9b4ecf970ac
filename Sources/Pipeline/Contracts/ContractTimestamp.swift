import Foundation

/// The bytes of a contract timestamp (see ``ContractCoding/timestamp(_:)``): RFC 3339 UTC,
/// `YYYY-MM-DDTHH:MM:SS[.mmm]Z`, written with integer civil-from-days arithmetic (``UTCCalendar``; no `Calendar`,
/// no intermediate `String`s), as profiles showed the string-built form costing ~3% of a worker.
///
/// The instant is rounded to the nearest millisecond (half away from zero) before it is split, so
/// a value parsed from `…:00.123Z` prints back as `…:00.123Z` despite binary floating point.
/// Years outside 0000-9999 print as the previous formatter printed them (`00-1`, `10000`), which
/// no reader accepts; ``ContractCoding/date(from:)`` keeps such instants out of contracts.
enum ContractTimestamp {
    /// Appends the timestamp of `date`, with `.mmm` when the millisecond is non-zero or
    /// `alwaysMilliseconds` asks for it.
    static func append(_ date: Date, alwaysMilliseconds: Bool, to out: inout [UInt8]) {
        let totalMillis = Int64((date.timeIntervalSince1970 * 1000).rounded())
        let (seconds, millis) = floorDivision(totalMillis, 1000)
        let (days, secondOfDay) = floorDivision(seconds, 86_400)
        let (year, month, day) = UTCCalendar.civil(fromDays: days)
        appendYear(year, to: &out)
        out.append(0x2D)
        appendTwoDigits(month, to: &out)
        out.append(0x2D)
        appendTwoDigits(day, to: &out)
        out.append(0x54)
        appendTwoDigits(secondOfDay / 3600, to: &out)
        out.append(0x3A)
        appendTwoDigits(secondOfDay % 3600 / 60, to: &out)
        out.append(0x3A)
        appendTwoDigits(secondOfDay % 60, to: &out)
        if millis != 0 || alwaysMilliseconds {
            out.append(0x2E)
            out.append(0x30 &+ UInt8(truncatingIfNeeded: millis / 100))
            appendTwoDigits(millis % 100, to: &out)
        }
        out.append(0x5A)
    }

    /// Quotient rounded towards negative infinity, and the (non-negative) remainder.
    private static func floorDivision(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
        let quotient = value / divisor, remainder = value % divisor
        return remainder < 0 ? (quotient - 1, remainder + divisor) : (quotient, remainder)
    }

    /// Four digits for 0000-9999; otherwise the decimal text left-padded with zeros to four
    /// characters, sign included (`-1` → `00-1`), as the previous formatter wrote it.
    private static func appendYear(_ year: Int64, to out: inout [UInt8]) {
        if year >= 0 && year < 10_000 {
            appendTwoDigits(year / 100, to: &out)
            appendTwoDigits(year % 100, to: &out)
            return
        }
        var length = year < 0 ? 2 : 1
        var probe = year.magnitude
        while probe >= 10 { probe /= 10; length += 1 }
        for _ in length..<max(length, 4) { out.append(0x30) }
        if year < 0 { out.append(0x2D) }
        ContractJSONWriter.appendDigits(year.magnitude, to: &out)
    }

    private static func appendTwoDigits(_ value: Int64, to out: inout [UInt8]) {
        out.append(0x30 &+ UInt8(truncatingIfNeeded: value / 10))
        out.append(0x30 &+ UInt8(truncatingIfNeeded: value % 10))
    }
}
