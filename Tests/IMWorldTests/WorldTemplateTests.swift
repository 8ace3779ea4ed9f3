import SimKernel
import Testing
@testable import IMWorld

/// A sweep worker builds the seed-independent set-up once (`WorldTemplate`) and runs many seeds
/// on it; each seed's verdict, digest, event count and ledger must equal a fresh single run's.
@Suite struct WorldTemplateTests {
    struct Outcome: Equatable {
        var result: SweepResult
        var ledger: Ledger
    }

    func run(_ s: Scenario, seed: UInt64, shared: WorldTemplate?) throws -> Outcome {
        let opts = OracleOptions(stopAtFirstViolation: true, scenarioArgument: s.name)
        let run = try ScenarioRun(scenario: s, seed: seed, oracles: opts, shared: shared)
        run.run(until: SimTime.zero + .seconds(150))
        var r = SweepResult(seed: seed, run: run, wallSeconds: 0)
        r.wallSeconds = 0
        return Outcome(result: r, ledger: run.ledger())
    }

    @Test(arguments: ["quickstart", "quickstart-storage"])
    func sharedSetUpGivesTheSameRunsAsFreshOnes(_ name: String) throws {
        let (s, _) = try Scenario.load(pathOrName: name)
        let shared = try WorldTemplate(scenario: s)
        // Several seeds on one template, as a worker runs them (a seed must not see the last one).
        let sweep = try (1...3).map { try run(s, seed: UInt64($0), shared: shared) }
        let fresh = try (1...3).map { try run(s, seed: UInt64($0), shared: nil) }
        #expect(sweep == fresh)
        #expect(Set(fresh.map(\.result.digest)).count == 3, "different seeds, different runs")
        #expect(fresh.allSatisfy { $0.result.events > 100 })
    }
}
