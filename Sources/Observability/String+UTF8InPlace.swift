extension String {
    /// Calls `body` with the string's UTF-8 bytes where they are. `withUTF8` needs a `var`, and
    /// the copy that makes one retains and releases the string's storage; the hot paths (contract
    /// reading and writing, hashing of names and keys) read a few dozen strings per record.
    /// Always inlined: a closure passed to a call retains what it captures.
    @inlinable @inline(__always)
    public func withUTF8InPlace<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        var result: R?
        if try utf8.withContiguousStorageIfAvailable({ result = try body($0) }) != nil, let result { return result }
        var copy = self
        return try copy.withUTF8(body)
    }
}
