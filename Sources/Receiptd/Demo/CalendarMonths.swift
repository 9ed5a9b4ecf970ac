import Foundation

/// Calendar-month arithmetic in UTC for the generator's own model (non-renewing subscriptions
/// last calendar months): Foundation's Gregorian calendar for the civil date, the day clamped to
/// the target month's length (Jan 31 + 1 month = Feb 28 or 29), the time of day kept to the
/// millisecond. Written apart from fulfil's calendar on purpose: the demo checks fulfil against it.
enum CalendarMonths {
    private static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()

    static func adding(_ months: Int, to date: Date) -> Date {
        let dayMs: Int64 = 86_400_000
        let ms = date.milliseconds
        let days = ms >= 0 ? ms / dayMs : (ms - dayMs + 1) / dayMs
        let msOfDay = ms - days * dayMs
        let midnight = Date(timeIntervalSince1970: Double(days) * 86_400)
        let civil = calendar.dateComponents([.year, .month, .day], from: midnight)
        let monthIndex = civil.year! * 12 + (civil.month! - 1) + months
        let (year, month) = (monthIndex / 12, monthIndex % 12 + 1)
        let first = calendar.date(from: DateComponents(year: year, month: month, day: 1))!
        let length = calendar.range(of: .day, in: .month, for: first)!.count
        let target = calendar.date(from: DateComponents(year: year, month: month, day: min(civil.day!, length)))!
        return Date(timeIntervalSince1970: Double(target.milliseconds + msOfDay) / 1000)
    }
}
