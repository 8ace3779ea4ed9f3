// The library entry points for a user's own test suite: run a scenario for one seed or a range of
// seeds and get back what the oracles said (verdicts) and what each device's user saw (ledger).
// Docs/property-testing.md shows a complete Swift Testing suite built on them.
//
// Everything here is deterministic: a run is a pure function of (scenario, seed, build), runs on
// the calling thread only, and reads no clock. A sweep runs its seeds one after another; tests that
// want parallelism get it from Swift Testing running test functions concurrently (each run owns its
// world) or from `imsim sweep --jobs N`, which uses processes.

/// How a library run is set up. The defaults are what `imsim sweep` does: every oracle on,
/// stop at the first violation.
public struct SimulationOptions: Sendable {
    /// The oracles to run (`OracleOptions.allNames` by default; an empty set runs none).
    public var oracles: Set<String>
    /// Stop the run at the first violation (its repro line then ends exactly there). When false
    /// the run goes on and `RunOutcome.violations` lists every violation.
    public var stopAtFirstViolation: Bool
    /// How the repro line names the scenario: a built-in name (`quickstart`) or a file path.
    /// Default: the scenario's `name`, which is right for the built-in scenarios.
    public var scenarioArgument: String?
    /// Read the ledger off the device stores after the run (default on; a 1,000-device ledger
    /// costs a few milliseconds per device to read, so very large sweeps may turn it off).
    public var captureLedger: Bool

    public init(oracles: Set<String> = Set(OracleOptions.allNames), stopAtFirstViolation: Bool = true,
                scenarioArgument: String? = nil, captureLedger: Bool = true) {
        self.oracles = oracles
        self.stopAtFirstViolation = stopAtFirstViolation
        self.scenarioArgument = scenarioArgument
        self.captureLedger = captureLedger
    }
}

/// The outcome of one seed: the verdicts, the ledger and the run's figures.
public struct RunOutcome: Sendable {
    public var scenario: String
    public var seed: UInt64
    /// The simulated-time limit the run was given (nil: the whole scenario, liveness included).
    public var until: SimDuration?
    /// Every violation the oracles reported, in order (at most one when the run stopped at the
    /// first). Each carries its oracle, event index, time, message path and repro line.
    public var violations: [Violation]
    /// What each device's user saw at the end of the run (empty `devices` when
    /// `captureLedger` was off).
    public var ledger: Ledger
    /// The figures `imsim run` prints (events, messages, reconnects, digest …).
    public var report: RunReport
    /// One command that reproduces this run on the command line:
    /// `imsim run SCENARIO --seed N --until T` (ending at the first violation when there is one).
    public var repro: String
    /// False when the scenario was changed in code so that the repro's scenario argument no
    /// longer names the same scenario (write the scenario to a file and name that file in
    /// `SimulationOptions.scenarioArgument` to get an exact repro).
    public var reproIsExact: Bool

    /// No oracle reported a violation.
    public var passed: Bool { violations.isEmpty }
    /// The run's determinism digest (same scenario, seed and build → same digest).
    public var digest: String { report.digest }
    /// Kernel events dispatched.
    public var events: UInt64 { report.events }
    /// When the run stopped.
    public var simulatedTime: SimTime { SimTime(nanoseconds: report.simulatedNanoseconds) }
    /// Every device converged after the heal (only meaningful for runs that reach the liveness
    /// phase, i.e. without a short `until`).
    public var converged: Bool { report.convergedAt != nil }

    /// One line for a pass; for a failure the repro first, then the first violation in full.
    public var summary: String {
        guard let v = violations.first else {
            return "\(scenario) seed \(seed): pass (\(events) events, t=\(report.simulatedTime), digest \(digest))"
        }
        var s = "repro: \(repro)\n\(scenario) seed \(seed): \(violations.count) violation(s)\n\(v.text)"
        if !reproIsExact { s += "\n(note: the scenario was changed in code; the repro names \"\(scenario)\" as loaded from its file)" }
        return s
    }
}

