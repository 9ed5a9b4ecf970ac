import Testing
@testable import Receiptd

/// jemalloc is the allocator of a receiptd process (this test process links the same module, and
/// so the same library): it answers, and the memory Swift allocates is counted by it, which would
/// not be so were glibc's malloc still serving the allocations.
@Suite struct AllocatorTests {
    @Test func jemallocServesSwiftAllocations() throws {
        let name = try #require(Allocator.name)
        #expect(name.hasPrefix("jemalloc 5."), "\(name)")
        let before = try #require(Allocator.allocatedBytes())
        let block = [UInt8](repeating: 1, count: 64 << 20)
        let during = try #require(Allocator.allocatedBytes())
        #expect(during - before >= 64 << 20, "\(before) -> \(during)")
        #expect(block.count == 64 << 20)
    }
}
