import Foundation
import Observability
import Testing
@testable import Pipeline

/// ``ContractTimestamp`` must print what the previous, string-built formatter printed (kept here as
/// the reference, over ``RFC3339``), and what Foundation's calendar says the instant is.
@Suite struct ContractTimestampTests {
    /// The formatter ``ContractCoding/timestamp(_:alwaysMilliseconds:)`` used before the byte writer.
    static func reference(_ date: Date, alwaysMilliseconds: Bool) -> String {
        let totalMillis = (date.timeIntervalSince1970 * 1000).rounded()
        let wholeSeconds = (totalMillis / 1000).rounded(.down)
        let millis = Int(totalMillis - wholeSeconds * 1000)
        let base = RFC3339.string(from: Date(timeIntervalSince1970: wholeSeconds))
        guard millis != 0 || alwaysMilliseconds else { return base }
        let fraction = String(millis)
        return String(base.dropLast()) + "." + String(repeating: "0", count: 3 - fraction.count) + fraction + "Z"
    }

    static func expectReference(_ date: Date, sourceLocation: SourceLocation = #_sourceLocation) {
        for always in [false, true] {
            #expect(ContractCoding.timestamp(date, alwaysMilliseconds: always) == reference(date, alwaysMilliseconds: always),
                    "\(date.timeIntervalSince1970)", sourceLocation: sourceLocation)
        }
    }

    /// SplitMix64, so a failure reproduces.
    struct SeededGenerator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    @Test func randomInstantsAcrossEveryWritableYearMatchTheReference() {
        var generator = SeededGenerator(state: 20_261_130)
        let range = ContractCoding.writableMilliseconds
        for index in 0..<50_000 {
            let millis = Double(Int64.random(in: Int64(range.lowerBound)...Int64(range.upperBound), using: &generator))
            // Whole milliseconds, sub-millisecond noise and whole seconds, in turn.
            let seconds = switch index % 3 {
            case 0: millis / 1000
            case 1: millis / 1000 + Double.random(in: -0.0005..<0.0005, using: &generator)
            default: (millis / 1000).rounded(.down)
            }
            Self.expectReference(Date(timeIntervalSince1970: seconds))
        }
    }

    @Test func calendarFieldsMatchFoundation() throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: "UTC"))
        var generator = SeededGenerator(state: 7)
        // Foundation's Gregorian calendar switches to Julian before 1582-10-15: compare after it.
        let from = Int64(-12_219_292_800), to = Int64(253_402_300_799)
        for _ in 0..<5_000 {
            let date = Date(timeIntervalSince1970: Double(Int64.random(in: from...to, using: &generator)))
            let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
            let expected = String(format: "%04d-%02d-%02dT%02d:%02d:%02dZ", parts.year!, parts.month!, parts.day!,
                                  parts.hour!, parts.minute!, parts.second!)
            #expect(ContractCoding.timestamp(date) == expected)
        }
    }

    @Test(arguments: [
        "0000-02-29T12:00:00Z", "0004-02-29T00:00:00Z", "0400-02-29T23:59:59Z", "1600-02-29T00:00:00.001Z",
        "1900-02-28T23:59:59Z", "1900-03-01T00:00:00Z", "2000-02-29T00:00:00Z", "2024-02-29T12:34:56.789Z",
        "2100-02-28T23:59:59.999Z", "2100-03-01T00:00:00Z", "9996-02-29T00:00:00Z", "1970-01-01T00:00:00Z",
        "1969-12-31T23:59:59.999Z", "0000-01-01T00:00:00Z", "9999-12-31T23:59:59.999Z", "9999-12-31T23:59:59Z",
    ])
    func leapDaysAndRangeEndsPrintBackAsWritten(_ text: String) throws {
        let date = try #require(ContractCoding.date(from: text))
        #expect(ContractCoding.timestamp(date) == text)
        Self.expectReference(date)
    }

    @Test(arguments: [
        // (seconds since 1970, expected): rounding is to the nearest millisecond, exact halves (62.5 ms)
        // away from zero; 0.0005 s is just below half a millisecond in binary.
        (0.0005, "1970-01-01T00:00:00Z"),
        (0.0004, "1970-01-01T00:00:00Z"), (0.0625, "1970-01-01T00:00:00.063Z"), (0.0015, "1970-01-01T00:00:00.002Z"),
        (0.9994, "1970-01-01T00:00:00.999Z"), (0.9995, "1970-01-01T00:00:01Z"), (59.9996, "1970-01-01T00:01:00Z"),
        (-0.0004, "1970-01-01T00:00:00Z"), (-0.0625, "1969-12-31T23:59:59.937Z"), (-0.001, "1969-12-31T23:59:59.999Z"),
        (-1.5, "1969-12-31T23:59:58.500Z"), (1_798_696_799.9996, "2026-12-31T06:00:00Z"),
        (1_798_696_800.1235, "2026-12-31T06:00:00.124Z"), (1_798_696_800.02, "2026-12-31T06:00:00.020Z"),
    ])
    func millisecondRounding(_ seconds: Double, _ expected: String) {
        let date = Date(timeIntervalSince1970: seconds)
        #expect(ContractCoding.timestamp(date) == expected)
        Self.expectReference(date)
    }

    @Test func alwaysMillisecondsPrintsZeroMilliseconds() {
        #expect(ContractCoding.timestamp(Date(timeIntervalSince1970: 0), alwaysMilliseconds: true)
            == "1970-01-01T00:00:00.000Z")
        #expect(ContractCoding.timestamp(Date(timeIntervalSince1970: 0.05), alwaysMilliseconds: true)
            == "1970-01-01T00:00:00.050Z")
    }

    @Test(arguments: [-62_167_219_200.001, -62_198_755_200.0, -64_000_000_000.5, 253_402_300_800.0, 300_000_000_000.25])
    func yearsOutsideTheWritableRangePrintAsBefore(_ seconds: Double) {
        Self.expectReference(Date(timeIntervalSince1970: seconds))
    }

    @Test func theWriterAppendsTheSameBytesAsAString() {
        let date = Date(timeIntervalSince1970: 1_798_696_800.125)
        var writer = ContractJSONWriter(capacity: 32)
        writer.timestamp(date)
        #expect(writer.bytes == Array("\"\(ContractCoding.timestamp(date))\"".utf8))
    }
}
