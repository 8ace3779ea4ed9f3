import IMWorld
import Testing
@testable import IMReplay

/// Liveness is judged on what the other oracles still owe, so a liveness failure must be
/// re-checked with them: quickstart-storage `--swarm` with B15 at seed 5 fails liveness (with
/// storage, at the end) only while the storage and no-loss obligations are there.
@Suite struct ShrinkLivenessTests {
    @Test func aLivenessFailureIsReCheckedWithTheOraclesItDependsOn() throws {
        let v = try ShrinkerPassesTests.scenario("quickstart-storage", bugs: ["B15"], swarm: true)
        let verdict = Shrinker.evaluate(v, seed: 5, oracle: "liveness", eventKind: nil, scenarioArgument: "quickstart-storage")
        guard case .fails(let violation, _, _) = verdict else {
            Issue.record("liveness not reproduced: \(verdict)")
            return
        }
        #expect(violation.oracle == "liveness")
        // With every switch off the same seed converges: the verdict is B15's.
        let off = try ShrinkerPassesTests.scenario("quickstart-storage", bugs: [], swarm: true)
        guard case .passes = Shrinker.evaluate(off, seed: 5, oracle: "liveness", eventKind: nil, scenarioArgument: "quickstart-storage") else {
            Issue.record("liveness fails with every switch off")
            return
        }
    }
}
