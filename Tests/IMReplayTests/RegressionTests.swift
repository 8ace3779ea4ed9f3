import Foundation
import IMWire
import IMWorld
import Testing

/// The regression test of Docs/guide-reproduce-a-bug.md: the shrunk scenario of the B1 capture
/// (`Traces/bugs/dedup-b1.json`) fails `no-duplicate` with the bug switch on and is clean with it
/// off. When the bug is fixed for real, the "on" half is deleted and the scenario stays as a
/// guard.
@Suite struct RegressionTests {
    static func run(bugs: [BugSwitch]) throws -> [Violation] {
        var scenario = try Scenario.load(json: Data(contentsOf: URL(fileURLWithPath: tracePath("Traces/bugs/dedup-b1.json"))))
        scenario.client.bugs = bugs
        let run = try ScenarioRun(scenario: scenario, seed: 1, oracles: OracleOptions(scenarioArgument: "Traces/bugs/dedup-b1.json"))
        run.run()
        return run.violations
    }

    @Test func dedupB1StaysFixed() throws {
        #expect(try Self.run(bugs: []).isEmpty)
    }

    @Test func dedupB1IsReproducedWithTheSwitchOn() throws {
        let v = try #require(try Self.run(bugs: [.B1]).first)
        #expect(v.oracle == "no-duplicate")
        #expect(v.device == "alice-phone")
    }
}
