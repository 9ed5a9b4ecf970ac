import CJemalloc

/// The allocator of every receiptd process: jemalloc, linked into the executable in place of
/// glibc's malloc. Per-record work in Swift allocates and frees small objects at a high rate, and
/// glibc's malloc took about a tenth of the workers' CPU (docs/benchmarks.md, session 9).
enum Allocator {
    /// "jemalloc <version>", or nil if jemalloc does not answer (it would then not be the one
    /// serving this process's allocations).
    static let name: String? = CJemalloc_version().map { "jemalloc " + String(cString: $0) }

    /// Bytes allocated and not yet freed through jemalloc, or nil without statistics.
    static func allocatedBytes() -> Int? {
        let bytes = CJemalloc_allocatedBytes()
        return bytes >= 0 ? bytes : nil  // size_t arrives as Int: the shim's SIZE_MAX is -1 here
    }
}
