import Foundation
import Testing
@testable import Pipeline

/// The lifecycle table run through the real verifier, fulfil and the owner view: each scenario's
/// exact events in order, then the same final owner states re-ordered and with every input
/// delivered twice.
@Suite struct LifecycleScenarioTests {
    @Test("in order: the exact events, verdicts and final owner states", arguments: LifecycleScenarios.all)
    func inOrder(_ scenario: LifecycleScenario) async throws {
        let run = try await LifecycleHarness(policy: scenario.policy).run(scenario.inputs())
        #expect(LifecycleScenario.observed(run) == scenario.events)
        for (label, verdicts) in scenario.verdicts {
            #expect(run.verdicts[label] == verdicts, "verdicts of \(label)")
        }
        #expect(scenario.finalOwners(run) == scenario.owners)
        #expect(Set(run.events.map(\.eventId)).count == run.events.count, "event ids are unique")
    }

    @Test("every input delivered twice: no extra event, same final state", arguments: LifecycleScenarios.all)
    func deliveredTwice(_ scenario: LifecycleScenario) async throws {
        let inputs = scenario.inputs()
        let harness = LifecycleHarness(policy: scenario.policy)
        let once = try await harness.run(inputs)
        let twice = try await harness.run(inputs.flatMap { [$0, $0] })
        #expect(twice.events.map(\.eventId) == once.events.map(\.eventId))
        #expect(scenario.finalOwners(twice) == scenario.owners)
        // A second pass of the whole sequence emits nothing (claims are order-dependent by nature:
        // under `transfer` the first claimant claiming again takes the purchase back).
        if scenario.reorderable {
            let replayed = try await harness.run(inputs + inputs)
            #expect(replayed.events.map(\.eventId) == once.events.map(\.eventId), "a second pass of the whole sequence emits nothing")
        }
    }

    @Test("re-ordered (reversed and shuffled): the same final owner states",
          arguments: LifecycleScenarios.all.filter(\.reorderable))
    func reordered(_ scenario: LifecycleScenario) async throws {
        let inputs = scenario.inputs()
        let harness = LifecycleHarness(policy: scenario.policy)
        var shuffle = SeededShuffle(seed: 7)
        for order in [Array(inputs.reversed()), shuffle.shuffled(inputs), shuffle.shuffled(inputs), shuffle.shuffled(inputs)] {
            let run = try await harness.run(order)
            #expect(scenario.finalOwners(run) == scenario.owners, "order \(order.map(\.label))")
            let doubled = try await harness.run(order.flatMap { [$0, $0] })
            #expect(scenario.finalOwners(doubled) == scenario.owners, "order \(order.map(\.label)), each twice")
        }
    }
}
