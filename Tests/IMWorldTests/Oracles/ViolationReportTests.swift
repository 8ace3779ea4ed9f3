import Foundation
import IMClient
import IMServer
import IMStore
import IMWire
import SimKernel
import Testing
@testable import IMWorld

/// The report: its text, the repro line (and that it reproduces), stop at the first violation
/// versus continue, and which oracles run.
@Suite struct ViolationReportTests {
    func b1(seed: UInt64 = 1) throws -> Scenario {
        try duo("report-b1", client: bugs(["B1"]), server: #"{"pullPageSize": 1}"#, alice: #""autoConnect": false"#, script: """
            {"at": "2s", "device": "bob-phone", "action": "send", "to": "private:alice", "text": "backlog", "count": 4, "interval": "250ms"},
            {"at": "10s", "device": "alice-phone", "action": "connect"},
            {"at": "10.2s", "device": "bob-phone", "action": "send", "to": "private:alice", "text": "during the pull"}
            """)
    }

    @Test func textNamesEverything() throws {
        let (run, _) = try runOracles(b1(), enabled: withoutDeliveryOrder)
        let v = try onlyViolation(run)
        let lines = v.text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines[0] == "✘ no-duplicate at event \(v.eventIndex) (t=\(v.time)) device alice-phone conversation private:bob message \(v.messageUId!)")
        #expect(lines[1] == "  " + v.detail)
        #expect(lines[2] == "  path:")
        #expect(Array(lines[3..<(3 + v.path.count)]) == v.path.map { "    " + $0 })
        #expect(lines.last == "  repro: " + v.repro)
        #expect(v.repro.hasPrefix("imsim run report-b1 --seed 1 --until "))
        // Every path line starts with its simulated time.
        #expect(v.path.allSatisfy { $0.hasPrefix("t=") })
    }

    @Test func stopAtFirstViolationEndsTheRunAtThatEvent() throws {
        let (run, tap) = try runOracles(b1(), enabled: withoutDeliveryOrder)
        let v = try onlyViolation(run)
        #expect(tap.index == v.eventIndex)          // nothing dispatched after the violating event
        #expect(run.world.now.nanoseconds == v.timeNanoseconds)
        #expect(run.world.phase == .active)
    }

    /// One event can break two checks: the B1 duplicate is stored twice and notified twice, both
    /// reported at the same event before the run stops.
    @Test func oneEventCanBreakTwoChecks() throws {
        let (run, _) = try runOracles(b1(), enabled: withoutDeliveryOrder)
        let v = try onlyViolation(run)
        #expect(run.violations.count == 2)
        #expect(run.violations.map(\.oracle) == ["no-duplicate", "no-duplicate"])
        #expect(run.violations.allSatisfy { $0.messageUId == v.messageUId && $0.timeNanoseconds == v.timeNanoseconds })
        #expect(run.violations.last?.detail.contains("notified to the app twice") == true)
    }

    /// B4 (alice's clock 10 s ahead, device time kept): stopping, the run ends at alice's PUBACK;
    /// continuing, it runs to the end and the end-of-run order check reports again.
    func b4() throws -> Scenario {
        try duo("report-b4", client: bugs(["B4"]), alice: #""startAt": "0s", "clockOffset": "10s""#, script: """
            {"at": "5s", "device": "alice-phone", "action": "send", "to": "private:bob", "text": "hello"},
            {"at": "6s", "device": "bob-phone", "action": "send", "to": "private:alice", "text": "hi alice"}
            """)
    }

    @Test func continueReportsLaterViolationsInEventOrder() throws {
        let (stopped, _) = try runOracles(b4())
        let first = try onlyViolation(stopped)
        #expect(stopped.world.phase == .active)
        #expect(stopped.violations.count == 1)

        let (run, tap) = try runOracles(b4(), stop: false)
        #expect(run.world.phase == .finished)
        #expect(run.world.convergedAt != nil)
        // alice's PUBACK; bob's own message too (B4 keeps his device time: 50 ms before the
        // server's); and the end-of-run history check on alice.
        #expect(run.violations.count == 3, "\(run.violations.map(\.text))")
        #expect(run.violations.first == first)       // the same first report either way
        #expect(run.violations.map(\.device) == ["alice-phone", "bob-phone", "alice-phone"])
        #expect(zip(run.violations, run.violations.dropFirst()).allSatisfy { $0.eventIndex < $1.eventIndex })
        let last = try #require(run.violations.last)
        #expect(last.oracle == "order" && last.detail.contains("against server order"))
        #expect(last.eventIndex == tap.events.last?.index)
        #expect(first.eventIndex < last.eventIndex && first.timeNanoseconds < last.timeNanoseconds)
    }

    /// `--until` from the repro line, parsed back, re-runs to the same violation.
    @Test func reproLineReproduces() throws {
        let (run, _) = try runOracles(b1(), enabled: withoutDeliveryOrder)
        let v = try onlyViolation(run)
        let parts = v.repro.split(separator: " ").map(String.init)
        #expect(parts.count == 7 && parts[0] == "imsim" && parts[1] == "run" && parts[3] == "--seed" && parts[5] == "--until")
        #expect(parts[2] == "report-b1" && parts[4] == "1")
        let until = SimTime.zero + (try SimDuration(parsing: parts[6]))
        #expect(until.nanoseconds >= v.timeNanoseconds && until.nanoseconds - v.timeNanoseconds < 1_000_000)
        // Without stopping, only up to `until`: the violation is there, and it is the last one.
        let (again, _) = try runOracles(b1(), stop: false, enabled: withoutDeliveryOrder, until: until)
        #expect(again.violations.first == v)
        #expect(again.world.now <= until)
    }

    @Test func reproNamesTheScenarioArgumentAndSeed() throws {
        let tap = IndexedTap()
        let run = try ScenarioRun(scenario: b1(), seed: 42, oracles: OracleOptions(scenarioArgument: "Traces/bugs/x.json"), observers: [tap])
        run.run()
        let v = try onlyViolation(run)
        #expect(v.repro == reproLine("Traces/bugs/x.json", seed: 42, at: SimTime(nanoseconds: v.timeNanoseconds)))
    }

    @Test func disabledOracleDoesNotReport() throws {
        var names = Set(OracleOptions.allNames)
        names.remove("no-duplicate")
        let (run, _) = try runOracles(b1(), enabled: names)
        #expect(!run.violations.contains { $0.oracle == "no-duplicate" })
        #expect(run.suite?.oracles.map(\.name) == OracleOptions.allNames.filter { $0 != "no-duplicate" })
    }

    /// Violations are Codable (run reports, sweeps): a round trip keeps every field.
    @Test func violationRoundTripsThroughJSON() throws {
        let (run, _) = try runOracles(b1(), enabled: withoutDeliveryOrder)
        let v = try onlyViolation(run)
        let back = try JSONDecoder().decode(Violation.self, from: JSONEncoder().encode(v))
        #expect(back == v)
    }
}
