import Foundation
import IMClient
import IMWire
import IMWorld
import SimKernel
import Testing
@testable import IMReplay

@Suite struct LiftTests {
    @Test(arguments: SampleCaptureTests.samples) func liftedScenarioParsesRunsAndReproduces(_ s: SampleCaptureTests.Sample) throws {
        let path = tracePath("Traces/captures/\(s.file).jsonl")
        let lifted = try Lifter.lift(path: path)
        // The text is a normal scenario file.
        let parsed = try Scenario.load(json: Data(lifted.text.utf8))
        #expect(parsed == lifted.scenario)
        #expect(parsed.client.bugs == [s.bug])
        let v = NeighbourSearch.run(parsed, seed: 1, oracle: s.oracle, device: "alice-phone", scenarioArgument: "lifted.json")
        #expect(v?.oracle == s.oracle, "the lifted world reproduces the captured violation")
        // Lifting is deterministic, and the neighbour template loads.
        #expect(try Lifter.lift(path: path).text == lifted.text)
        _ = try ScenarioText.scenario(NeighbourSearch.template(of: lifted))
    }

    @Test func liftedDedupWorldHasTheSenderAndItsMessages() throws {
        let lifted = try Lifter.lift(path: tracePath("Traces/captures/dedup-b1.jsonl"))
        #expect(lifted.scenario.users.map(\.id) == ["alice", "bob"])
        #expect(lifted.peerMessages == 2)
        #expect(lifted.oneWayLatencyMs == 50)
        #expect(lifted.clockOffsetMs == 0)
        let sends = lifted.scenario.script.filter { $0.device == "bob-phone" && $0.action.kind == .send }
        #expect(sends.count == 2)
        // Without the bug, the lifted world is clean.
        let fixed = try Lifter.lift(path: tracePath("Traces/captures/dedup-b1.jsonl"), bugs: [])
        #expect(NeighbourSearch.run(fixed.scenario, seed: 1, oracle: nil, device: nil, scenarioArgument: "x") == nil)
    }

    @Test func neighboursReproduceSometimes() throws {
        let lifted = try Lifter.lift(path: tracePath("Traces/captures/order-b4.jsonl"))
        let n = try ScenarioText.scenario(NeighbourSearch.template(of: lifted))
        let hits = NeighbourSearch.explore(n, count: 5, oracle: "order", device: "alice-phone", scenarioArgument: "n.json")
        #expect(!hits.isEmpty)
        // B4 shows on every send of alice's that reaches the server: a neighbour that does not
        // reproduce is one whose random faults made that send fail (a reset just before it).
        for seed: UInt64 in 1...5 where !hits.contains(seed) {
            let failed = FailedSends(device: "alice-phone")
            let run = try ScenarioRun(scenario: n, seed: seed, oracles: OracleOptions(scenarioArgument: "n.json"), observers: [failed])
            run.run()
            #expect(failed.count > 0, "neighbour \(seed) does not reproduce, yet alice's send went through")
        }
    }

    /// Counts send results with an error on one device.
    final class FailedSends: WorldObserver {
        let device: String
        var count = 0
        init(device: String) { self.device = device }
        func world(_ world: World, device d: Int, applied effects: AppliedClientEffects) {
            guard world.deviceId(d) == device else { return }
            for e in effects { if case .callback(.sendResult(_, _, _, let error)) = e, error != nil { count += 1 } }
        }
    }
}

@Suite struct ShrinkTests {
    /// quickstart (4 users, 5 devices, 7 script steps, 5 workload rates, 3 fault kinds) with B4
    /// fails `order` at once; the minimal failing world is one sender and one recipient.
    @Test func quickstartWithB4ShrinksToOneSendBetweenTwoUsers() throws {
        var v = try JSONValue.parse(Array(try Data(contentsOf: URL(fileURLWithPath: tracePath("Traces/scenarios/quickstart.json")))))
        v = v.setting("client", .object(["bugs": .array([.string("B4")])]))
        let shrinker = try Shrinker(scenario: v, seed: 1, maxRuns: 200)
        let r = shrinker.run()
        #expect(r.oracle == "order")
        #expect(r.before.scriptSteps == 7 && r.before.users == 4 && r.before.workloadRates == 5 && r.before.faultKinds == 3)
        // One send between two users: one script step or one workload kind (the shrinker keeps
        // whichever it reaches first; both fail after the same few events).
        #expect(r.after.scriptSteps + r.after.workloadRates <= 1)
        #expect(r.after.users <= 2)
        #expect(r.after.devices <= 2)
        #expect(r.after.faultKinds == 0 && r.after.groups == 0 && r.after.chatrooms == 0)
        #expect(r.after.eventsUntilFailure * 4 <= r.before.eventsUntilFailure)
        #expect(r.runs <= 200)
        // The result is a scenario that still fails the same oracle with the same seed.
        let run = try ScenarioRun(scenario: try ScenarioText.scenario(r.json), seed: 1, oracles: OracleOptions(scenarioArgument: "s"))
        run.run()
        #expect(run.violations.first?.oracle == "order")
        // Deterministic.
        #expect(try Shrinker(scenario: v, seed: 1, maxRuns: 200).run().text == r.text)
    }

    @Test func shrinkingTheDedupSampleDropsTheIrrelevantMessage() throws {
        let v = try JSONValue.parse(Array(try Data(contentsOf: URL(fileURLWithPath: tracePath("Traces/captures/dedup-b1.scenario.json")))))
        let r = try Shrinker(scenario: v, seed: 1, oracle: "no-duplicate").run()
        #expect(r.after.scriptSteps == 1)
        #expect(r.after.users == 2)
        #expect(r.violation.oracle == "no-duplicate")
    }

    @Test func aScenarioThatDoesNotFailIsRefused() throws {
        let v = try JSONValue.parse(Array(try Data(contentsOf: URL(fileURLWithPath: tracePath("Traces/captures/dedup-b1.scenario.json")))))
        let fixed = v.setting("client", .object(["bugs": .array([])]))
        #expect(throws: Shrinker.Failure.self) { try Shrinker(scenario: fixed, seed: 1) }
    }
}
