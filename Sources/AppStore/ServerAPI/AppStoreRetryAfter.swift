import Foundation

/// Parses `Retry-After` as the App Store sends it, and as other servers (or proxies in front of
/// Apple) might.
///
/// Apple documents the App Store Server API's `Retry-After` on 429 as "a UNIX time, in
/// milliseconds". RFC 9110 defines delta-seconds and HTTP-dates instead, so the value is read
/// defensively by magnitude:
/// - an integer ≥ 10¹¹ is UNIX milliseconds (10¹¹ ms is 1973; as seconds it would be year 5138);
/// - an integer ≥ 10⁹ is UNIX seconds (2001 onwards);
/// - a smaller non-negative integer is delta-seconds from `now`;
/// - otherwise an IMF-fixdate such as `Wed, 21 Oct 2026 07:28:00 GMT`.
public enum AppStoreRetryAfter {
    /// The instant a `Retry-After` value points at.
    /// - Parameters:
    ///   - value: The header value.
    ///   - now: The reference time for delta-seconds.
    /// - Returns: The instant, or `nil` when the value is none of the accepted forms.
    public static func parse(_ value: String, now: Date) -> Date? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if !trimmed.isEmpty, trimmed.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            guard let number = Int64(trimmed) else { return nil }
            if number >= 100_000_000_000 { return Date(timeIntervalSince1970: Double(number) / 1000) }
            if number >= 1_000_000_000 { return Date(timeIntervalSince1970: Double(number)) }
            return now.addingTimeInterval(Double(number))
        }
        return httpDate(trimmed)
    }

    /// Parses an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`).
    private static func httpDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.date(from: text)
    }
}
