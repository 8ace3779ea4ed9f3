import Foundation
import IMWire
import IMWorld
import SimKernel
import Testing
@testable import IMReplay

/// The shrinker on a scripted failure and on a random-workload failure (pinned seeds): the result
/// fails the same oracle on the same kind of event, is far smaller, says what it removed and why
/// the rest is needed, and does not depend on how many candidates run at once.
@Suite struct ShrinkerPassesTests {
    static func scenario(_ name: String, bugs: [String], swarm: Bool = false, dropScript: Bool = false) throws -> JSONValue {
        var v = try JSONValue.parse(Array(try Data(contentsOf: URL(fileURLWithPath: tracePath("Traces/scenarios/\(name).json")))))
        v = v.setting("client", (v["client"] ?? .object([])).setting("bugs", .array(bugs.map { .string($0) })))
        if swarm { v = v.setting("swarm", .bool(true)) }
        if dropScript { v = v.setting("script", nil) }
        return v
    }

    static func refails(_ r: ShrinkResult) throws -> Violation? {
        let run = try ScenarioRun(scenario: try ScenarioText.scenario(r.json), seed: r.seed, oracles: OracleOptions(scenarioArgument: "s"))
        run.run()
        return run.violations.first
    }

    /// everyday (7 users, 10 devices, 11 workload kinds, swarm faults, no script) with B7: the
    /// first failure (seed 1) is a random-workload one; the shrunk world is one user in the room
    /// who signs out and in.
    @Test func aRandomWorkloadFailureShrinksToUnderATenthOfItsEvents() throws {
        let v = try Self.scenario("everyday", bugs: ["B7"], swarm: true)
        let r = try Shrinker(scenario: v, seed: 1, maxRuns: 80).run()
        #expect(r.oracle == "chatroom" && r.eventKind == "chatroom")
        #expect(r.before.users == 7 && r.before.devices == 10 && r.before.workloadRates >= 10)
        #expect(r.after.users <= 2)
        #expect(r.after.faultKinds == 0)
        #expect(r.after.workloadRates <= 2)
        #expect(r.after.eventsUntilFailure * 10 <= r.before.eventsUntilFailure,
                "\(r.after.eventsUntilFailure) of \(r.before.eventsUntilFailure) events")
        let again = try #require(try Self.refails(r))
        #expect(again.oracle == "chatroom" && Shrinker.eventKind(again) == "chatroom")
        // What went and why the rest stays.
        #expect(r.removed.contains { $0.hasPrefix("users") })
        #expect(r.removed.contains { $0.contains("every random fault") || $0.contains("swarm") })
        #expect(!r.needed.isEmpty)
        #expect(r.needed.allSatisfy { $0.contains("without it the run") })
    }

    /// quickstart with B4 (a scripted failure): one send between two users; running candidates
    /// in batches (as --jobs does) gives the same file.
    @Test func aScriptedFailureShrinksTheSameWhateverTheBatchSize() throws {
        let v = try Self.scenario("quickstart", bugs: ["B4"])
        let one = try Shrinker(scenario: v, seed: 1, maxRuns: 200).run()
        #expect(one.oracle == "order")
        #expect(one.after.scriptSteps + one.after.workloadRates <= 1 && one.after.users <= 2 && one.after.faultKinds == 0)
        #expect(one.after.eventsUntilFailure <= one.before.eventsUntilFailure)
        #expect(try Self.refails(one)?.oracle == "order")
        let batched = try Shrinker(scenario: v, seed: 1, maxRuns: 200)
        batched.batchSize = 4
        var batches: [Int] = []
        let inner = batched.evaluator
        batched.evaluator = { list in batches.append(list.count); return inner(list) }
        let four = batched.run()
        #expect(four.text == one.text)
        #expect(four.removed == one.removed)
        #expect(batches.contains { $0 > 1 })
    }

    /// A generated population is written out as explicit users, groups and rooms that run
    /// identically (same digest), so users can then go one by one.
    @Test func anExpandedPopulationRunsIdentically() throws {
        let v = try JSONValue.parse("""
        {"name": "crowd", "duration": "2m",
         "population": {"users": 12, "groups": 2, "groupSize": 4, "chatrooms": 1, "chatroomMembers": 8, "secondDeviceFraction": 0.3},
         "workload": {"privateRate": "2/min", "groupRate": "1/min", "chatroomRate": "1/min", "activeFraction": 0.8},
         "faults": {"random": {"reset": {"rate": "1/min"}}}}
        """)
        let expanded = try #require(Shrinker.expandingPopulation(v, seed: 4))
        #expect(expanded["population"] == nil)
        #expect(ScenarioEdits.users(expanded).count == 12)
        func digest(_ j: JSONValue) throws -> String {
            let run = try ScenarioRun(scenario: try ScenarioText.scenario(j), seed: 4, oracles: OracleOptions(scenarioArgument: "s"))
            run.run()
            return "\(run.world.sim.digest)"
        }
        #expect(try digest(expanded) == digest(v))
    }
}
