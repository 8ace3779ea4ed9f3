import Foundation
import SimKernel
import Testing
import IMWire
@testable import IMWorld

@Suite struct ScenarioParsingTests {
    func parse(_ json: String) throws(ScenarioError) -> Scenario {
        try Scenario.load(json: Data(json.utf8))
    }

    func error(_ json: String) -> ScenarioError? {
        do {
            _ = try parse(json)
            return nil
        } catch {
            return error
        }
    }

    @Test func minimalScenarioGetsDefaults() throws {
        let s = try parse(#"{"name": "t", "duration": "1m", "users": [{"id": "alice"}]}"#)
        #expect(s.users[0].devices.map(\.id) == ["alice-phone"])
        #expect(s.users[0].devices[0].platform == .mobile)
        #expect(s.duration.duration == .minutes(1))
        #expect(s.server.offlineRetentionDays == 7)
        #expect(s.server.chatroom.quotaCapacity == 40)
        #expect(s.server.chatroom.quotaReservedHigh == 20)
        #expect(s.client.heartbeatInterval.duration == .seconds(30))
        #expect(s.client.pingTimeout.duration == .seconds(6))
        #expect(!s.swarm)
    }

    @Test func builtInQuickstartParses() throws {
        let (s, path) = try Scenario.load(pathOrName: "quickstart")
        #expect(path.hasSuffix("Traces/scenarios/quickstart.json"))
        #expect(s.name == "quickstart")
        #expect(s.duration.duration == .minutes(10))
        #expect(s.users.count == 4)
        #expect(s.faults?.enabledKinds == [.reset, .partition, .latencySpike])
        #expect(s.users[1].devices[0].clockOffsetMs == 45_000)
    }

    @Test(arguments: [
        (#"{"name": "t", "duration": "1m", "users": [{"id": "a", "devices": [{"id": "d", "platform": "fridge"}]}]}"#,
         "$.users[0].devices[0].platform"),
        (#"{"name": "t", "duration": "1 minute", "users": [{"id": "a"}]}"#, "$.duration"),
        (#"{"name": "t", "duraton": "1m", "users": [{"id": "a"}]}"#, "$.duraton"),
        (#"{"name": "t", "duration": "1m"}"#, "$.users"),
        (#"{"duration": "1m", "users": [{"id": "a"}]}"#, "$"),
        (#"{"name": "t", "duration": "1m", "users": [{"id": "a"}, {"id": "a"}]}"#, "$.users[1].id"),
        (#"{"name": "t", "duration": "1m", "users": [{"id": "a"}], "groups": [{"id": "g", "members": ["a", "zed"]}]}"#,
         "$.groups[0].members[1]"),
        (#"{"name": "t", "duration": "1m", "users": [{"id": "a"}], "script": [{"at": "1s", "device": "a-phone", "action": "fly"}]}"#,
         "$.script[0].action"),
        (#"{"name": "t", "duration": "1m", "users": [{"id": "a"}], "script": [{"at": "1s", "action": "send", "to": "private:a", "text": "x"}]}"#,
         "$.script[0].device"),
        (#"{"name": "t", "duration": "1m", "users": [{"id": "a"}], "script": [{"at": "1s", "device": "a-phone", "action": "send", "to": "dm:a", "text": "x"}]}"#,
         "$.script[0].to"),
        (#"{"name": "t", "duration": "1m", "users": [{"id": "a"}], "script": [{"at": "5s", "device": "a-phone", "action": "kill"}, {"at": "1s", "device": "a-phone", "action": "restart"}]}"#,
         "$.script[1].at"),
        (#"{"name": "t", "duration": "1m", "users": [{"id": "a"}], "server": {"chatroom": {"quotaReservedHigh": 50}}}"#,
         "$.server.chatroom.quotaReservedHigh"),
        (#"{"name": "t", "duration": "1m", "users": [{"id": "a"}], "client": {"bugs": ["B2"]}}"#, "$.client.bugs[0]"),
        (#"{"name": "t", "duration": "1m", "users": [{"id": "a"}], "client": {"bugs": ["B99"]}}"#, "$.client.bugs[0]"),
        (#"{"name": "t", "duration": "1m", "users": [{"id": "a"}], "faults": {"random": {"meteor": {"rate": "1/h"}}}}"#,
         "$.faults.random.meteor"),
        (#"{"name": "t", "duration": "1m", "users": [{"id": "a"}], "faults": {"random": {"reset": {"rate": "often"}}}}"#,
         "$.faults.random.reset.rate"),
        (#"{"name": "t", "duration": "1m", "users": [{"id": "a"}], "network": {"latency": {"fixed": "10ms", "uniform": ["1ms", "2ms"]}}}"#,
         "$.network.latency"),
        (#"{"name": "t", "duration": "1m", "users": [{"id": "a b"}]}"#, "$.users[0].id"),
    ] as [(String, String)])
    func errorsNameTheJSONPath(json: String, path: String) {
        let e = error(json)
        #expect(e?.path == path, "got \(String(describing: e))")
    }

    @Test func unknownKeySuggestsTheClosestOne() {
        let e = error(#"{"name": "t", "duraton": "1m", "users": [{"id": "a"}]}"#)
        #expect(e?.message.contains("did you mean \"duration\"") == true)
    }

    @Test func syntaxErrorsNameTheLine() {
        let e = error("{\n\"name\": \"t\",\n\"duration\": \"1m\",,\n}")
        #expect(e?.path == "$")
        #expect(e?.line == 3 || e?.line == 4, "\(String(describing: e))")
    }

    @Test func ratesParseExactly() throws {
        #expect(try RateValue(parsing: "10/min").meanInterval == .seconds(6))
        #expect(try RateValue(parsing: "1/s").meanInterval == .seconds(1))
        #expect(try RateValue(parsing: "0.5/h").meanInterval == .hours(2))
        #expect(try RateValue(parsing: "3/10m").meanInterval == .seconds(200))
        #expect(try RateValue(parsing: "0/s").meanInterval == nil)
        #expect(try RateValue(parsing: "2/min").description == "2/1m")
        #expect(throws: RateParseError.self) { try RateValue(parsing: "fast") }
        #expect(throws: RateParseError.self) { try RateValue(parsing: "1/0s") }
        #expect(throws: RateParseError.self) { try RateValue(parsing: "-1/s") }
    }

    @Test func scenarioRoundTripsThroughJSON() throws {
        let (s, _) = try Scenario.load(pathOrName: "quickstart")
        let enc = JSONEncoder()
        enc.outputFormatting = [.sortedKeys]
        let again = try Scenario.load(json: try enc.encode(s))
        #expect(again == s)
        #expect(again.digest == s.digest)
    }

    @Test func unknownBuiltInListsTheKnownOnes() {
        do {
            _ = try Scenario.load(pathOrName: "no-such-scenario")
            Issue.record("should fail")
        } catch {
            #expect(error.message.contains("quickstart"))
        }
    }
}
