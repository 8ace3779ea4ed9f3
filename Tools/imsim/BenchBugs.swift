import ArgumentParser
import Foundation
import IMSim

/// `imsim bench bugs`: how fast the kernel finds each bug of the zoo (Docs/bugs.md) in a generic
/// scenario — seeds until the first failure (median over several seed offsets), wall time, the
/// failures' oracle, whether the same seeds are clean with the switch off, and the shrunk size of
/// the first failure.
struct BenchBugs: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bugs",
        abstract: "Bug zoo: seeds until first detection, wall time and shrunk size, per bug.",
        discussion: """
            For each bug B1–B16, runs its generic scenario (the table in Docs/bugs.md; never the bug's \
            own minimal Traces/bugs/Bn.json) with only that switch on, seed after seed from each of \
            --offsets starting seeds (1, 1+--stride, …), until the first violation or --max-seeds. \
            Seeds-to-detection is the median over the offsets (a miss counts as --max-seeds + 1 and \
            is flagged). Every detecting seed is run again with every switch off: "off clean" counts \
            those that pass. The first failure (lowest offset) is shrunk with the Shrinker, bounded \
            by --shrink-runs runs, keeping the failing oracle. Single-threaded, deterministic except for the \
            wall times.
            """
    )

    @Option(help: "Seed offsets per bug.") var offsets = 5
    @Option(help: "Distance between the offsets' first seeds.") var stride: UInt64 = 10_000
    @Option(name: .customLong("max-seeds"), help: "Seeds tried per offset before giving up.") var maxSeeds = 300
    @Option(name: .customLong("shrink-runs"), help: "Run budget of the shrinker per bug (0: no shrinking).") var shrinkRuns = 200
    @Option(name: .customLong("shrink-jobs"), help: "Shrink candidates run at once in child processes (1: in this process).") var shrinkJobs = 1
    @Option(help: "Only these bugs (e.g. B1,B6).") var bugs: String?
    @Flag(help: "Print JSON instead of a table.") var json = false
    @Option(name: .customLong("json-out"), help: "Also write the JSON report to this file.") var jsonOut: String?

    func validate() throws {
        guard offsets >= 1, maxSeeds >= 1, shrinkRuns >= 0, stride >= 1 else {
            throw ValidationError("--offsets, --max-seeds and --stride must be at least 1, --shrink-runs at least 0")
        }
    }

    /// Where each bug is hunted: a generic built-in scenario (swarm faults on), the oracle the
    /// minimal scenario names, and for B9 the scenario whose seeds must be clean instead.
    struct Target {
        var scenario: String
        var oracle: String
        var offScenario: String?
        /// Client settings set in the scenario (on and off): B12 is about a setting's promise.
        var client: [String: JSONValue] = [:]
    }

    static let targets: [BugSwitch: Target] = [
        .B1: Target(scenario: "quickstart", oracle: "no-duplicate"),
        .B2: Target(scenario: "everyday", oracle: "no-duplicate"),
        .B3: Target(scenario: "everyday", oracle: "no-loss"),
        .B4: Target(scenario: "quickstart", oracle: "order"),
        .B5: Target(scenario: "everyday", oracle: "order"),
        .B6: Target(scenario: "everyday", oracle: "chatroom"),
        .B7: Target(scenario: "everyday", oracle: "chatroom"),
        .B8: Target(scenario: "everyday", oracle: "chatroom"),
        .B9: Target(scenario: "busy-room", oracle: "chatroom"),
        .B10: Target(scenario: "quickstart", oracle: "no-duplicate"),
        .B11: Target(scenario: "everyday", oracle: "reconnect"),
        // B12 is "reconnectKickEnable = true not honoured" (issue 22): hunted in everyday with the setting on.
        .B12: Target(scenario: "everyday", oracle: "reconnect-kick", client: ["reconnectKickEnable": .bool(true)]),
        .B13: Target(scenario: "chatroom-storm", oracle: "quota"),  // the quota oracle reports B13 first since issue 21
        .B14: Target(scenario: "quickstart", oracle: "unread"),
        .B15: Target(scenario: "quickstart-storage", oracle: "liveness"),  // storage faults: device stores (issue 28)
        .B16: Target(scenario: "quickstart-storage", oracle: "order"),
    ]

    struct Row: Codable {
        var bug: String
        var scenario: String
        var expectedOracle: String
        /// Seeds run until the first violation, per offset (nil: none within --max-seeds).
        var seedsUntilDetection: [Int?]
        var medianSeeds: Double
        var missedOffsets: Int
        /// The detecting seeds and the oracle each failed.
        var detectingSeeds: [UInt64]
        var oracles: [String]
        /// Detections whose oracle is the expected one.
        var expectedOracleHits: Int
        /// Detecting seeds re-run with every switch off (B9: in the off scenario) that pass.
        var offClean: Int
        var offChecked: Int
        var wallSeconds: Double
        /// CPU seconds (this process, all threads) of the seed search: on a loaded machine the
        /// figure to compare, wall time being inflated by the other processes.
        var cpuSeconds: Double?
        var wallSecondsPerDetection: Double
        var shrunk: ShrinkSize?
        var shrunkFrom: ShrinkSize?
        var shrinkRuns: Int?
        var shrinkWallSeconds: Double?
        /// CPU seconds of the shrink: this process plus reaped `--shrink-jobs` children.
        var shrinkCPUSeconds: Double?
        /// Events until the failure, shrunk / first failure, in percent.
        var shrunkEventPercent: Double?
        /// The shrunk scenario, run again on its own, fails the same oracle on the same kind of event.
        var shrunkFailsSameOracle: Bool?
    }

    struct Report: Codable {
        var build: String
        var offsets: Int
        var stride: UInt64
        var maxSeeds: Int
        var shrinkRuns: Int
        var rows: [Row]
        var totalWallSeconds: Double
    }

    func run() throws {
        BenchFormat.warnIfDebug()
        let list = try bugs.map { try Scenario.parseBugsArgument($0) } ?? BugSwitch.allCases
        var rows: [Row] = []
        let (_, total) = try Stopwatch.time {
            for bug in list {
                let row = try measure(bug)
                rows.append(row)
                if !json { FileHandle.standardError.write(Data("\(bug): median \(row.medianSeeds) seeds, \(String(format: "%.2f", row.wallSeconds)) s\n".utf8)) }
            }
        }
        let report = Report(build: IMSimVersion.buildConfiguration, offsets: offsets, stride: stride, maxSeeds: maxSeeds,
                            shrinkRuns: shrinkRuns, rows: rows, totalWallSeconds: total)
        if let jsonOut { try Data((BenchFormat.json(report) + "\n").utf8).write(to: URL(fileURLWithPath: jsonOut)) }
        if json {
            print(BenchFormat.json(report))
        } else {
            print(Self.table(report))
        }
    }

    static func scenario(_ name: String, bugs: [BugSwitch], client settings: [String: JSONValue] = [:]) throws -> (Scenario, JSONValue) {
        let (sc, path) = try Scenario.load(pathOrName: name)
        let s = sc.withBugs(bugs)
        // As JSON (for the shrinker), swarm on and the client settings set; the run uses the same.
        var v = try JSONValue.parse(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        v = Self.set(v, "swarm", .bool(true))
        var client = Self.set(v["client"] ?? .object([]), "bugs", .array(s.client.bugs.map { .string($0.rawValue) }))
        for key in settings.keys.sorted() { client = Self.set(client, key, settings[key]!) }
        let server = Self.set(v["server"] ?? .object([]), "bugs", .array(s.server.bugs.map { .string($0.rawValue) }))
        v = Self.set(Self.set(v, "client", client), "server", server)
        return (try ScenarioText.scenario(v), v)
    }

    static func set(_ v: JSONValue, _ key: String, _ value: JSONValue) -> JSONValue {
        guard case .object(var m) = v else { return v }
        if let i = m.firstIndex(where: { $0.key == key }) { m[i].value = value } else { m.append(.init(key, value)) }
        return .object(m)
    }

    static func firstViolation(_ s: Scenario, seed: UInt64, name: String) throws -> Violation? {
        let run = try ScenarioRun(scenario: s, seed: seed, oracles: OracleOptions(scenarioArgument: name))
        run.run()
        return run.violations.first
    }

    func measure(_ bug: BugSwitch) throws -> Row {
        let t = Self.targets[bug]!
        let (on, onJSON) = try Self.scenario(t.scenario, bugs: [bug], client: t.client)
        let (off, _) = try Self.scenario(t.offScenario ?? t.scenario, bugs: [], client: t.client)
        var until: [Int?] = []
        var seeds: [UInt64] = []
        var oracles: [String] = []
        var first: (UInt64, String)?
        let cpu0 = CPUClock.processSeconds()
        let (_, wall) = try Stopwatch.time {
            for k in 0..<offsets {
                let start = 1 + UInt64(k) * stride
                var found: Int?
                for i in 0..<maxSeeds {
                    let seed = start + UInt64(i)
                    if let v = try Self.firstViolation(on, seed: seed, name: t.scenario) {
                        found = i + 1
                        seeds.append(seed)
                        oracles.append(v.oracle)
                        if first == nil { first = (seed, v.oracle) }
                        break
                    }
                }
                until.append(found)
            }
        }
        let searchCPU = CPUClock.processSeconds() - cpu0
        var offClean = 0
        for s in seeds where try Self.firstViolation(off, seed: s, name: t.offScenario ?? t.scenario) == nil { offClean += 1 }
        let counts = until.map { Double($0 ?? (maxSeeds + 1)) }.sorted()
        let median = counts.count % 2 == 1 ? counts[counts.count / 2] : (counts[counts.count / 2 - 1] + counts[counts.count / 2]) / 2
        var row = Row(bug: bug.rawValue, scenario: t.scenario, expectedOracle: t.oracle, seedsUntilDetection: until,
                      medianSeeds: median, missedOffsets: until.filter { $0 == nil }.count, detectingSeeds: seeds,
                      oracles: oracles, expectedOracleHits: oracles.filter { $0 == t.oracle }.count,
                      offClean: offClean, offChecked: seeds.count, wallSeconds: wall, cpuSeconds: searchCPU,
                      wallSecondsPerDetection: seeds.isEmpty ? wall : wall / Double(seeds.count))
        if shrinkRuns > 0, let (seed, oracle) = first {
            let argument = "\(t.scenario)-\(bug.rawValue)-shrunk.json"
            let shrinkCPU0 = CPUClock.processSeconds() + BenchSweep.childrenCPUSeconds()
            let (result, shrinkWall) = try Stopwatch.time {
                let shrinker = try Shrinker(scenario: onJSON, seed: seed, oracle: oracle, maxRuns: shrinkRuns, scenarioArgument: argument)
                if shrinkJobs > 1 {
                    shrinker.batchSize = shrinkJobs
                    let (o, k) = (shrinker.oracle, shrinker.eventKind)
                    shrinker.evaluator = { ShrinkCommand.evaluateInChildren($0, seed: seed, oracle: o, eventKind: k, scenarioArgument: argument) }
                }
                return shrinker.run()
            }
            row.shrinkCPUSeconds = CPUClock.processSeconds() + BenchSweep.childrenCPUSeconds() - shrinkCPU0
            row.shrunkEventPercent = 100 * Double(result.after.eventsUntilFailure) / Double(max(1, result.before.eventsUntilFailure))
            if case .fails = Shrinker.evaluate(result.json, seed: seed, oracle: result.oracle, eventKind: result.eventKind,
                                               scenarioArgument: argument) {
                row.shrunkFailsSameOracle = true
            } else {
                row.shrunkFailsSameOracle = false
            }
            row.shrunk = result.after
            row.shrunkFrom = result.before
            row.shrinkRuns = result.runs
            row.shrinkWallSeconds = shrinkWall
        }
        return row
    }

    static func table(_ r: Report) -> String {
        var lines = ["bug  scenario           oracle        seeds→detect (median; per offset)      wall/CPU s      s/detect  expected  off clean  shrunk (steps/users/devices/events; from)              shrink runs / wall s, CPU s"]
        for row in r.rows {
            let per = row.seedsUntilDetection.map { $0.map(String.init) ?? ">\(r.maxSeeds)" }.joined(separator: ",")
            let shrunk = row.shrunk.map { s in
                let f = row.shrunkFrom!
                return "\(s.scriptSteps)/\(s.users)/\(s.devices)/\(s.eventsUntilFailure) (from \(f.scriptSteps)/\(f.users)/\(f.devices)/\(f.eventsUntilFailure))"
            } ?? "-"
            var shrinkCost = row.shrinkRuns.map {
                "\($0) / \(String(format: "%.1f", row.shrinkWallSeconds ?? 0)) wall, \(String(format: "%.1f", row.shrinkCPUSeconds ?? 0)) CPU"
            } ?? "-"
            if let p = row.shrunkEventPercent {
                shrinkCost += String(format: "  %.1f%% events", p) + (row.shrunkFailsSameOracle == true ? ", same oracle" : ", NOT the same oracle")
            }
            lines.append([
                row.bug.padding(toLength: 4, withPad: " ", startingAt: 0),
                row.scenario.padding(toLength: 18, withPad: " ", startingAt: 0),
                row.expectedOracle.padding(toLength: 13, withPad: " ", startingAt: 0),
                "\(String(format: "%g", row.medianSeeds)) (\(per))".padding(toLength: 38, withPad: " ", startingAt: 0),
                String(format: "%7.2f/%7.2f", row.wallSeconds, row.cpuSeconds ?? 0),
                String(format: "%9.3f", row.wallSecondsPerDetection),
                "\(row.expectedOracleHits)/\(row.detectingSeeds.count)".padding(toLength: 9, withPad: " ", startingAt: 0),
                "\(row.offClean)/\(row.offChecked)".padding(toLength: 10, withPad: " ", startingAt: 0),
                shrunk.padding(toLength: 55, withPad: " ", startingAt: 0),
                shrinkCost,
            ].joined(separator: " "))
        }
        lines.append("offsets \(r.offsets) (stride \(r.stride)), at most \(r.maxSeeds) seeds each, shrink budget \(r.shrinkRuns) runs; total \(String(format: "%.1f", r.totalWallSeconds)) s (\(r.build) build)")
        return lines.joined(separator: "\n")
    }
}
