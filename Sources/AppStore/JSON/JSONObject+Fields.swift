import Foundation

/// Typed, strict access to payload members. `null` counts as absent. A present member with the
/// wrong JSON type is `invalid-field`; a bad date is `invalid-date`; an absent required member is
/// `missing-field`. Member names in details are our own constants, never input data.
extension JSONObject {
    private func present(_ key: String) -> JSONValue? {
        switch self[key] {
        case .none, .some(.null): return nil
        case .some(let value): return value
        }
    }

    private func wrongType(_ key: String, _ expected: String, _ value: JSONValue) -> VerificationError {
        VerificationError(.invalidField, "field \(key) must be \(expected), got \(value.typeName)")
    }

    func optionalString(_ key: String) throws(VerificationError) -> String? {
        guard let value = present(key) else { return nil }
        guard case .string(let string) = value else { throw wrongType(key, "a string", value) }
        return string
    }

    func requiredString(_ key: String) throws(VerificationError) -> String {
        guard let string = try optionalString(key) else { throw VerificationError(.missingField, "field \(key) is required") }
        return string
    }

    func optionalBool(_ key: String) throws(VerificationError) -> Bool? {
        guard let value = present(key) else { return nil }
        guard case .bool(let bool) = value else { throw wrongType(key, "a boolean", value) }
        return bool
    }

    func optionalInt64(_ key: String) throws(VerificationError) -> Int64? {
        guard let value = present(key) else { return nil }
        guard case .integer(let integer) = value else { throw wrongType(key, "an integer", value) }
        return integer
    }

    func optionalInt32(_ key: String) throws(VerificationError) -> Int32? {
        guard let integer = try optionalInt64(key) else { return nil }
        guard let narrow = Int32(exactly: integer) else {
            throw VerificationError(.invalidField, "field \(key) is out of the 32-bit range")
        }
        return narrow
    }

    func optionalStringArray(_ key: String) throws(VerificationError) -> [String]? {
        guard let value = present(key) else { return nil }
        guard case .array(let elements) = value else { throw wrongType(key, "an array of strings", value) }
        var strings: [String] = []
        strings.reserveCapacity(elements.count)
        for element in elements {
            guard case .string(let string) = element else { throw wrongType(key, "an array of strings", element) }
            strings.append(string)
        }
        return strings
    }

    /// A date as integer milliseconds since 1970 within `range`.
    func optionalMilliseconds(_ key: String, range: ClosedRange<Int64>) throws(VerificationError) -> Int64? {
        guard let value = present(key) else { return nil }
        guard case .integer(let milliseconds) = value else {
            throw VerificationError(.invalidDate, "field \(key) must be integer milliseconds, got \(value.typeName)")
        }
        guard range.contains(milliseconds) else {
            throw VerificationError(.invalidDate, "field \(key) is outside the accepted date range")
        }
        return milliseconds
    }

    func optionalDate(_ key: String, range: ClosedRange<Int64>) throws(VerificationError) -> Date? {
        guard let milliseconds = try optionalMilliseconds(key, range: range) else { return nil }
        return Date(millisecondsSince1970: milliseconds)
    }

    func requiredDate(_ key: String, range: ClosedRange<Int64>) throws(VerificationError) -> Date {
        guard let date = try optionalDate(key, range: range) else { throw VerificationError(.missingField, "field \(key) is required") }
        return date
    }
}

extension Date {
    /// A date from integer milliseconds since 1970 (exact for every value Apple sends).
    init(millisecondsSince1970 milliseconds: Int64) {
        self.init(timeIntervalSince1970: Double(milliseconds) / 1000)
    }

    /// Milliseconds since 1970, rounded to the nearest millisecond.
    var millisecondsSince1970: Int64 {
        Int64((timeIntervalSince1970 * 1000).rounded())
    }
}
