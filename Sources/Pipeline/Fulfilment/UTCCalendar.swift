import Foundation

/// Calendar arithmetic in UTC on the proleptic Gregorian calendar, without `Calendar` (whose
/// behaviour depends on the host's time-zone data and which is heavy for a hot path).
enum UTCCalendar {
    /// Adds calendar months, keeping the time of day and clamping the day to the target month's
    /// length: Jan 31 + 1 month = Feb 28 (29 in leap years); Mar 31 + 1 month = Apr 30.
    static func adding(months: Int, to date: Date) -> Date {
        let seconds = date.timeIntervalSince1970
        let days = Int64((seconds / 86_400).rounded(.down))
        let secondOfDay = seconds - Double(days) * 86_400
        let (year, month, day) = civil(fromDays: days)
        let monthIndex = year * 12 + (month - 1) + Int64(months)
        let newYear = floorDivide(monthIndex, 12)
        let newMonth = monthIndex - newYear * 12 + 1
        let newDay = min(day, daysIn(month: newMonth, year: newYear))
        return Date(timeIntervalSince1970: Double(daysFromCivil(newYear, newMonth, newDay)) * 86_400 + secondOfDay)
    }

    static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    static func isLeap(_ year: Int64) -> Bool {
        (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
    }

    private static func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
        let q = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
    }

    /// Days since 1970-01-01 of a civil date (era-based, valid for any year).
    static func daysFromCivil(_ year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = floorDivide(y, 400)
        let yearOfEra = y - era * 400
        let shiftedMonth = month > 2 ? month - 3 : month + 9
        let dayOfYear = (153 * shiftedMonth + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The civil date of a day count since 1970-01-01.
    static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = floorDivide(z, 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }
}