extension Scenario {
    /// A built-in scenario (`quickstart`, `chatroom-storm`, `mixed-1k`) or a scenario file.
    public static func named(_ pathOrName: String) throws(ScenarioError) -> Scenario {
        try load(pathOrName: pathOrName).0
    }

    /// Runs one seed with the oracles on, up to `until` of simulated time (nil: the whole scenario,
    /// liveness phase included), and returns the verdicts and the ledger. Single-threaded and
    /// deterministic.
    public func run(seed: UInt64, until: SimDuration? = nil,
                    options: SimulationOptions = SimulationOptions()) throws(ScenarioError) -> RunOutcome {
        try run(seed: seed, until: until, options: options, repro: reproArgument(options))
    }

    /// Runs the seeds in order (one after another, on this thread) and returns one outcome per
    /// seed run. `stopAfterFailures` ends the sweep early once that many seeds have failed.
    public func sweep(seeds: some Sequence<UInt64>, until: SimDuration? = nil,
                      options: SimulationOptions = SimulationOptions(),
                      stopAfterFailures: Int? = nil) throws(ScenarioError) -> [RunOutcome] {
        let repro = reproArgument(options)
        var out: [RunOutcome] = []
        var failures = 0
        for seed in seeds {
            let o = try run(seed: seed, until: until, options: options, repro: repro)
            out.append(o)
            if !o.passed {
                failures += 1
                if let limit = stopAfterFailures, failures >= limit { break }
            }
        }
        return out
    }

    private func run(seed: UInt64, until: SimDuration?, options: SimulationOptions,
                     repro: (argument: String, exact: Bool)) throws(ScenarioError) -> RunOutcome {
        var oracles: OracleOptions?
        if !options.oracles.isEmpty {
            oracles = OracleOptions(enabled: options.oracles, stopAtFirstViolation: options.stopAtFirstViolation,
                                    scenarioArgument: repro.argument)
        }
        let run = try ScenarioRun(scenario: self, seed: seed, scenarioArgument: repro.argument, oracles: oracles)
        run.run(until: until.map { SimTime.zero + $0 })
        let violations = run.violations
        let line = violations.first?.repro
            ?? "imsim run \(repro.argument) --seed \(seed)" + (until.map { " --until \($0)" } ?? "")
        return RunOutcome(
            scenario: name, seed: seed, until: until, violations: violations,
            ledger: options.captureLedger ? run.ledger() : Ledger(scenario: name, seed: seed, devices: []),
            report: run.report(), repro: line, reproIsExact: repro.exact)
    }

    /// The repro line's scenario argument, with `--swarm` / `--bugs` when this scenario differs
    /// from its file in those switches only; `exact` is false when it differs in anything else.
    private func reproArgument(_ options: SimulationOptions) -> (argument: String, exact: Bool) {
        let base = options.scenarioArgument ?? name
        guard let file = try? Scenario.named(base) else { return (base, false) }
        var argument = base
        var expected = file
        if swarm && !file.swarm {
            argument += " --swarm"
            expected.swarm = true
        }
        if bugs != file.bugs {
            argument += " --bugs " + (bugs.isEmpty ? "none" : bugs.map(\.rawValue).joined(separator: ","))
            expected = expected.withBugs(bugs)
        }
        return (argument, expected == self)
    }
}

extension ScriptStep {
    /// `device` sends a text message at `at` (a script step for a scenario built in code).
    public static func send(at: SimDuration, from device: String, to: ConversationKey, text: String,
                            count: Int = 1, interval: SimDuration = .zero) -> ScriptStep {
        ScriptStep(at: at, device: device, action: .send(SendSpec(to: to, text: text, count: count, interval: interval)))
    }

    /// `device` runs `action` at `at` (`.read(conversation)`, `.background`, `.resetConnection` …).
    public static func on(_ device: String, at: SimDuration, _ action: ScriptAction) -> ScriptStep {
        ScriptStep(at: at, device: device, action: action)
    }
}
