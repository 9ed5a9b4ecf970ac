import Observability

/// A contract string that may still be the bytes of the record it was read from. Verify reads a
/// JWS through its bytes (``SignedDataVerifier/verifyAndDecodeTransaction(utf8:)``); a `String` of
/// it would copy and validate about 4 KB per record only to be read as bytes again.
struct RecordText: Sendable, Equatable {
    private enum Storage {
        case string(String)
        /// Plain ASCII, so the bytes are the text (a ``JSONTape`` string without escapes).
        case ascii(ArraySlice<UInt8>)
    }

    private let storage: Storage

    init(_ string: String) {
        storage = .string(string)
    }

    /// `bytes` must be ASCII (``JSONTape/asciiBytes(ofStringAt:)``).
    init(ascii bytes: ArraySlice<UInt8>) {
        storage = .ascii(bytes)
    }

    /// The text; a `String` is built each time for text held as bytes.
    var string: String {
        switch storage {
        case .string(let string): string
        case .ascii(let bytes): String(decoding: bytes, as: UTF8.self)
        }
    }

    var utf8Count: Int {
        switch storage {
        case .string(let string): string.utf8.count
        case .ascii(let bytes): bytes.count
        }
    }

    /// `body` over the text's UTF-8, where it is.
    func withUTF8<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        switch storage {
        case .string(let string): try string.withUTF8InPlace(body)
        case .ascii(let bytes): try bytes.withUnsafeBufferPointer(body)
        }
    }

    /// As `String`'s `==` (canonical equivalence), whichever way each side is held.
    static func == (lhs: RecordText, rhs: RecordText) -> Bool {
        if case .ascii(let left) = lhs.storage, case .ascii(let right) = rhs.storage { return left == right }
        return lhs.string == rhs.string
    }
}
