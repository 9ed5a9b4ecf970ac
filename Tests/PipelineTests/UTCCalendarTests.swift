import Foundation
import Testing
@testable import Pipeline

@Suite struct UTCCalendarTests {
    @Test(arguments: [
        ("2027-01-31T08:00:00Z", 1, "2027-02-28T08:00:00Z"),
        ("2028-01-31T08:00:00Z", 1, "2028-02-29T08:00:00Z"),
        ("2026-03-31T23:59:59Z", 1, "2026-04-30T23:59:59Z"),
        ("2026-11-15T00:00:00Z", 3, "2027-02-15T00:00:00Z"),
        ("2026-12-31T12:00:00Z", 12, "2027-12-31T12:00:00Z"),
        ("2026-05-31T12:00:00Z", -3, "2026-02-28T12:00:00Z"),
        ("1969-12-31T23:00:00Z", 1, "1970-01-31T23:00:00Z"),
    ])
    func addingMonths(start: String, months: Int, expected: String) {
        #expect(UTCCalendar.adding(months: months, to: Fixtures.date(start)) == Fixtures.date(expected))
    }

    @Test func keepsMilliseconds() {
        let start = Fixtures.date("2026-01-31T08:00:00.250Z")
        #expect(ContractCoding.timestamp(UTCCalendar.adding(months: 1, to: start)) == "2026-02-28T08:00:00.250Z")
    }
}
