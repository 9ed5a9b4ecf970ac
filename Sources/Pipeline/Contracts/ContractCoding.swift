import Foundation
import Observability

/// The one JSON dialect every receiptd contract uses, defined once so producers and consumers agree.
///
/// - Keys are sorted and slashes are not escaped, so equal messages encode to equal bytes
///   (useful for tests and for de-duplicating by content).
/// - Timestamps are RFC 3339 UTC strings (`2026-11-30T06:00:00Z`), with exactly three fractional
///   digits when the instant is not a whole second (Apple's dates carry milliseconds). Every
///   contract type encodes its dates itself through this helper, so the result does not depend
///   on an encoder's date strategy.
/// - Optional fields are written as explicit `null` rather than omitted, so consumers in other
///   languages see every documented field.
public enum ContractCoding {
    /// Encodes `value` as compact JSON bytes with sorted keys: written directly when the value is
    /// ``ContractWritable`` (every contract a stage emits), through its `Encodable` conformance otherwise.
    /// - Throws: `EncodingError` when the value cannot be represented (e.g. a non-finite double).
    public static func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        // The type is cast, not the value: a value cast copies the value into an existential box
        // (a retain of every field, and an allocation for the larger contracts) on every record.
        if let writable = T.self as? any ContractWritable.Type { return write(value, as: writable) }
        return try ContractJSONEncoder.encode(value)
    }

    /// `value`'s bytes through its ``ContractWritable`` conformance; `W` is `T` itself.
    private static func write<T, W: ContractWritable>(_ value: T, as _: W.Type) -> [UInt8] {
        withUnsafePointer(to: value) { UnsafeRawPointer($0).assumingMemoryBound(to: W.self).pointee.contractJSON() }
    }

    /// Decodes a contract from JSON bytes (strict JSON: duplicate members and trailing data refused).
    ///
    /// A ``ContractReadable`` type (the stages' hot inputs) is read straight from the parsed
    /// object; any other goes through its Codable conformance. Both accept and refuse alike.
    /// - Throws: `DecodingError` when the bytes are not JSON or do not match the contract.
    public static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        if let readable = T.self as? any ContractReadable.Type {
            return try read(readable, from: bytes, as: T.self)
        }
        return try ContractJSONDecoder.decode(type, from: bytes)
    }

    /// A ``ContractReadable`` read as `T`, which is `R` itself: cast from `R`, not from an
    /// existential, so the value is not boxed on the way.
    private static func read<R: ContractReadable, T>(_ type: R.Type, from bytes: [UInt8], as _: T.Type) throws -> T {
        try ContractJSONDecoder.read(R.self, from: bytes) as! T
    }

    /// Formats an instant as a contract timestamp: RFC 3339 UTC, milliseconds only when non-zero.
    ///
    /// The instant is rounded to the nearest millisecond first, so a value parsed from
    /// `…:00.123Z` prints back as `…:00.123Z` despite binary floating point.
    public static func timestamp(_ date: Date) -> String {
        timestamp(date, alwaysMilliseconds: false)
    }

    /// As ``timestamp(_:)``, optionally always printing the three fractional digits.
    /// The bytes are ``ContractTimestamp``'s, as the direct writer appends them.
    static func timestamp(_ date: Date, alwaysMilliseconds: Bool) -> String {
        String(unsafeUninitializedCapacity: ContractTimestamp.maxCount) { buffer in
            ContractTimestamp.write(date, alwaysMilliseconds: alwaysMilliseconds, to: buffer.baseAddress!)
        }
    }

    /// Parses a contract timestamp (any RFC 3339 form, converted to an instant).
    ///
    /// Only instants a contract timestamp can write back are accepted: after conversion to UTC
    /// and rounding to the millisecond, 0000-01-01T00:00:00.000Z through 9999-12-31T23:59:59.999Z
    /// (RFC 3339 years have four digits). An offset or the rounding can carry valid-looking text
    /// out of that range (`0000-01-01T00:00:00+00:01`, `9999-12-31T23:59:59.9999Z`);
    /// ``timestamp(_:)`` would write such an instant as `00-1-12-31T23:59:00Z` or
    /// `10000-01-01T00:00:00Z`, which no reader accepts, so a message ingest accepted could not be
    /// decoded by the next stage.
    public static func date(from string: String) -> Date? {
        string.withUTF8InPlace(date(fromUTF8:))
    }

    /// ``date(from:)`` of a string's UTF-8 bytes.
    static func date(fromUTF8 bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        guard let date = RFC3339.date(fromUTF8: bytes),
              writableMilliseconds.contains((date.timeIntervalSince1970 * 1000).rounded()) else { return nil }
        return date
    }

    /// Milliseconds since 1970 of 0000-01-01T00:00:00.000Z through 9999-12-31T23:59:59.999Z.
    static let writableMilliseconds: ClosedRange<Double> = -62_167_219_200_000 ... 253_402_300_799_999
}

extension KeyedEncodingContainer {
    /// Writes a date as a contract timestamp string.
    mutating func encodeTimestamp(_ date: Date, forKey key: Key) throws {
        try encode(ContractCoding.timestamp(date), forKey: key)
    }

    /// Writes a date as a contract timestamp string, or `null`.
    mutating func encodeTimestamp(_ date: Date?, forKey key: Key) throws {
        try encode(date.map(ContractCoding.timestamp), forKey: key)
    }
}

extension KeyedDecodingContainer {
    /// Reads a required contract timestamp.
    func decodeTimestamp(forKey key: Key) throws -> Date {
        let text = try decode(String.self, forKey: key)
        guard let date = ContractCoding.date(from: text) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: self,
                                                   debugDescription: "not an RFC 3339 timestamp")
        }
        return date
    }

    /// Reads an optional contract timestamp (absent or `null` gives nil).
    func decodeTimestampIfPresent(forKey key: Key) throws -> Date? {
        guard let text = try decodeIfPresent(String.self, forKey: key) else { return nil }
        guard let date = ContractCoding.date(from: text) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: self,
                                                   debugDescription: "not an RFC 3339 timestamp")
        }
        return date
    }
}
