import Foundation
import Observability
import Testing

@Suite struct RFC3339Tests {
    @Test func formatsKnownInstants() {
        #expect(RFC3339.string(from: Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00Z")
        #expect(RFC3339.string(from: Date(timeIntervalSince1970: 1_764_482_400)) == "2025-11-30T06:00:00Z")
        #expect(RFC3339.string(from: Date(timeIntervalSince1970: 951_782_400)) == "2000-02-29T00:00:00Z")
        #expect(RFC3339.string(from: Date(timeIntervalSince1970: 1.5), fractionalSeconds: true) == "1970-01-01T00:00:01.500Z")
    }

    @Test func parsesWhatItFormatsAndOffsets() throws {
        for seconds in [0.0, 86_399, 951_782_400, 1_764_482_400, 4_102_444_800] {
            let date = Date(timeIntervalSince1970: seconds)
            #expect(RFC3339.date(from: RFC3339.string(from: date)) == date)
        }
        #expect(RFC3339.date(from: "2024-02-29T00:00:00Z") != nil)
        #expect(RFC3339.date(from: "2026-11-30T08:00:00+02:00") == RFC3339.date(from: "2026-11-30T06:00:00Z"))
        let fractional = try #require(RFC3339.date(from: "2026-11-30T06:00:00.25Z"))
        #expect(abs(fractional.timeIntervalSince1970.truncatingRemainder(dividingBy: 1) - 0.25) < 1e-6)
    }

    @Test func knowsEveryMonthsLastDay() {
        let lastDays = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        for (index, last) in lastDays.enumerated() {
            let month = String(format: "%02d", index + 1)
            #expect(RFC3339.date(from: "2026-\(month)-\(last)T00:00:00Z") != nil, "2026-\(month)-\(last)")
            #expect(RFC3339.date(from: "2026-\(month)-\(last + 1)T00:00:00Z") == nil, "2026-\(month)-\(last + 1)")
        }
        // Leap years: every fourth, but not a century unless it divides by 400.
        for (year, leap) in [(2024, true), (2000, true), (1600, true), (1900, false), (2100, false), (2023, false)] {
            #expect((RFC3339.date(from: "\(year)-02-29T00:00:00Z") != nil) == leap, "\(year)")
            #expect(RFC3339.date(from: "\(year)-02-28T00:00:00Z") != nil, "\(year)")
        }
    }

    @Test func rejectsMalformed() {
        for bad in ["", "2026-11-30", "2026-13-01T00:00:00Z", "2026-11-30T25:00:00Z", "2026-11-30T06:00:00",
                    "2026-11-30T06:00:00Zjunk", "2026-11-30 06:00:00Z", "2026-11-30T06:00:00.Z", "2026-02-29T00:00:00Z", "2026-04-31T00:00:00Z", "２026-11-30T06:00:00Z"] {
            #expect(RFC3339.date(from: bad) == nil, "\(bad)")
        }
    }
}
