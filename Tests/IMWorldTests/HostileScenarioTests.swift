import Foundation
import IMSimTestSupport
import SimKernel
import Testing
import IMWire
@testable import IMWorld

/// Issue 23, items 1–4: hostile scenario values get a typed error naming the field, never a trap,
/// a silently wrong run or an unbounded world.
@Suite struct HostileScenarioTests {
    static let base = #""name": "t", "duration": "1m", "users": [{"id": "a"}, {"id": "b"}]"#

    func errorPath(_ json: String) -> String? {
        do {
            _ = try Scenario.load(json: Data(json.utf8))
            return nil
        } catch {
            return error.path
        }
    }

    // MARK: Item 1 — user-given times never trap

    @Test(arguments: [
        (#"{"# + base + #", "epochMs": 9223372036854775000}"#, "$.epochMs"),
        (#"{"# + base + #", "network": {"latency": {"fixed": "1000000h"}}}"#, "$.network.latency.fixed"),
        (#"{"# + base + #", "network": {"uplink": {"logNormal": {"median": "2562047h", "sigma": 0.5}}}}"#,
         "$.network.uplink.logNormal.median"),
        (#"{"# + base + #", "network": {"latency": {"logNormal": {"median": "40ms", "sigma": 0.5, "max": "2562047h"}}}}"#,
         "$.network.latency.logNormal.max"),
        (#"{"name": "t", "duration": "1m", "users": [{"id": "a", "devices": [{"id": "d", "network": {"latency": {"uniform": ["1ms", "900000h"]}}}]}]}"#,
         "$.users[0].devices[0].network.latency.uniform[1]"),
        (#"{"# + base + #", "script": [{"at": "1s", "device": "a-phone", "action": "clockStep", "by": "-2562047h"}]}"#,
         "$.script[0].by"),
        (#"{"# + base + #", "liveness": {"deadline": "2000000h"}}"#, "$.liveness.deadline"),
    ])
    func hostileTimesNameTheField(json: String, path: String) {
        #expect(errorPath(json) == path)
    }

    @Test func deviceClockSaturatesInsteadOfTrapping() {
        var clock = DeviceClock(epochMs: Int64.max - 5, offsetMs: 0, driftPpm: 99_999)
        #expect(clock.wallMs(at: SimTime.zero + .hours(1)) == Int64.max)
        clock.step(byMs: Int64.max)
        clock.step(byMs: Int64.max)
        #expect(clock.offsetMs == Int64.max)
        #expect(ServerClock(epochMs: Int64.max).ms(at: SimTime.zero + .hours(1)) == Int64.max)
    }

    @Test func aLatencyPastTheEndOfTimeSaturatesInARun() throws {
        // Built in code (no parser between): the world must still not trap in Simulator.schedule.
        var s = Scenario(name: "far", duration: .seconds(30), users: [UserSpec(id: "a"), UserSpec(id: "b")])
        s.network.uplink = .fixed(.hours(2_562_047))
        s.network.downlink = .logNormal(median: .hours(2_562_047), sigmaMilli: 3000, max: .hours(2_562_047))
        s.script = [ScriptStep(at: .seconds(5), device: "a-phone",
                               action: .send(SendSpec(to: ConversationKey(.privateChat, "b"), objectName: "RC:TxtMsg",
                                                      text: "hi", content: nil, count: 1, interval: .zero, mentionAll: false)))]
        let run = try ScenarioRun(scenario: s, seed: 1)
        let reason = run.run(until: SimTime.zero + .minutes(2))
        #expect(reason == .reachedTime(SimTime.zero + .minutes(2)))
    }

    // MARK: Item 2 — server time stays inside what the wire carries

    @Test func epochAtOrAbove2To42IsRefused() {
        #expect(errorPath(#"{"# + Self.base + #", "epochMs": 4398046511104}"#) == "$.epochMs")
        #expect(errorPath(#"{"# + Self.base + #", "epochMs": -1}"#) == "$.epochMs")
        // The last epoch whose run still fits: duration 1m + the default 3m deadline.
        let last = ScenarioLimits.maxServerMs - 4 * 60_000
        #expect(errorPath(#"{"# + Self.base + #", "epochMs": \#(last)}"#) == nil)
        #expect(errorPath(#"{"# + Self.base + #", "epochMs": \#(last + 1)}"#) == "$.epochMs")
    }

    @Test func aRunAtTheLastAcceptedEpochHasTrueSentTimes() throws {
        let last = ScenarioLimits.maxServerMs - 4 * 60_000
        let s = try scenario(#"{"# + Self.base + #", "epochMs": \#(last), "script": ["#
            + #"{"at": "5s", "device": "a-phone", "action": "send", "to": "private:b", "text": "x", "count": 5, "interval": "1s"}]}"#)
        let (run, tap) = try runWithTap(s)
        #expect(run.violations.isEmpty)
        #expect(tap.accepted.count == 5)
        #expect(tap.accepted.allSatisfy { $0.dataTime >= last && $0.dataTime <= ScenarioLimits.maxServerMs })
    }

    // MARK: Item 3 — bounded worlds

    @Test(arguments: [
        (#"{"name": "t", "duration": "1m", "population": {"users": 1000, "groups": 1000000000}}"#, "$.population.groups"),
        (#"{"name": "t", "duration": "1m", "population": {"users": 1000, "groups": 10, "groupSize": 1000000}}"#, "$.population.groupSize"),
        (#"{"name": "t", "duration": "1m", "population": {"users": 1000, "chatrooms": 1000000}}"#, "$.population.chatrooms"),
    ])
    func countsHaveLimits(json: String, path: String) {
        #expect(errorPath(json) == path)
    }

    @Test func aMillionUsersIsRefusedByCount() {
        var users: [String] = []
        for i in 0..<100_001 { users.append(#"{"id": "u\#(i)"}"#) }
        let json = #"{"name": "t", "duration": "1m", "users": ["# + users.joined(separator: ",") + "]}"
        #expect(errorPath(json) == "$.users")
    }

    @Test func memoryEstimateGrowsWithTheWorld() throws {
        let (small, _) = try Scenario.load(pathOrName: "mixed-1k")
        let big = try scenario(#"{"name": "t", "duration": "1h", "population": {"users": 100000, "groups": 100000, "groupSize": 3000}}"#)
        #expect(small.memoryEstimate.bytes < 2 << 30)
        #expect(big.memoryEstimate.bytes > 64 << 30)
        #expect(big.memoryEstimate.memberships == 300_000_000)
    }

    @Test func cliRefusesARunThatDoesNotFit() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("imsim-hostile-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("huge.json")
        try Data(#"{"name": "huge", "duration": "1h", "population": {"users": 100000, "groups": 100000, "groupSize": 3000}}"#.utf8)
            .write(to: file)
        let r = try ImsimBinary.runWithError(["run", file.path])
        #expect(r.status == 2)
        #expect(r.err.contains("refusing"))
        #expect(r.err.contains("--force"))
    }

    // MARK: Item 4 — as strict as the docs say

    @Test(arguments: [
        (#"{"# + base + #",}"#, "$"),
        (#"{"# + base + #", "groups": [{"id": "g", "members": ["a", "b",]}]}"#, "$.groups[0].members"),
        (#"{"# + base + #", "duration": "2m"}"#, "$.duration"),
        (#"{"# + base + #", "chatrooms": [{"id": "r", "members": ["a"], "joinCount": 51}]}"#, "$.chatrooms[0].joinCount"),
        (#"{"# + base + #", "server": {"rateLimitPerSecond": -1}}"#, "$.server.rateLimitPerSecond"),
        (#"{"name": "t", "duration": "1m", "population": {"users": 10, "secondDeviceFraction": 2}}"#, "$.population.secondDeviceFraction"),
        (#"{"name": "t", "duration": "1m", "population": {"users": 10, "platforms": {"mobile": 0, "web": 0}}}"#, "$.population.platforms"),
        (#"{"name": "t", "duration": "1m", "population": {"users": 10, "idPrefix": "../../"}}"#, "$.population.idPrefix"),
        (#"{"# + base + #", "client": {"heartbeatInterval": "0s"}}"#, "$.client.heartbeatInterval"),
        (#"{"# + base + #", "seed": 1.5}"#, "$.seed"),
        (#"{"# + base + #", "seed": -1}"#, "$.seed"),
        (#"{"# + base + #", "seed": 18446744073709551616}"#, "$.seed"),
        (#"{"# + base + #", "network": {"latncy": {"fixed": "1ms"}}}"#, "$.network.latncy"),
        (#"{"# + base + #", "network": {"latency": {"logNormal": {"median": "1ms", "sigma": 1, "mx": "1s"}}}}"#,
         "$.network.latency.logNormal.mx"),
        (#"{"# + base + #", "workload": {"privateRate": "1000000/s"}}"#, "$.workload.privateRate"),
    ])
    func strictParsing(json: String, path: String) {
        #expect(errorPath(json) == path)
    }

    @Test func duplicateKeyNamesBothLines() throws {
        do {
            _ = try Scenario.load(json: Data("{\"name\": \"t\",\n \"duration\": \"1m\",\n \"users\": [{\"id\": \"a\"}],\n \"duration\": \"2m\"}".utf8))
            Issue.record("accepted a duplicate key")
        } catch {
            #expect(error.path == "$.duration")
            #expect(error.line == 4)
            #expect(error.message.contains("line 2"))
        }
    }

    @Test func theLargestSeedIsAccepted() throws {
        let s = try scenario(#"{"# + Self.base + #", "seed": 18446744073709551615}"#)
        #expect(s.seed == UInt64.max)
    }

    @Test func deepNestingIsRefusedNotRecursed() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(errorPath(#"{"# + Self.base + #", "description": \#(deep)}"#) != nil)
    }

    @Test func builtInScenariosStayWithinTheLimits() throws {
        for name in Scenario.builtInNames() {
            _ = try Scenario.load(pathOrName: name)
        }
    }

    @Test func docsLimitsTableMatchesTheDeclaredLimits() throws {
        let src = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let doc = try String(contentsOf: src.appendingPathComponent("Docs/scenario-format.md"), encoding: .utf8)
        #expect(doc.contains(ScenarioLimits.markdownTable()))
    }
}

extension ImsimBinary {
    static func runWithError(_ args: [String]) throws -> (status: Int32, out: String, err: String) {
        let r = try run(args)
        return (r.status, r.out, r.err)
    }
}
