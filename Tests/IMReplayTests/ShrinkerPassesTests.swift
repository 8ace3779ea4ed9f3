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

    /// A crowd of 60 generated users around B3 (a no-loss verdict given at the end of the
    /// liveness phase): the users that did nothing near the failure go in one candidate run,
    /// and the heal moves from 30 s to just after the cursor jump (the verdict comes at the end,
    /// so cutting the duration "just past the violation" cannot help).
    @Test func aCrowdGoesInOneRunAndAFinalVerdictHealsEarlier() throws {
        var v = try JSONValue.parse(Array(try Data(contentsOf: URL(fileURLWithPath: tracePath("Traces/bugs/B3.json")))))
        v = v.setting("duration", .string("30s"))
        v = v.setting("population", try JSONValue.parse(#"{"users": 60, "idPrefix": "p"}"#))
        v = v.setting("workload", try JSONValue.parse(#"{"privateRate": "1/min"}"#))
        let shrinker = try Shrinker(scenario: v, seed: 1, maxRuns: 60)
        var sizes: [Int] = []
        let r = shrinker.run { sizes.append($0.size.users) }
        #expect(r.oracle == "no-loss")
        #expect(r.before.users == 62)
        // The first candidate run already kept only the actors near the failure.
        #expect((sizes.first ?? 99) <= 12, "\(sizes.prefix(3))")
        #expect(r.removed.contains { $0.hasPrefix("users (focused)") })
        #expect(r.after.users == 2)
        // The heal at 11 s: alice connects at 10 s and the NEW message that moves her cursor comes at 10.15 s.
        #expect(r.removed.contains { $0.contains("heal at") })
        let duration = try SimDuration(parsing: try #require(r.json["duration"]?.stringValue))
        #expect(duration <= .seconds(12) && duration > .seconds(10))
        #expect(r.after.eventsUntilFailure * 10 <= r.before.eventsUntilFailure, "\(r.after.eventsUntilFailure) of \(r.before.eventsUntilFailure)")
        #expect(try Self.refails(r)?.oracle == "no-loss")
    }

    /// B13 needs more likes in one 200 ms window than the quota's shared slots: with the spec's
    /// 40/20 quota, five users send 25 likes. Halving the quota (a smaller constant, the same
    /// rule) lets a few likes of one user show the same violation, so the other likers go.
    @Test func aSmallerQuotaNeedsFewerLikers() throws {
        let likers = ["u1", "u2", "u3", "u4", "u5"]
        let users = (likers + ["watcher"]).map { #"{"id": "\#($0)", "devices": [{"id": "\#($0)-phone", "startAt": "0s"}]}"# }
        let steps = likers.map {
            #"{"at": "5s", "device": "\#($0)-phone", "action": "send", "to": "chatroom:hall", "type": "App:Like", "content": "{\"like\":1}", "count": 5, "interval": "8ms"}"#
        }
        let v = try JSONValue.parse("""
        {"name": "likers", "duration": "20s", "users": [\(users.joined(separator: ", "))],
         "chatrooms": [{"id": "hall", "members": [\((likers + ["watcher"]).map { "\"\($0)\"" }.joined(separator: ", "))], "joinCount": 10}],
         "network": {"latency": {"fixed": "50ms"}, "connectSetup": {"fixed": "10ms"}, "splitProbability": 0},
         "server": {"chatroom": {"lowPriorityTypes": ["App:Like"]}, "bugs": ["B13"]},
         "script": [\(steps.joined(separator: ", "))],
         "liveness": {"deadline": "30s"}}
        """)
        let r = try Shrinker(scenario: v, seed: 1, maxRuns: 120).run()
        #expect(r.oracle == "quota")
        #expect(r.removed.contains { $0.contains("chatroom quota") })
        #expect(r.after.users <= 2 && r.before.users == 6)
        #expect(r.after.eventsUntilFailure < r.before.eventsUntilFailure)
        #expect(try Self.refails(r)?.oracle == "quota")
    }
}
