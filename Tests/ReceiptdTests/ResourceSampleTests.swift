import Foundation
import Testing
@testable import Receiptd

/// The benches' counters read the right fields: touching fresh memory shows up as minor page faults
/// of this process, through `/proc` and through `getrusage` alike, and CPU spent shows up as CPU.
@Suite struct ResourceSampleTests {
    @Test func freshPagesCountAsMinorFaultsAndWorkAsCPU() {
        let pages = 2_048
        let before = ResourceSample.counters(of: 0)
        let ownBefore = processMinorFaults()
        let cpuBefore = processCPUSeconds()
        // Pages of a fresh mapping (the heap might hand back pages it has touched before).
        let mapping = mmap(nil, pages * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        guard let buffer = mapping, buffer != MAP_FAILED else { Issue.record("mmap failed"); return }
        defer { munmap(buffer, pages * 4096) }
        for page in 0..<pages { buffer.storeBytes(of: UInt8(truncatingIfNeeded: page), toByteOffset: page * 4096, as: UInt8.self) }
        var spin: UInt64 = 1
        let until = ContinuousClock.now + .milliseconds(50)
        while ContinuousClock.now < until { spin = spin &* 6364136223846793005 &+ 1442695040888963407 }
        let after = ResourceSample.counters(of: 0)
        #expect(after.minorFaults - before.minorFaults >= Double(pages) / 2, "one fault per fresh page")
        #expect(processMinorFaults() - ownBefore >= pages / 2)
        #expect(processCPUSeconds() - cpuBefore >= 0.02 && spin != 0)
        #expect(after.cpuSeconds - before.cpuSeconds >= 0.02)
    }
}
