import Foundation
import Testing
@testable import AppStore

/// The budget rule on a clock passed by hand: a request holds a slot from admission until one
/// window after it finished; shares that shrink apply at once, growth waits a window, and
/// Apple's pause wins.
@Suite struct EndpointBudgetTests {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    func at(_ seconds: Double) -> Date { t0.addingTimeInterval(seconds) }

    /// Admits at `seconds` and finishes at once (a request answered instantly); nil when admitted,
    /// else the instant to ask again.
    func request(_ budget: inout EndpointBudget, at seconds: Double) -> Date? {
        switch budget.admit(at: at(seconds)) {
        case .admitted(let ticket):
            budget.finish(ticket, at: at(seconds))
            return nil
        case .wait(let until):
            return until
        }
    }

    @Test func admitsAtMostTheAllowanceInAnySlidingWindow() {
        var budget = EndpointBudget(requests: 3, window: 10, start: t0)
        #expect(request(&budget, at: 0) == nil)
        #expect(request(&budget, at: 1) == nil)
        #expect(request(&budget, at: 2) == nil)
        #expect(request(&budget, at: 3) == at(10), "the oldest leaves the window at 10 s")
        #expect(request(&budget, at: 10) == nil)
        #expect(request(&budget, at: 10.5) == at(11))
        #expect(budget.used(at: at(10.5)) == 3)
    }

    @Test func aRequestInFlightHoldsItsSlotUntilOneWindowAfterItsAnswer() throws {
        var budget = EndpointBudget(requests: 2, window: 10, start: t0)
        guard case .admitted(let first) = budget.admit(at: at(0)), case .admitted = budget.admit(at: at(1)) else {
            Issue.record("not admitted")
            return
        }
        // Long after the window, both are still in flight (queued in a client, a slow network): no slot.
        #expect(request(&budget, at: 50) == at(50) + EndpointBudget.inFlightRecheck)
        budget.finish(first, at: at(60))           // answered late: it may have reached Apple just now
        #expect(request(&budget, at: 61) == at(70), "its slot is free one window after the answer")
        #expect(request(&budget, at: 70) == nil)
    }

    @Test func shareIsProportionalToOwnedPartitions() {
        var budget = EndpointBudget(requests: 10, window: 10, start: t0)
        budget.setShare(owned: 3, of: 8, at: t0)
        #expect(budget.allowance == 3)  // floor(10 * 3 / 8): the shares of a group never add up to more than the budget
        budget.setShare(owned: 0, of: 8, at: at(1))
        #expect(budget.allowance == 0)
        #expect(request(&budget, at: 1) == at(11))
    }

    @Test func aShrinkingShareAppliesAtOnceAndGrowthWaitsAWindow() {
        var budget = EndpointBudget(requests: 8, window: 10, start: t0)
        budget.setShare(owned: 4, of: 8, at: t0)           // first share: at once
        for second in 0..<4 { #expect(request(&budget, at: Double(second)) == nil) }
        #expect(request(&budget, at: 4) != nil)
        budget.setShare(owned: 2, of: 8, at: at(5))        // shrink: 4 used > 2 allowed
        #expect(request(&budget, at: 11) == at(12), "blocked until two of the four leave the window")
        budget.setShare(owned: 8, of: 8, at: at(20))       // grow beyond the largest share of the last window (2): +6 booked now
        #expect(budget.used(at: at(20)) == 6)
        #expect(request(&budget, at: 20) == nil)
        #expect(request(&budget, at: 20) == nil)
        #expect(request(&budget, at: 20) == at(30), "the growth is spendable once its booking leaves the window")
    }

    @Test func anEagerRebalanceKeepingTheSamePartitionsDoesNotStall() {
        var budget = EndpointBudget(requests: 8, window: 10, start: t0)
        budget.setShare(owned: 4, of: 8, at: t0)
        budget.setShare(owned: 0, of: 8, at: at(1))        // everything revoked ...
        budget.setShare(owned: 4, of: 8, at: at(1.5))      // ... and assigned again
        #expect(budget.used(at: at(1.5)) == 0)
        #expect(request(&budget, at: 2) == nil)
    }

    @Test func retryAfterPausesEveryRequest() {
        var budget = EndpointBudget(requests: 100, window: 10, start: t0)
        budget.pause(until: at(5))
        #expect(request(&budget, at: 1) == at(5))
        budget.pause(until: at(3))                         // an earlier instant never shortens a pause
        #expect(request(&budget, at: 4) == at(5))
        #expect(request(&budget, at: 5) == nil)
    }
}
