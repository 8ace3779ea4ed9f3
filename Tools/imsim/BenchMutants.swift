import ArgumentParser
import Foundation
import IMSim

/// `imsim bench mutants`: mutation testing of the cores as a benchmark of the oracles
/// (Docs/mutants.md). The generator (Tools/mutants, swift-syntax) writes one schematised copy of
/// the package holding every mutant behind IMSIM_MUTANT; this command builds it once, runs each
/// mutant against a fixed budget in parallel processes and reports what killed it.
struct BenchMutants: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mutants",
        abstract: "Mutation score: mutants of IMClient/IMServer/IMStore against the oracles and the golden suite.",
        discussion: """
            Builds the generator (Tools/mutants) and the schematised copy (.build-mutants/, one release \
            build holding every mutant), then runs each selected mutant (IMSIM_MUTANT=id) against the \
            budget: `sweep SCENARIO --seeds 1..N --bugs none [--swarm]` for each --scenarios, then \
            `regress`, stopping at the first kill. Killed by: an oracle violation (named), a golden \
            ledger diff ("golden") or a crash/trap/error ("crash"). A step running longer than \
            --timeout-factor × the unmutated run's time (at least --min-timeout s) is "timed out". \
            The unmutated schematised build (IMSIM_MUTANT unset) runs first: its digests must equal \
            this build's, and seeds it fails are left out of the budget (printed). Survivors listed \
            in --equivalent (KEY  # reason, one per line) are excluded from the kill rate. \
            Kill rate = (killed + timed out) / (mutants − equivalent). \
            Exit status: 0 report written, 1 the pipeline failed, 2 usage error.
            """
    )

    @Option(help: "Package root (the fork to measure).") var root = "."
    @Option(help: "Scenarios of the budget, comma-separated.") var scenarios = "quickstart,everyday,busy-room,api-tour,expiry"
    @Option(help: "Seeds per scenario (1..N).") var seeds = 200
    @Flag(name: .customLong("no-swarm"), help: "Run the sweeps without --swarm.") var noSwarm = false
    @Flag(name: .customLong("no-regress"), help: "Leave the golden suite out of the budget.") var noRegress = false
    @Option(help: "Only these oracles in the sweeps, comma-separated (default: all) — to measure an older oracle set on the same build.")
    var oracles: String?
    @Option(help: "Mutants run at once (default: the number of cores).") var jobs: Int?
    @Option(help: "Run a deterministic sample of this many mutants (by a hash of their keys).") var sample: Int?
    @Option(name: .customLong("sample-seed"), help: "Seed of the sample's hash.") var sampleSeed: UInt64 = 1
    @Option(help: "Only these mutant ids, e.g. 1,5,20-30.") var mutants: String?
    @Option(help: "Only mutants of these modules, e.g. IMServer,IMStore.") var modules: String?
    @Option(help: "Only mutants whose key or FUNCTION:OPERATOR contains this text (repeatable; any matches), e.g. ServerCore+Send.swift or ServerCore.handlePublish:early-return.")
    var filter: [String] = []
    @Option(name: .customLong("timeout-factor"), help: "Per-step timeout as a multiple of the unmutated step's wall time.") var timeoutFactor = 4.0
    @Option(name: .customLong("min-timeout"), help: "Smallest per-step timeout, seconds.") var minTimeout = 20.0
    @Option(help: "Equivalence file (default: ROOT/Tools/mutants/equivalent.txt if present).") var equivalent: String?
    @Option(name: .customLong("binary"), help: "Use this schematised imsim instead of building (with its .build-mutants/mutants.json).") var binary: String?
    @Option(name: .customLong("work-dir"), help: "Scratch directory (default: ROOT/.build-mutants).") var workDir: String?
    @Option(help: "Build the schematised copy in this configuration (release, or debug: a faster build for smoke runs).")
    var configuration = "release"
    @Flag(help: "Print the report as JSON.") var json = false
    @Option(name: .customLong("json-out"), help: "Also write the JSON report to this file.") var jsonOut: String?
    @Flag(name: .customLong("list-only"), help: "Build, check the unmutated run, list the selection and stop.") var listOnly = false

    func validate() throws {
        if let j = jobs, j < 1 { throw ValidationError("--jobs must be at least 1") }
        if seeds < 1 { throw ValidationError("--seeds must be at least 1") }
        if let s = sample, s < 1 { throw ValidationError("--sample must be at least 1") }
        if timeoutFactor < 1 || minTimeout <= 0 { throw ValidationError("--timeout-factor must be ≥ 1 and --min-timeout > 0") }
        if let m = mutants { _ = try MutantSelection.parseIds(m) }
        if !["release", "debug"].contains(configuration) { throw ValidationError("--configuration: release or debug") }
    }

    // MARK: - Manifest (written by Tools/mutants; mirrored here to keep swift-syntax out)

    struct Mutant: Codable {
        var id: Int
        var key: String
        var module: String
        var file: String
        var line: Int
        var column: Int
        var function: String
        var op: String
        var before: String
        var after: String
    }

    struct Manifest: Codable {
        var root: String
        var files: [String]
        var mutants: [Mutant]
        var droppedUncompilable: [String]
    }

    // MARK: - Report

    enum Status: String, Codable { case killed, survived, timedOut = "timed-out", equivalent }

    struct Result: Codable {
        var id: Int
        var key: String
        var module: String
        var location: String
        var function: String
        var op: String
        var before: String
        var after: String
        var status: Status
        /// The oracle that reported the violation, "golden" or "crash".
        var killedBy: String?
        /// The budget step that killed it (e.g. "sweep everyday") and its first failing seed.
        var step: String?
        var detail: String?
        var wallSeconds: Double
        var equivalenceReason: String?
    }

    struct Rate: Codable {
        var mutants: Int
        var killed: Int
        var timedOut: Int
        var survived: Int
        var equivalent: Int
        var killRate: Double
    }

    struct Report: Codable {
        var budget: [String]
        var selection: String
        var generated: Int
        var droppedUncompilable: Int
        var excludedSeeds: [String: [UInt64]]
        var baselineStepSeconds: [String: Double]
        var total: Rate
        var byModule: [String: Rate]
        var byOperator: [String: Rate]
        var byKiller: [String: Int]
        var wallSeconds: Double
        var results: [Result]
        var staleEquivalences: [String]
    }

    // MARK: - Run

    func run() throws {
        let rootURL = URL(fileURLWithPath: root).standardizedFileURL
        let work = URL(fileURLWithPath: workDir ?? rootURL.appendingPathComponent(".build-mutants").path).standardizedFileURL
        let log = MutantLog()
        let wallStart = Date()

        // 1. The schematised build.
        let bin: String
        if let b = binary { bin = b } else { bin = try buildSchematised(root: rootURL, work: work, log: log) }
        let manifestURL = work.appendingPathComponent("mutants.json")
        let manifest: Manifest
        do { manifest = try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: manifestURL)) } catch {
            log.fail("cannot read the manifest \(manifestURL.path): \(error)")
        }

        // 2. The selection.
        var selected = manifest.mutants
        var selectionNote = "all \(manifest.mutants.count)"
        if let mods = modules {
            let set = Set(mods.split(separator: ",").map(String.init))
            selected = selected.filter { set.contains($0.module) }
            selectionNote = "modules \(mods)"
        }
        if !filter.isEmpty {
            selected = selected.filter { m in filter.contains { m.key.contains($0) || "\(m.function):\(m.op)".contains($0) } }
            selectionNote += ", filter \(filter.joined(separator: " | "))"
        }
        if let m = mutants {
            let ids = try MutantSelection.parseIds(m)
            selected = selected.filter { ids.contains($0.id) }
            selectionNote += ", ids \(m)"
        }
        if let n = sample, n < selected.count {
            selected = MutantSelection.sample(selected.map { (key: $0.key, value: $0) }, count: n, seed: sampleSeed).sorted { $0.id < $1.id }
            selectionNote += ", sample of \(n) (--sample-seed \(sampleSeed))"
        }
        let equiv = try loadEquivalences(rootURL)
        let keys = Set(manifest.mutants.map(\.key))
        let stale = equiv.keys.filter { !keys.contains($0) }.sorted()
        for k in stale { log.note("warning: equivalence entry names no mutant (moved code?): \(k)") }

        // 3. The unmutated run: digests, clean seeds, step times.
        let steps = budgetSteps()
        log.note("budget: \(steps.map(\.name).joined(separator: ", ")); \(selected.count) mutant(s) selected (\(selectionNote))")
        try checkDigests(schematised: bin, root: rootURL, log: log)
        var excluded: [String: [UInt64]] = [:]
        var stepTimes: [String: Double] = [:]
        var plan: [Step] = []
        for s in steps {
            let (r, wall) = try runBaseline(s, bin: bin, root: rootURL, work: work)
            if s.kind == .regress, let out = try? String(contentsOf: work.appendingPathComponent("runs/baseline-golden.out"), encoding: .utf8),
               out.contains("≈") {
                log.fail("the unmutated copy changes golden digests (it must behave exactly as the normal build):\n\(out)")
            }
            if r.failed {
                if s.kind == .regress { log.fail("the unmutated build fails the golden suite:\n\(r.detail ?? "")") }
                excluded[s.scenario] = r.failingSeeds
                log.note("unmutated \(s.name) fails seed(s) \(r.failingSeeds.map(String.init).joined(separator: ",")) (oracle false positives or core bugs): left out of the budget")
            }
            var s2 = s
            s2.exclude = r.failingSeeds
            stepTimes[s.name] = wall
            s2.timeout = max(minTimeout, wall * timeoutFactor)
            plan.append(s2)
            log.note("unmutated \(s.name): \(String(format: "%.1f", wall)) s (timeout \(Int(s2.timeout)) s)")
        }
        if listOnly {
            for m in selected { print("\(m.id)\t\(m.file):\(m.line):\(m.column)\t\(m.op)\t\(m.before) → \(m.after)") }
            return
        }

        // 4. The mutants, in parallel.
        var results: [Int: Result] = [:]
        var toRun: [Mutant] = []
        for m in selected {
            if let reason = equiv[m.key] {
                results[m.id] = Result(id: m.id, key: m.key, module: m.module, location: "\(m.file):\(m.line):\(m.column)",
                                       function: m.function, op: m.op, before: m.before, after: m.after, status: .equivalent,
                                       wallSeconds: 0, equivalenceReason: reason)
            } else {
                toRun.append(m)
            }
        }
        let pool = MutantPool(jobs: jobs ?? ProcessInfo.processInfo.activeProcessorCount, bin: bin, root: rootURL,
                              work: work, plan: plan, log: log)
        for r in pool.run(toRun) { results[r.id] = r }

        // 5. The report.
        let ordered = selected.compactMap { results[$0.id] }
        func rate(_ rs: [Result]) -> Rate {
            let k = rs.filter { $0.status == .killed }.count, t = rs.filter { $0.status == .timedOut }.count
            let s = rs.filter { $0.status == .survived }.count, e = rs.filter { $0.status == .equivalent }.count
            let denom = rs.count - e
            return Rate(mutants: rs.count, killed: k, timedOut: t, survived: s, equivalent: e,
                        killRate: denom > 0 ? Double(k + t) / Double(denom) : 0)
        }
        var byKiller: [String: Int] = [:]
        for r in ordered where r.status == .killed { byKiller[r.killedBy ?? "?", default: 0] += 1 }
        let report = Report(budget: plan.map(\.name) + ["timeout ×\(timeoutFactor), ≥ \(Int(minTimeout)) s"]
                                + (oracles.map { ["oracles \($0)"] } ?? []),
                            selection: selectionNote, generated: manifest.mutants.count,
                            droppedUncompilable: manifest.droppedUncompilable.count, excludedSeeds: excluded,
                            baselineStepSeconds: stepTimes, total: rate(ordered),
                            byModule: Dictionary(grouping: ordered, by: \.module).mapValues(rate),
                            byOperator: Dictionary(grouping: ordered, by: \.op).mapValues(rate),
                            byKiller: byKiller, wallSeconds: Date().timeIntervalSince(wallStart),
                            results: ordered, staleEquivalences: stale)
        let text = BenchFormat.json(report)
        if let path = jsonOut { try Data(text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic) }
        if json { print(text) } else { printTable(report) }
    }

    func printTable(_ r: Report) {
        func line(_ name: String, _ x: Rate) -> String {
            name.padding(toLength: 22, withPad: " ", startingAt: 0)
                + String(format: "%6d %7d %9d %9d %6d   %5.1f%%", x.mutants, x.killed, x.timedOut, x.survived, x.equivalent, x.killRate * 100)
        }
        print("mutation score (\(r.selection); \(r.generated) generated, \(r.droppedUncompilable) dropped as uncompilable)")
        print("budget: \(r.budget.joined(separator: "; "))")
        for (s, seeds) in r.excludedSeeds.sorted(by: { $0.key < $1.key }) where !seeds.isEmpty {
            print("  left out (unmutated run fails them): \(s) seeds \(seeds.map(String.init).joined(separator: ","))")
        }
        print()
        print("                       mutants  killed timed-out  survived  equiv   kill rate")
        print(line("all", r.total))
        for (m, x) in r.byModule.sorted(by: { $0.key < $1.key }) { print(line("  " + m, x)) }
        for (o, x) in r.byOperator.sorted(by: { $0.key < $1.key }) { print(line("  " + o, x)) }
        print()
        print("killed by: " + r.byKiller.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        let survivors = r.results.filter { $0.status == .survived }
        if !survivors.isEmpty {
            print()
            print("survivors (what nobody checks):")
            for s in survivors {
                print("  #\(s.id) \(s.location) [\(s.op)] in \(s.function): \(s.before.oneLine) → \(s.after.oneLine)")
            }
        }
        let timedOut = r.results.filter { $0.status == .timedOut }
        if !timedOut.isEmpty {
            print()
            print("timed out: " + timedOut.map { "#\($0.id) \($0.location)" }.joined(separator: ", "))
        }
        let eq = r.results.filter { $0.status == .equivalent }
        if !eq.isEmpty {
            print()
            print("argued equivalent (not counted):")
            for e in eq { print("  #\(e.id) \(e.location) [\(e.op)] \(e.before.oneLine) → \(e.after.oneLine): \(e.equivalenceReason ?? "")") }
        }
        print()
        print(String(format: "kill rate %.1f%% (%d killed + %d timed out of %d non-equivalent), wall %.0f s",
                     r.total.killRate * 100, r.total.killed, r.total.timedOut, r.total.mutants - r.total.equivalent, r.wallSeconds))
    }

    // MARK: - Steps

    struct Step {
        enum Kind { case sweep, regress }
        var kind: Kind
        var scenario: String
        var seeds: Int
        var swarm: Bool
        var exclude: [UInt64] = []
        var timeout: Double = 0
        var oracles: String? = nil
        var name: String { kind == .regress ? "regress" : "sweep \(scenario) 1..\(seeds)\(swarm ? " --swarm" : "")" }

        func seedSpec() -> String {
            let ex = Set(exclude)
            var parts: [String] = []
            var lo: UInt64? = nil
            for s in UInt64(1)...UInt64(seeds) {
                if ex.contains(s) {
                    if let l = lo { parts.append(l == s - 1 ? "\(l)" : "\(l)..\(s - 1)"); lo = nil }
                } else if lo == nil { lo = s }
            }
            if let l = lo { parts.append(l == UInt64(seeds) ? "\(l)" : "\(l)..\(seeds)") }
            return parts.joined(separator: ",")
        }

        func arguments(out: String, stopAfterFirst: Bool) -> [String] {
            switch kind {
            case .regress: return ["regress"]
            case .sweep:
                var a = ["sweep", scenario, "--seeds", seedSpec(), "--jobs", "1", "--bugs", "none", "--json", "--out", out]
                if swarm { a.append("--swarm") }
                if let o = oracles { a += ["--oracles", o] }
                if stopAfterFirst { a += ["--stop-after", "1"] }
                return a
            }
        }
    }

    func budgetSteps() -> [Step] {
        var s = scenarios.split(separator: ",").map { Step(kind: .sweep, scenario: String($0), seeds: seeds, swarm: !noSwarm, oracles: oracles) }
        if !noRegress { s.append(Step(kind: .regress, scenario: "golden", seeds: 0, swarm: false)) }
        return s
    }

    struct StepOutcome {
        var failed: Bool
        var killedBy: String?
        var failingSeeds: [UInt64]
        var detail: String?
    }

    func runBaseline(_ s: Step, bin: String, root: URL, work: URL) throws -> (StepOutcome, Double) {
        let out = work.appendingPathComponent("runs/baseline-\(s.scenario)").path
        let start = Date()
        let p = try MutantProcess.start(bin: bin, args: s.arguments(out: out, stopAfterFirst: false), mutant: nil,
                                        root: root, stdout: work.appendingPathComponent("runs/baseline-\(s.scenario).out"))
        p.process.waitUntilExit()
        let wall = Date().timeIntervalSince(start)
        return (MutantPool.judge(s, process: p, outDir: out), wall)
    }

    /// The unmutated schematised build must compute the same runs as this (normal) build.
    func checkDigests(schematised: String, root: URL, log: MutantLog) throws {
        let me = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        if me == URL(fileURLWithPath: schematised).resolvingSymlinksInPath().path {
            log.note("note: running from the schematised build itself; only the golden digests check the unmutated copy")
            return
        }
        for seed in [1, 2, 3] {
            var digests: [String] = []
            for b in [me, schematised] {
                let p = Process()
                p.executableURL = URL(fileURLWithPath: b)
                p.arguments = ["run", "quickstart", "--seed", String(seed), "--json"]
                p.currentDirectoryURL = root
                var env = ProcessInfo.processInfo.environment
                env.removeValue(forKey: "IMSIM_MUTANT")
                p.environment = env
                let pipe = Pipe()
                p.standardOutput = pipe
                p.standardError = FileHandle.nullDevice
                try p.run()
                let data = pipe.fileHandleForReading.readDataToEndOfFile()
                p.waitUntilExit()
                let text = String(decoding: data, as: UTF8.self)
                digests.append(text.split(separator: "\n").first { $0.contains("\"digest\"") }.map(String.init) ?? "")
            }
            if digests[0].isEmpty || digests[0] != digests[1] {
                log.fail("the unmutated schematised build differs from this build (quickstart seed \(seed)): \(digests[0]) vs \(digests[1])")
            }
        }
        log.note("unmutated schematised build: same digests as this build (quickstart seeds 1-3)")
    }

    func buildSchematised(root: URL, work: URL, log: MutantLog) throws -> String {
        log.note("building the generator and the schematised copy (first time: minutes)…")
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["swift", "run", "--package-path", root.appendingPathComponent("Tools/mutants").path,
                       "imsim-mutants", "build", "--root", root.path, "--out", work.path, "--configuration", configuration]
        let pipe = Pipe()
        p.standardOutput = pipe
        try p.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        guard p.terminationStatus == 0,
              let last = String(decoding: data, as: UTF8.self).split(separator: "\n").last.map(String.init),
              FileManager.default.isExecutableFile(atPath: last) else {
            log.fail("the generator failed (exit \(p.terminationStatus)); see \(work.path)/build.log")
        }
        return last
    }

    func loadEquivalences(_ root: URL) throws -> [String: String] {
        let path = equivalent ?? root.appendingPathComponent("Tools/mutants/equivalent.txt").path
        guard FileManager.default.fileExists(atPath: path) else {
            if equivalent != nil { throw ValidationError("--equivalent: no file \(path)") }
            return [:]
        }
        return try MutantSelection.parseEquivalences(String(contentsOfFile: path, encoding: .utf8), path: path)
    }
}

extension String {
    var oneLine: String {
        let s = split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
        return s.count > 100 ? String(s.prefix(97)) + "…" : s
    }
}
