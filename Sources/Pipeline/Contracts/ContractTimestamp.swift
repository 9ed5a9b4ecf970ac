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
    /// Most bytes a timestamp takes: a year of at most ten characters (sign included; a `Date`
    /// reaches about ±2.9 × 10⁸ years), then `-MM-DDTHH:MM:SS.mmmZ`.
    static let maxCount = 32

    /// Writes the timestamp of `date` at `out`, which has room for ``maxCount`` bytes, with `.mmm`
    /// when the millisecond is non-zero or `alwaysMilliseconds` asks for it.
    /// - Returns: how many bytes were written.
    static func write(_ date: Date, alwaysMilliseconds: Bool, to out: UnsafeMutablePointer<UInt8>) -> Int {
        let totalMillis = Int64((date.timeIntervalSince1970 * 1000).rounded())
        let (seconds, millis) = floorDivision(totalMillis, 1000)
        let (days, secondOfDay) = floorDivision(seconds, 86_400)
        let (year, month, day) = UTCCalendar.civil(fromDays: days)
        var at = writeYear(year, to: out)
        func put(_ byte: UInt8) {
            out[at] = byte
            at += 1
        }
        func putTwoDigits(_ value: Int64) {
            put(0x30 &+ UInt8(truncatingIfNeeded: value / 10))
            put(0x30 &+ UInt8(truncatingIfNeeded: value % 10))
        }
        put(0x2D)
        putTwoDigits(month)
        put(0x2D)
        putTwoDigits(day)
        put(0x54)
        putTwoDigits(secondOfDay / 3600)
        put(0x3A)
        putTwoDigits(secondOfDay % 3600 / 60)
        put(0x3A)
        putTwoDigits(secondOfDay % 60)
        if millis != 0 || alwaysMilliseconds {
            put(0x2E)
            put(0x30 &+ UInt8(truncatingIfNeeded: millis / 100))
            putTwoDigits(millis % 100)
        }
        put(0x5A)
        return at
    }

    /// Quotient rounded towards negative infinity, and the (non-negative) remainder.
    private static func floorDivision(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
        let quotient = value / divisor, remainder = value % divisor
        return remainder < 0 ? (quotient - 1, remainder + divisor) : (quotient, remainder)
    }

    /// Four digits for 0000-9999; otherwise the decimal text left-padded with zeros to four
    /// characters, sign included (`-1` → `00-1`), as the previous formatter wrote it.
    /// - Returns: how many bytes were written.
    private static func writeYear(_ year: Int64, to out: UnsafeMutablePointer<UInt8>) -> Int {
        var length = year < 0 ? 2 : 1
        var probe = year.magnitude
        while probe >= 10 { probe /= 10; length += 1 }
        var at = 0
        for _ in length..<max(length, 4) {
            out[at] = 0x30
            at += 1
        }
        if year < 0 {
            out[at] = 0x2D
            at += 1
        }
        return at + ContractJSONWriter.writeDigits(year.magnitude, to: out + at)
    }
}
