import Foundation
import IMWire
import IMWorld
import SimKernel
import Testing
@testable import IMReplay

/// What the shrinker removes around a tiny failure (issue 24, B4): a peer the failure needs only
/// as someone to write to does not need its device online before the failure, and split writes
/// are network events the failure does not need. Pinned seed.
@Suite struct ShrinkerPeerAndNetworkTests {
    /// quickstart + B4 with swarm faults, seed 1 (`bench bugs`' first failure): bob's workload
    /// message to alice and its PUBACK. Before these edits the shrink kept alice's connect and
    /// pull and bob's split writes: 20 of 117 events. Now alice's phone starts after the failure
    /// and writes are not split: bob's connect, pull and send are all that is left.
    @Test func aPeerOnlyWrittenToStartsAfterTheFailureAndWritesAreNotSplit() throws {
        let v = try ShrinkerPassesTests.scenario("quickstart", bugs: ["B4"], swarm: true)
        let r = try Shrinker(scenario: v, seed: 1, maxRuns: 200).run()
        #expect(r.oracle == "order")
        #expect(r.after.users == 2)
        #expect(r.after.eventsUntilFailure * 10 <= r.before.eventsUntilFailure,
                "\(r.after.eventsUntilFailure) of \(r.before.eventsUntilFailure) events")
        #expect(r.removed.contains { $0.contains("starts after the failure") })
        #expect(r.removed.contains { $0.contains("no split writes") })
        #expect(r.json["network"]?["splitProbability"] == .int(0))
        let again = try #require(try ShrinkerPassesTests.refails(r))
        #expect(again.oracle == "order")
        // The late device starts once the failure is over, and the file says so.
        let alice = try #require(ScenarioEdits.array(r.json, "users").first { $0["id"]?.stringValue == "alice" })
        let start = try #require(alice["devices"]?.arrayValue?.first?["startAt"]?.stringValue)
        #expect(try SimDuration(parsing: start).nanoseconds > again.timeNanoseconds)
    }

    /// The edits themselves: a device without a list gets its default one, a device already
    /// starting later is left alone, and a network setting reaches every override that sets it.
    @Test func theStartAndNetworkEditsTouchOnlyWhatTheySay() throws {
        let v = try JSONValue.parse("""
        {"name": "e", "duration": "1m",
         "users": [{"id": "a"}, {"id": "b", "devices": [{"id": "b1", "startAt": "30s"}, {"id": "b2", "network": {"splitProbability": 0.5}}]}]}
        """)
        let a = try #require(ScenarioEdits.startingDevice(v, user: "a", device: "a-phone", atSeconds: 12))
        #expect(ScenarioEdits.array(a, "users")[0]["devices"]?.arrayValue?[0]["startAt"]?.stringValue == "12s")
        #expect(ScenarioEdits.startingDevice(v, user: "b", device: "b1", atSeconds: 12) == nil)
        let n = ScenarioEdits.settingNetwork(v, "splitProbability", .int(0))
        #expect(n["network"]?["splitProbability"] == .int(0))
        #expect(ScenarioEdits.array(n, "users")[1]["devices"]?.arrayValue?[1]["network"]?["splitProbability"] == .int(0))
        #expect(ScenarioEdits.array(n, "users")[1]["devices"]?.arrayValue?[0]["network"] == nil)
        _ = try ScenarioText.scenario(n)
        _ = try ScenarioText.scenario(a)
    }
}
