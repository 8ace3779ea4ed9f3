import IMWorld
import Testing
@testable import IMReplay

/// Liveness is judged on what no-loss and storage still owe: quickstart-storage `--swarm` with
/// B15 at seed 28 (seed 5 until the re-pull of the cursor's millisecond recovered its loss) fails
/// liveness at the end only while those debts are tracked, which the suite
/// does whatever is enabled — so the shrinker can run liveness alone.
@Suite struct ShrinkLivenessTests {
    @Test func aLivenessFailureIsReCheckedWithTheOraclesItDependsOn() throws {
        let v = try ShrinkerPassesTests.scenario("quickstart-storage", bugs: ["B15"], swarm: true)
        let verdict = Shrinker.evaluate(v, seed: 28, oracle: "liveness", eventKind: nil, scenarioArgument: "quickstart-storage")
        guard case .fails(let violation, _, _) = verdict else {
            Issue.record("liveness not reproduced: \(verdict)")
            return
        }
        #expect(violation.oracle == "liveness")
        // With every switch off the same seed converges: the verdict is B15's.
        let off = try ShrinkerPassesTests.scenario("quickstart-storage", bugs: [], swarm: true)
        guard case .passes = Shrinker.evaluate(off, seed: 28, oracle: "liveness", eventKind: nil, scenarioArgument: "quickstart-storage") else {
            Issue.record("liveness fails with every switch off")
            return
        }
    }
}

/// The liveness phase ends when the world has converged, and what "converged" means includes what
/// no-loss, recall and storage still owe: those trackers run with every suite, so the run (its
/// length, events, digest) is the same whatever oracles are enabled, and a tracker that is not
/// enabled reports nothing.
@Suite struct ConvergenceIndependentOfOraclesTests {
    func run(_ enabled: [String]) throws -> ScenarioRun {
        let v = try ShrinkerPassesTests.scenario("quickstart-storage", bugs: ["B15"], swarm: true)
        var o = OracleOptions(scenarioArgument: "quickstart-storage")
        o.enabled = Set(enabled)
        o.stopAtFirstViolation = false
        let r = try ScenarioRun(scenario: try ScenarioText.scenario(v), seed: 28, oracles: o)
        r.run()
        return r
    }

    @Test func theRunIsTheSameWhateverOraclesAreEnabled() throws {
        let all = try run(OracleOptions.allNames)
        let liveness = try run(["liveness"])
        let order = try run(["order"])
        let a = all.report(), l = liveness.report(), o = order.report()
        #expect(a.digest == l.digest && a.digest == o.digest)
        #expect(a.events == l.events && a.events == o.events)
        #expect(a.simulatedNanoseconds == l.simulatedNanoseconds && a.simulatedNanoseconds == o.simulatedNanoseconds)
        // B15 loses a message for good: liveness fails alone as with every oracle.
        let allLiveness = all.violations.filter { $0.oracle == "liveness" }.map(\.detail)
        #expect(!allLiveness.isEmpty)
        #expect(liveness.violations.map(\.detail) == allLiveness)
        // The trackers running under `order` report nothing of their own.
        #expect(order.violations.allSatisfy { $0.oracle == "order" })
        #expect(all.violations.contains { $0.oracle == "no-loss" || $0.oracle == "storage" })
    }
}
