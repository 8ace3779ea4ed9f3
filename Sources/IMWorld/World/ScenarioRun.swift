import SimKernel

/// One run of a scenario with the oracles attached: what `imsim run`, sweeps, tests and the
/// library use. Wall-clock timing is the caller's business (the simulation never reads a clock).
public final class ScenarioRun {
    public let world: World
    public let suite: OracleSuite?
    public let statistics = RunStatistics()
    public let statuses = LedgerStatusRecorder()
    public private(set) var stopReason: StopReason?

    /// - Parameters:
    ///   - scenarioArgument: how the scenario was named on the command line (for repro lines).
    ///   - oracles: nil runs without oracles.
    ///   - shared: set-up shared by the seeds of a sweep (`WorldTemplate`); same run without it.
    public init(scenario: Scenario, seed: UInt64, scenarioArgument: String? = nil,
                oracles: OracleOptions? = nil, observers: [any WorldObserver] = [],
                shared: WorldTemplate?) throws(ScenarioError) {
        world = try World(scenario: scenario, seed: seed, shared: shared)
        world.addObserver(statistics)
        world.addObserver(statuses)
        if var o = oracles {
            if o.scenarioArgument.isEmpty { o.scenarioArgument = scenarioArgument ?? scenario.name }
            let s = OracleSuite(options: o)
            s.attach(to: world)
            suite = s
        } else {
            suite = nil
        }
        for o in observers { world.addObserver(o) }
    }

    public convenience init(scenario: Scenario, seed: UInt64, scenarioArgument: String? = nil,
                            oracles: OracleOptions? = nil, observers: [any WorldObserver] = []) throws(ScenarioError) {
        try self.init(scenario: scenario, seed: seed, scenarioArgument: scenarioArgument, oracles: oracles,
                      observers: observers, shared: nil)
    }

    /// Runs to the end of the liveness phase, `until`, or the first violation (if the oracles
    /// stop at the first one).
    @discardableResult
    public func run(until: SimTime? = nil) -> StopReason {
        let r = world.run(until: until)
        stopReason = r
        return r
    }

    public var violations: [Violation] { suite?.violations ?? [] }

    /// The user-visible outcome, per device (read off the stores now).
    public func ledger() -> Ledger { Ledger.capture(world, statuses: statuses) }

    public func report(wallSeconds: Double = 0) -> RunReport {
        RunReport(world: world, statistics: statistics, wallSeconds: wallSeconds,
                  stopReason: stopReason ?? .queueEmpty, violations: violations)
    }
}
