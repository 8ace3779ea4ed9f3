import Foundation
import IMClient
import IMStore
import IMWire
import IMWorld
import SimKernel
import Testing
@testable import IMReplay

/// `imsim run` (the world's oracles) and `imsim replay` (ReplayChecks) apply the same
/// device-local rules: a run the oracles call clean replays clean, and a violation the oracles
/// report is reported by the replay too.
@Suite struct ReplayChecksAgreementTests {
    /// alice joins hall on connect; bob sets an attribute; alice's connection is reset at 20 s
    /// (rejoin with joinChrmR); `client` is the scenario's client object, `script` steps between 20 s
    /// and 75 s (each starting with a comma).
    static func roomScenario(client: String = "{}", script: String = "") throws -> Scenario {
        try Scenario.load(json: Data("""
        {"name": "replay-room", "duration": "90s",
         "users": [{"id": "alice", "devices": [{"id": "alice-phone", "startAt": "0s"}]},
                   {"id": "bob", "devices": [{"id": "bob-phone", "startAt": "0s"}]}],
         "network": {"latency": {"fixed": "50ms"}, "connectSetup": {"fixed": "10ms"}, "splitProbability": 0,
                     "bandwidthBytesPerSecond": null},
         "client": \(client), "server": {},
         "chatrooms": [{"id": "hall", "members": ["alice", "bob"], "joinCount": 10}],
         "script": [
           {"at": "2s", "device": "bob-phone", "action": "setKV", "room": "hall", "key": "topic", "value": "launch day"},
           {"at": "20s", "device": "alice-phone", "action": "reset"}\(script),
           {"at": "75s", "device": "alice-phone", "action": "getKV", "room": "hall"}
         ],
         "liveness": {"deadline": "10s"}}
        """.utf8))
    }

    /// A rejoin after a reconnect does not owe a new post-join sync when the room's attributes
    /// were synced already (the cache stays valid across a reconnect; im-semantics §6 asks the
    /// sync after a *join*). The replay used to owe it at every rejoin and reported "attributes
    /// still not synced" 40 s later (quickstart alice-phone at +238.9 s) while the run was clean.
    @Test func rejoinOfASyncedRoomIsCleanInRunAndReplay() throws {
        let (captures, run) = try recordRun(Self.roomScenario(), devices: ["alice-phone"], oracles: true)
        #expect(run.violations.isEmpty, "\(run.violations.map(\.detail))")
        let capture = try #require(captures["alice-phone"])
        let text = String(decoding: capture, as: UTF8.self)
        #expect(text.contains("joinChrmR"), "the premise: alice rejoined")
        let report = try replay(capture)
        #expect(report.divergence == nil)
        #expect(report.violations.isEmpty, "\(report.violations.map(\.text))")
    }

    /// B8 (a second join never pulls the attributes): both sides report it.
    @Test func b8IsReportedByRunAndReplay() throws {
        let s = try Self.roomScenario(client: #"{"bugs": ["B8"]}"#, script: """
            ,
            {"at": "30s", "device": "alice-phone", "action": "join", "room": "hall", "count": 10}
            """)
        let (captures, run) = try recordRun(s, devices: ["alice-phone"], oracles: true)
        let fromRun = try #require(run.violations.first { $0.oracle == "chatroom" })
        #expect(fromRun.detail.contains("attributes still not synced") || fromRun.detail.contains("34004"), "\(fromRun.detail)")
        let report = try replay(try #require(captures["alice-phone"]))
        let fromReplay = try #require(report.violations.first { $0.oracle == "chatroom" })
        #expect(fromReplay.detail.contains("attributes still not synced") || fromReplay.detail.contains("34004"), "\(fromReplay.text)")
    }

    /// The issue's case: quickstart's alice-phone, whole run — the oracles and the replay agree.
    @Test func quickstartAlicePhoneAgrees() throws {
        let (sc, _) = try Scenario.load(pathOrName: tracePath("Traces/scenarios/quickstart.json"))
        let (captures, run) = try recordRun(sc, devices: ["alice-phone"], oracles: true)
        #expect(run.violations.isEmpty, "\(run.violations.map(\.detail))")
        let report = try replay(try #require(captures["alice-phone"]))
        #expect(report.violations.isEmpty, "\(report.violations.map(\.text))")
    }

    /// B11 (the backoff not restarted by a network change): the run and the replay judge the
    /// attempt times with the same ReconnectRule, from the link — both report that no connection
    /// was opened at once after the change. Clean twin: the same world without B11.
    static func outage(bugs: [String]) throws -> Scenario {
        try Scenario.load(json: Data("""
        {"name": "replay-b11", "duration": "2m",
         "users": [{"id": "alice", "devices": [{"id": "alice-phone", "startAt": "0s"}]}],
         "network": {"latency": {"fixed": "50ms"}, "connectSetup": {"fixed": "10ms"}, "splitProbability": 0},
         "client": {"bugs": [\(bugs.map { "\"\($0)\"" }.joined(separator: ","))]},
         "script": [
           {"at": "5s", "device": "alice-phone", "action": "reset"},
           {"at": "5s", "device": "alice-phone", "action": "partition", "for": "70s"},
           {"at": "60s", "device": "alice-phone", "action": "network", "state": "cellular"}],
         "liveness": {"deadline": "1m"}}
        """.utf8))
    }

    @Test func b11IsReportedByRunAndReplay() throws {
        let (captures, run) = try recordRun(Self.outage(bugs: ["B11"]), devices: ["alice-phone"], oracles: true)
        let fromRun = try #require(run.violations.first { $0.oracle == "reconnect" })
        #expect(fromRun.detail.contains("the network changed") && fromRun.detail.contains("should restart from 0"), "\(fromRun.detail)")
        let report = try replay(try #require(captures["alice-phone"]))
        #expect(report.divergence == nil)
        let fromReplay = try #require(report.violations.first { $0.oracle == "reconnect" }, "\(report.violations.map(\.text))")
        #expect(fromReplay.detail.contains("the network changed") && fromReplay.detail.contains("should restart from 0"), "\(fromReplay.text)")
        // The same instant on both sides (the world's clock vs the capture's, from its start).
        #expect(fromRun.detail.contains("the network changed at 60.000s"), "\(fromRun.detail)")
        #expect(fromReplay.detail.contains("the network changed at +60.000s"), "\(fromReplay.text)")
    }

    @Test func outageWithoutB11IsCleanInRunAndReplay() throws {
        let (captures, run) = try recordRun(Self.outage(bugs: []), devices: ["alice-phone"], oracles: true)
        #expect(run.violations.isEmpty, "\(run.violations.map(\.detail))")
        let report = try replay(try #require(captures["alice-phone"]))
        #expect(report.violations.isEmpty, "\(report.violations.map(\.text))")
    }
}
