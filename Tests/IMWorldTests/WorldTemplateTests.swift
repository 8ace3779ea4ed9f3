import IMStore
import IMWire
import SimKernel
import Testing
@testable import IMWorld

/// A sweep worker builds the seed-independent set-up once (`WorldTemplate`) and runs many seeds
/// on it (the in-memory device stores recycled from seed to seed); each seed's verdict, digest,
/// event count and ledger must equal a fresh single run's.
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
        let outcome = Outcome(result: r, ledger: run.ledger())
        // As the worker does: the next seed's devices take these stores' connections.
        shared?.recycleStores(of: run.world)
        return outcome
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

    /// The recycled stores are the last seed's connections, emptied (the first seed stopped
    /// mid-run); a world's stores are retired when handed back.
    @Test func recycledStoresAreEmptiedAndReused() throws {
        let (s, _) = try Scenario.load(pathOrName: "quickstart")
        let shared = try WorldTemplate(scenario: s)
        let first = try ScenarioRun(scenario: s, seed: 1, oracles: OracleOptions(scenarioArgument: s.name), shared: shared)
        first.run(until: SimTime.zero + .seconds(90))
        let connections = (0..<first.world.deviceCount).map { ObjectIdentifier(first.world.store(ofDevice: $0).connection) }
        shared.recycleStores(of: first.world)
        #expect((0..<first.world.deviceCount).allSatisfy { !first.world.store(ofDevice: $0).isOpen })
        let second = try ScenarioRun(scenario: s, seed: 2, oracles: OracleOptions(scenarioArgument: s.name), shared: shared)
        #expect((0..<second.world.deviceCount).map { ObjectIdentifier(second.world.store(ofDevice: $0).connection) } == connections)
        #expect(try (0..<second.world.deviceCount).allSatisfy { try second.world.store(ofDevice: $0).snapshot(of: ConversationKey(.group, "family")).isEmpty })
        second.run(until: SimTime.zero + .seconds(150))
        shared.recycleStores(of: second.world)
        // A third seed on the twice-recycled connections: the same run as a fresh one.
        let third = try run(s, seed: 2, shared: shared)
        #expect(third == (try run(s, seed: 2, shared: nil)))
    }
}
