import Foundation
import IMClient
import IMWire
import IMWorld
import Testing
@testable import IMReplay

/// The sample captures of Traces/captures: each reproduces its bug with the recorded switch and
/// shows no violation with every switch off.
@Suite struct SampleCaptureTests {
    struct Sample: Sendable, CustomStringConvertible {
        var file: String
        var bug: BugSwitch
        var oracle: String
        var detail: String
        var description: String { file }
    }

    static let samples = [
        Sample(file: "dedup-b1", bug: .B1, oracle: "no-duplicate", detail: "stored twice"),
        Sample(file: "order-b4", bug: .B4, oracle: "order", detail: "server's dataTime"),
        Sample(file: "chatroom-drop-b6", bug: .B6, oracle: "chatroom", detail: "never rejoined chatroom lobby"),
    ]

    @Test(arguments: samples) func reproducedWithTheSwitchGoneWithout(_ s: Sample) throws {
        let path = tracePath("Traces/captures/\(s.file).jsonl")
        let recorded = try Replayer(path: path).run()
        #expect(recorded.recordedBugs == [s.bug.rawValue])
        #expect(recorded.divergence == nil, "the recorded build replays byte for byte")
        let v = try #require(recorded.violations.first)
        #expect(v.oracle == s.oracle)
        #expect(v.detail.contains(s.detail))
        #expect(recorded.exitCode == 1)

        let fixed = try Replayer(path: path, options: ReplayOptions(bugs: [])).run()
        #expect(fixed.violations.isEmpty, "\(fixed.violations.map(\.text))")
        #expect(fixed.divergenceExpected)
        #expect(fixed.exitCode == 0)

        // --bugs with the same switch is the recorded build again.
        let again = try Replayer(path: path, options: ReplayOptions(bugs: ClientBugs([s.bug]))).run()
        #expect(again.violations.first?.oracle == s.oracle)
        #expect(!again.divergenceExpected)
    }

    @Test(arguments: samples) func theScenarioNextToItFailsTheSameOracle(_ s: Sample) throws {
        let sc = try loadScenario("Traces/captures/\(s.file).scenario.json")
        let run = try ScenarioRun(scenario: sc, seed: 1, oracles: OracleOptions(scenarioArgument: s.file))
        run.run()
        #expect(run.violations.first?.oracle == s.oracle)
        #expect(run.violations.first?.device == "alice-phone")
    }
}
