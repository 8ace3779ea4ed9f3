/// One line of a sweep's `results.jsonl`.
public struct SweepResult: Codable, Sendable, Equatable {
    public enum Outcome: String, Codable, Sendable { case pass, fail, error }
    public var seed: UInt64
    public var outcome: Outcome
    public var oracle: String?
    public var eventIndex: UInt64?
    public var simTime: String?
    public var simNanoseconds: Int64
    public var events: UInt64
    public var wallSeconds: Double
    public var digest: String
    public var detail: String?
    public var repro: String?
    /// The oracles' "sometimes" coverage counters of this run (nil without the oracles).
    public var coverage: [String: Int]?

    public init(seed: UInt64, outcome: Outcome, oracle: String? = nil, eventIndex: UInt64? = nil, simTime: String? = nil,
                simNanoseconds: Int64, events: UInt64, wallSeconds: Double, digest: String, detail: String? = nil,
                repro: String? = nil, coverage: [String: Int]? = nil) {
        self.seed = seed
        self.outcome = outcome
        self.oracle = oracle
        self.eventIndex = eventIndex
        self.simTime = simTime
        self.simNanoseconds = simNanoseconds
        self.events = events
        self.wallSeconds = wallSeconds
        self.digest = digest
        self.detail = detail
        self.repro = repro
        self.coverage = coverage
    }

    /// From a finished run.
    public init(seed: UInt64, run: ScenarioRun, wallSeconds: Double) {
        let v = run.violations.first
        self.init(seed: seed, outcome: v == nil ? .pass : .fail, oracle: v?.oracle, eventIndex: v?.eventIndex,
                  simTime: v?.time, simNanoseconds: v?.timeNanoseconds ?? run.world.now.nanoseconds,
                  events: run.world.sim.counters.eventsDispatched, wallSeconds: wallSeconds,
                  digest: run.world.sim.digest.description, detail: v?.detail, repro: v?.repro,
                  coverage: run.suite?.coverage.counts)
    }
}

/// Failing seeds kept across sweeps (`--bank DIR`), fastest failures first: a regression that
/// comes back is found in the first seconds of the next sweep.
public struct SeedBank: Codable, Sendable, Equatable {
    public struct Entry: Codable, Sendable, Equatable {
        public var scenario: String
        public var scenarioDigest: String
        public var seed: UInt64
        public var oracle: String
        public var simNanoseconds: Int64
        public var swarm: Bool
        /// Bug switches on (nil in banks written before switches were kept: none).
        public var bugs: [String]?
        /// The build that found it, and how to load the scenario again (`imsim seeds recheck`).
        public var build: String?
        public var scenarioArgument: String?
        public var until: String?
        public var repro: String?

        public init(scenario: String, scenarioDigest: String, seed: UInt64, oracle: String, simNanoseconds: Int64, swarm: Bool,
                    bugs: [String]? = nil, build: String? = nil, scenarioArgument: String? = nil, until: String? = nil,
                    repro: String? = nil) {
            self.scenario = scenario
            self.scenarioDigest = scenarioDigest
            self.seed = seed
            self.oracle = oracle
            self.simNanoseconds = simNanoseconds
            self.swarm = swarm
            self.bugs = bugs
            self.build = build
            self.scenarioArgument = scenarioArgument
            self.until = until
            self.repro = repro
        }

        func sameKey(_ o: Entry) -> Bool {
            scenario == o.scenario && scenarioDigest == o.scenarioDigest && seed == o.seed && swarm == o.swarm
                && (bugs ?? []) == (o.bugs ?? []) && until == o.until
        }
    }

    public var entries: [Entry] = []
    /// Passing seeds counted, not stored: "scenario digest bugs" → count.
    public var passed: [String: Int]?
    public static let maxPerScenario = 10_000

    public init() {}

    /// Seeds for a scenario, fastest-failing first.
    public func seeds(scenario: String, digest: String, swarm: Bool) -> [UInt64] {
        entries.filter { $0.scenario == scenario && $0.scenarioDigest == digest && $0.swarm == swarm && $0.until == nil }
            .sorted { ($0.simNanoseconds, $0.seed) < ($1.simNanoseconds, $1.seed) }.map(\.seed)
    }

    public mutating func add(_ e: Entry) {
        entries.removeAll { $0.sameKey(e) }
        entries.append(e)
        // Keep the fastest failures per scenario.
        let mine = entries.filter { $0.scenario == e.scenario }.sorted { ($0.simNanoseconds, $0.seed) < ($1.simNanoseconds, $1.seed) }
        if mine.count > Self.maxPerScenario {
            let drop = Array(mine.suffix(from: Self.maxPerScenario))
            entries.removeAll { x in drop.contains { $0.sameKey(x) } }
        }
        entries.sort { ($0.scenario, $0.simNanoseconds, $0.seed, ($0.bugs ?? []).joined(separator: ",")) < ($1.scenario, $1.simNanoseconds, $1.seed, ($1.bugs ?? []).joined(separator: ",")) }
    }

    /// Counts a passing seed (and drops it from the failures of the same sweep kind).
    public mutating func pass(scenario: String, scenarioDigest: String, seed: UInt64, swarm: Bool, bugs: [String], until: String?) {
        let key = Self.passKey(scenario: scenario, scenarioDigest: scenarioDigest, swarm: swarm, bugs: bugs, until: until)
        passed = passed ?? [:]
        passed![key, default: 0] += 1
        let probe = Entry(scenario: scenario, scenarioDigest: scenarioDigest, seed: seed, oracle: "", simNanoseconds: 0, swarm: swarm,
                          bugs: bugs, until: until)
        entries.removeAll { $0.sameKey(probe) }
    }

    public static func passKey(scenario: String, scenarioDigest: String, swarm: Bool, bugs: [String], until: String?) -> String {
        "\(scenario) \(scenarioDigest)" + (swarm ? " swarm" : "") + " bugs=" + (bugs.isEmpty ? "none" : bugs.joined(separator: ","))
            + (until.map { " until=\($0)" } ?? "")
    }

    /// Adds a result file's (or merge's) verdicts: failures kept, passes counted.
    public mutating func absorb(header h: SweepHeader, lines: [SweepSeedLine]) {
        for l in lines {
            switch l.outcome {
            case .pass:
                pass(scenario: h.scenario, scenarioDigest: h.scenarioDigest, seed: l.seed, swarm: h.swarm, bugs: h.bugs, until: h.until)
            case .fail:
                add(Entry(scenario: h.scenario, scenarioDigest: h.scenarioDigest, seed: l.seed, oracle: l.oracle ?? "?",
                          simNanoseconds: l.simNanoseconds, swarm: h.swarm, bugs: h.bugs, build: h.build,
                          scenarioArgument: h.scenarioArgument, until: h.until, repro: l.repro))
            case .error:
                break
            }
        }
    }

    /// Removes a seed that now passes.
    public mutating func remove(scenario: String, seed: UInt64) {
        entries.removeAll { $0.scenario == scenario && $0.seed == seed }
    }
}
