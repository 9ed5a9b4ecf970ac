@testable import FakeAppStore
import Synchronization
import Testing

/// The fake's latency knob holds requests on one timer thread: every waiter comes back, none
/// before its time, the longest wait last. Lower bounds only; no timing upper bounds.
@Suite struct FakeDelayLineTests {
    /// What the waiters report, shared with their tasks.
    final class WaiterLog: Sendable {
        let finished = Mutex<[Int]>([])
        let resumed = Atomic<Int>(0)
    }

    @Test func everyWaiterResumesNoEarlierThanAsked() async {
        let line = FakeDelayLine()
        let clock = ContinuousClock()
        let started = clock.now
        let log = WaiterLog()
        let delays = [150, 30, 90, 30, 0, 60]
        await withTaskGroup(of: Void.self) { group in
            for (index, milliseconds) in delays.enumerated() {
                group.addTask {
                    await line.wait(for: .milliseconds(milliseconds))
                    #expect(clock.now - started >= .milliseconds(milliseconds), "waiter \(index)")
                    log.finished.withLock { $0.append(index) }
                }
            }
        }
        let order = log.finished.withLock { $0 }
        #expect(order.sorted() == Array(delays.indices))
        #expect(order.last == 0, "the 150 ms waiter comes back last, 60 ms after any other")
    }

    @Test func manyWaitersWithEqualDeadlinesAllResume() async {
        let line = FakeDelayLine()
        let log = WaiterLog()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<2_000 {
                group.addTask {
                    await line.wait(for: .milliseconds(20))
                    log.resumed.add(1, ordering: .relaxed)
                }
            }
        }
        #expect(log.resumed.load(ordering: .relaxed) == 2_000)
        // Idle again, the thread still serves a later waiter.
        await line.wait(for: .milliseconds(5))
    }
}
