import Testing
@testable import Pipeline

/// The runner's one timer for per-record timeouts, driven by hand (``ProcessingWatchdog/expire(now:)``).
@Suite struct ProcessingWatchdogTests {
    /// A body that waits "forever" unless cancelled and reports whether it saw the cancellation,
    /// running under `watchdog` (registered when this returns).
    static func waitingForever(under watchdog: ProcessingWatchdog, timeout: Duration) async -> Task<Bool?, Never> {
        let running = Task {
            await watchdog.run(timeout: timeout) { () -> Bool in
                do { try await Task.sleep(for: .seconds(3600)) } catch { return true }
                return false
            }
        }
        while watchdog.count == 0 { await Task.yield() }
        return running
    }

    @Test func aBodyThatFinishesInTimeReturnsItsValue() async {
        let watchdog = ProcessingWatchdog()
        let value = await watchdog.run(timeout: .seconds(60)) { 42 }
        #expect(value == 42)
        #expect(watchdog.count == 0)
    }

    @Test func anOverdueBodyIsCancelledAndReportedAsTimedOut() async {
        let watchdog = ProcessingWatchdog()
        let running = await Self.waitingForever(under: watchdog, timeout: .milliseconds(1))
        watchdog.expire(now: .now + .seconds(1))  // past the deadline, whenever it was registered
        let result = await running.value
        #expect(result == nil)
        #expect(watchdog.count == 0)
    }

    @Test func aBodyNotYetDueIsLeftAlone() async {
        let watchdog = ProcessingWatchdog()
        let gate = Gate()
        let running = Task { await watchdog.run(timeout: .seconds(60)) { () -> Int in
            try? await gate.wait()
            return 7
        } }
        while watchdog.count == 0 { await Task.yield() }
        watchdog.expire(now: .now)
        gate.open()
        #expect(await running.value == 7)
    }

    @Test func cancellingTheCallerCancelsTheBody() async {
        let watchdog = ProcessingWatchdog()
        let running = await Self.waitingForever(under: watchdog, timeout: .seconds(60))
        running.cancel()
        #expect(await running.value == true)  // not a timeout: the body's own answer
    }
}
