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

    public init(seed: UInt64, outcome: Outcome, oracle: String? = nil, eventIndex: UInt64? = nil, simTime: String? = nil,
                simNanoseconds: Int64, events: UInt64, wallSeconds: Double, digest: String, detail: String? = nil,
                repro: String? = nil) {
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
    }

    /// From a finished run.
    public init(seed: UInt64, run: ScenarioRun, wallSeconds: Double) {
        let v = run.violations.first
        self.init(seed: seed, outcome: v == nil ? .pass : .fail, oracle: v?.oracle, eventIndex: v?.eventIndex,
                  simTime: v?.time, simNanoseconds: v?.timeNanoseconds ?? run.world.now.nanoseconds,
                  events: run.world.sim.counters.eventsDispatched, wallSeconds: wallSeconds,
                  digest: run.world.sim.digest.description, detail: v?.detail, repro: v?.repro)
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

        public init(scenario: String, scenarioDigest: String, seed: UInt64, oracle: String, simNanoseconds: Int64, swarm: Bool) {
            self.scenario = scenario
            self.scenarioDigest = scenarioDigest
            self.seed = seed
            self.oracle = oracle
            self.simNanoseconds = simNanoseconds
            self.swarm = swarm
        }
    }

    public var entries: [Entry] = []
    public static let maxPerScenario = 200

    public init() {}

    /// Seeds for a scenario, fastest-failing first.
    public func seeds(scenario: String, digest: String, swarm: Bool) -> [UInt64] {
        entries.filter { $0.scenario == scenario && $0.scenarioDigest == digest && $0.swarm == swarm }
            .sorted { ($0.simNanoseconds, $0.seed) < ($1.simNanoseconds, $1.seed) }.map(\.seed)
    }

    public mutating func add(_ e: Entry) {
        entries.removeAll { $0.scenario == e.scenario && $0.scenarioDigest == e.scenarioDigest && $0.seed == e.seed && $0.swarm == e.swarm }
        entries.append(e)
        // Keep the fastest failures per scenario.
        let mine = entries.filter { $0.scenario == e.scenario }.sorted { ($0.simNanoseconds, $0.seed) < ($1.simNanoseconds, $1.seed) }
        if mine.count > Self.maxPerScenario {
            let drop = Set(mine.suffix(from: Self.maxPerScenario).map(\.seed))
            entries.removeAll { $0.scenario == e.scenario && drop.contains($0.seed) }
        }
        entries.sort { ($0.scenario, $0.simNanoseconds, $0.seed) < ($1.scenario, $1.simNanoseconds, $1.seed) }
    }

    /// Removes a seed that now passes.
    public mutating func remove(scenario: String, seed: UInt64) {
        entries.removeAll { $0.scenario == scenario && $0.seed == seed }
    }
}
