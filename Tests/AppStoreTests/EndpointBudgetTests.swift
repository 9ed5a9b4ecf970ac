import Foundation
import Testing
@testable import AppStore

/// The budget rule on a clock passed by hand: at most `allowance` requests in any sliding window,
/// shares that shrink apply at once, growth waits a window, and Apple's pause wins.
@Suite struct EndpointBudgetTests {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    func at(_ seconds: Double) -> Date { t0.addingTimeInterval(seconds) }

    @Test func admitsAtMostTheAllowanceInAnySlidingWindow() {
        var budget = EndpointBudget(requests: 3, window: 10, start: t0)
        #expect(budget.admit(at: at(0)) == nil)
        #expect(budget.admit(at: at(1)) == nil)
        #expect(budget.admit(at: at(2)) == nil)
        #expect(budget.admit(at: at(3)) == at(10), "the oldest leaves the window at 10 s")
        #expect(budget.admit(at: at(10)) == nil)
        #expect(budget.admit(at: at(10.5)) == at(11))
        #expect(budget.used(at: at(10.5)) == 3)
    }

    @Test func shareIsProportionalToOwnedPartitions() {
        var budget = EndpointBudget(requests: 10, window: 10, start: t0)
        budget.setShare(owned: 3, of: 8, at: t0)
        #expect(budget.allowance == 3)  // floor(10 * 3 / 8): the shares of a group never add up to more than the budget
        budget.setShare(owned: 0, of: 8, at: at(1))
        #expect(budget.allowance == 0)
        #expect(budget.admit(at: at(1)) == at(11))
    }

    @Test func aShrinkingShareAppliesAtOnceAndGrowthWaitsAWindow() {
        var budget = EndpointBudget(requests: 8, window: 10, start: t0)
        budget.setShare(owned: 4, of: 8, at: t0)           // first share: at once
        for second in 0..<4 { #expect(budget.admit(at: at(Double(second))) == nil) }
        #expect(budget.admit(at: at(4)) != nil)
        budget.setShare(owned: 2, of: 8, at: at(5))        // shrink: 4 used > 2 allowed
        #expect(budget.admit(at: at(11)) == at(12), "blocked until two of the four leave the window")
        budget.setShare(owned: 8, of: 8, at: at(20))       // grow beyond the largest share of the last window (2): +6 booked now
        #expect(budget.used(at: at(20)) == 6)
        #expect(budget.admit(at: at(20)) == nil)
        #expect(budget.admit(at: at(20)) == nil)
        #expect(budget.admit(at: at(20)) == at(30), "the growth is spendable once its booking leaves the window")
    }

    @Test func anEagerRebalanceKeepingTheSamePartitionsDoesNotStall() {
        var budget = EndpointBudget(requests: 8, window: 10, start: t0)
        budget.setShare(owned: 4, of: 8, at: t0)
        budget.setShare(owned: 0, of: 8, at: at(1))        // everything revoked ...
        budget.setShare(owned: 4, of: 8, at: at(1.5))      // ... and assigned again
        #expect(budget.used(at: at(1.5)) == 0)
        #expect(budget.admit(at: at(2)) == nil)
    }

    @Test func retryAfterPausesEveryRequest() {
        var budget = EndpointBudget(requests: 100, window: 10, start: t0)
        budget.pause(until: at(5))
        #expect(budget.admit(at: at(1)) == at(5))
        budget.pause(until: at(3))                         // an earlier instant never shortens a pause
        #expect(budget.admit(at: at(4)) == at(5))
        #expect(budget.admit(at: at(5)) == nil)
    }
}
