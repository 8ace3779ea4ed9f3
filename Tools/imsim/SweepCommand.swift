import ArgumentParser
import Foundation
import IMSim

/// `imsim sweep`: the local sweep (default), and `merge`, `status`, `submit` for sweeps split into
/// shards (Slurm job arrays, Kubernetes Indexed Jobs, AWS Batch array jobs). Docs/cluster.md.
struct SweepCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sweep",
        abstract: "Run a scenario over many seeds in parallel processes and collect the failures.",
        discussion: """
            imsim sweep SCENARIO --seeds 1..10000 [--shard I/N] [--out DIR] runs a sweep (or one shard \
            of it) here; merge, status and submit handle sweeps split across a cluster (Docs/cluster.md).
            """,
        subcommands: [SweepRunCommand.self, SweepMergeCommand.self, SweepStatusCommand.self, SweepSubmitCommand.self],
        defaultSubcommand: SweepRunCommand.self
    )
}

struct SweepRunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run a sweep, or one shard of it, here (the default: imsim sweep SCENARIO …).",
        discussion: """
            Each seed runs single-threaded and deterministically in a worker process (--jobs of them). \
            Results go to OUT/results.jsonl, or OUT/shard-IIII-of-NNNN.jsonl with --shard: a header \
            (scenario digest, build id, bug switches, seeds, shard), one line per seed sorted by seed, \
            and a closing summary — the same bytes every time the same shard runs on the same build. \
            While running, lines are appended to FILE.partial; the finished file is renamed into place. \
            Rerunning with the same --out continues where a killed or stopped run left off (no seed \
            twice, none lost); a finished shard is not run again.
            --shard I/N (I from 0) runs the seeds at positions I, I+N, … of the list; --shard env/N \
            takes I from SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX or AWS_BATCH_JOB_ARRAY_INDEX.
            --bank DIR keeps failing seeds (imsim seeds) and runs the banked seeds of this range first.
            Exit status: 0 no failures, 1 failures found, 2 usage, scenario or I/O error (disk full, \
            unwritable --out) or seeds without a result.
            """
    )

    @Argument(help: "Scenario file or built-in name.") var scenario: String
    @Option(help: "Seeds, e.g. 1..10000 or 1..100,500.") var seeds = "1..100"
    @Option(help: "Worker processes (default: the number of cores).") var jobs: Int?
    @Option(help: "Run only shard I of N (I from 0, e.g. 2/8; env/N: I from the array task index).") var shard: String?
    @Flag(help: "Swarm testing: each seed enables a random subset of the scenario's faults.") var swarm = false
    @Option(help: "Bug switches to turn on instead of the scenario's (B1,B6 …; \"none\" = all off).") var bugs: String?
    @Option(name: .customLong("stop-after"), help: "Stop after this many failures (the file stays partial; rerun to continue).") var stopAfter: Int?
    @Option(help: "Output directory for the result file.") var out = "sweep-out"
    @Option(help: "Seed bank directory (imsim seeds): failures kept, passes counted, banked seeds first.") var bank: String?
    @Option(help: "Simulated-time limit per run (e.g. 5m).") var until: String?
    @Option(help: "Comma-separated oracles to run (default: all). Used to compare oracle sets on one build (imsim bench mutants --oracles).")
    var oracles: String?
    @Flag(help: "Print the final summary as JSON.") var json = false

    func validate() throws {
        if let j = jobs, j < 1 { throw ValidationError("--jobs must be at least 1") }
        if let s = stopAfter, s < 1 { throw ValidationError("--stop-after must be at least 1") }
        if let list = oracles {
            let unknown = list.split(separator: ",").map(String.init).filter { !OracleOptions.allNames.contains($0) }
            if !unknown.isEmpty { throw ValidationError("--oracles: unknown \(unknown.joined(separator: ", ")) (known: \(OracleOptions.allNames.joined(separator: ",")))") }
        }
    }

    struct Summary: Codable {
        var scenario: String
        var seedsRun: Int
        var resumed: Int
        var failures: Int
        var errors: Int
        var byOracle: [String: Int]
        var wallSeconds: Double
        var seedsPerSecond: Double
        var results: String
        var stoppedEarly: Bool
        var shard: Int
        var shards: Int
        var build: String
    }

    static func fail(_ message: String) -> ExitCode {
        FileHandle.standardError.write(Data("imsim: \(message)\n".utf8))
        return ExitCode(2)
    }

    /// `I/N` or `env/N` → `I/N`.
    static func resolveShard(_ text: String?, environment: [String: String]) throws -> String? {
        guard let text, text.hasPrefix("env/") else { return text }
        for name in ["SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX", "AWS_BATCH_JOB_ARRAY_INDEX"] {
            if let v = environment[name], !v.isEmpty {
                guard Int(v) != nil else { throw ValidationError("--shard env/N: \(name)=\"\(v)\" is not an index") }
                return v + text.dropFirst(3)
            }
        }
        throw ValidationError("--shard env/N: none of SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX, AWS_BATCH_JOB_ARRAY_INDEX is set")
    }

    func run() throws {
        var sc: Scenario
        do { (sc, _) = try Scenario.load(pathOrName: scenario) } catch {
            throw Self.fail("\(scenario): \(error)")
        }
        if swarm { sc.swarm = true }
        if let bugs { sc = try BugsOption.apply(bugs, to: sc) }
        let selection: SeedSelection
        do {
            selection = try SeedSelection(parsing: seeds, shard: Self.resolveShard(shard, environment: ProcessInfo.processInfo.environment))
        } catch let e as SeedSelectionError {
            throw ValidationError("\(e)")
        } catch let e as ValidationError {
            throw Self.fail(e.message)   // env/N without an index: a job-script problem, one line
        }
        if let u = until, (try? SimDuration(parsing: u)) == nil { throw ValidationError("--until: invalid duration \"\(u)\"") }
        guard selection.ranges.reduce(0, { $0 + Double($1.upperBound - $1.lowerBound) + 1 }) <= 10_000_000 else {
            throw ValidationError("at most 10,000,000 seeds per sweep")
        }
        var seen = Set<UInt64>()
        let all = selection.seeds.filter { seen.insert($0).inserted }
        let digest = Digest64.hex(sc.digest)
        let header = SweepHeader(scenario: sc.name, scenarioArgument: scenario, scenarioDigest: digest, build: SweepBuild.id,
                                 bugs: sc.bugs.map(\.rawValue), swarm: sc.swarm, until: until, seeds: selection.rangesText,
                                 shard: selection.shard?.index ?? 0, shards: selection.shard?.count ?? 1)

        var bankStore: SeedBank?
        if let dir = bank {
            do { bankStore = try SeedBankFile.load(dir) } catch { throw Self.fail("\(error)") }
        }
        let writer: SweepResultWriter
        do { writer = try SweepResultWriter(directory: out, header: header) } catch { throw Self.fail("\(error)") }
        if let n = writer.note { FileHandle.standardError.write(Data("sweep: \(n)\n".utf8)) }
        let resumed = writer.done.count
        var list = all.filter { writer.done[$0] == nil }
        if resumed > 0 && !list.isEmpty {
            FileHandle.standardError.write(Data("sweep: resuming \(writer.finalPath): \(resumed) seed(s) done, \(list.count) to go\n".utf8))
        }
        // Banked failures of this range first: a regression that comes back shows in seconds.
        if let b = bankStore {
            let banked = Set(b.seeds(scenario: sc.name, digest: digest, swarm: sc.swarm))
            let first = list.filter { banked.contains($0) }
            if !first.isEmpty {
                list = first + list.filter { !banked.contains($0) }
                FileHandle.standardError.write(Data("bank: running \(first.count) banked seed(s) first\n".utf8))
            }
        }

        var workerArgs = ["sweep-worker", scenario]
        if swarm { workerArgs.append("--swarm") }
        if let bugs { workerArgs += ["--bugs", bugs] }
        if let u = until { workerArgs += ["--until", u] }
        if let o = oracles { workerArgs += ["--oracles", o] }
        var failures = 0, errors = 0, done = 0
        var stoppedEarly = false
        var ioError: SweepIOError?
        let start = Date()
        if !list.isEmpty {
            let pool = try WorkerPool(count: min(jobs ?? ProcessInfo.processInfo.activeProcessorCount, max(1, list.count)),
                                      arguments: workerArgs)
            let progress = Progress(total: list.count)
            var next = 0
            var running = 0
            for w in 0..<pool.count where next < list.count {
                pool.send(seed: list[next], to: w); next += 1; running += 1
            }
            while running > 0 {
                let (w, line) = pool.nextLine()
                running -= 1
                guard let line else {
                    errors += 1
                    progress.note("worker \(w) exited unexpectedly")
                    continue
                }
                done += 1
                if let r = try? JSONDecoder().decode(SweepResult.self, from: Data(line.utf8)) {
                    do { try writer.record(SweepSeedLine(r)) } catch {
                        ioError = error
                        stoppedEarly = true
                        break
                    }
                    switch r.outcome {
                    case .pass: break
                    case .fail:
                        failures += 1
                        progress.note("FAIL seed \(r.seed): \(r.oracle ?? "?") at event \(r.eventIndex ?? 0) (t=\(r.simTime ?? "?")) — \(r.detail ?? "")\n     repro: \(r.repro ?? "")")
                    case .error:
                        progress.note("ERROR seed \(r.seed): \(r.detail ?? "")")
                    }
                } else {
                    errors += 1
                    progress.note("unreadable worker output: \(line.prefix(200))")
                }
                progress.update(done: done, failures: failures)
                if let limit = stopAfter, failures >= limit {
                    stoppedEarly = next < list.count || running > 0
                    break
                }
                if next < list.count {
                    pool.send(seed: list[next], to: w); next += 1; running += 1
                }
            }
            pool.finish(kill: stoppedEarly)
            progress.finish()
        }
        if let e = ioError { throw Self.fail("\(e)") }
        let wall = Date().timeIntervalSince(start)
        let lost = all.filter { writer.done[$0] == nil }.count
        var finished = false
        if lost == 0 {
            do { try writer.finish() } catch { throw Self.fail("\(error)") }
            finished = true
        }
        let lines = all.compactMap { writer.done[$0] }
        if let dir = bank, var b = bankStore {
            b.absorb(header: header, lines: lines)
            do { try SeedBankFile.save(b, to: dir) } catch { throw Self.fail("\(error)") }
        }
        let fails = lines.filter { $0.outcome == .fail }
        var byOracle: [String: Int] = [:]
        for f in fails { byOracle[f.oracle ?? "?", default: 0] += 1 }
        // Error lines (kept in the file) plus results that never came (dead worker, unreadable output).
        let errs = lines.filter { $0.outcome == .error }.count + errors
        let path = finished ? writer.finalPath : writer.partialPath
        let summary = Summary(scenario: sc.name, seedsRun: lines.count, resumed: resumed, failures: fails.count, errors: errs,
                              byOracle: byOracle, wallSeconds: wall, seedsPerSecond: wall > 0 ? Double(done) / wall : 0,
                              results: path, stoppedEarly: stoppedEarly, shard: header.shard, shards: header.shards, build: header.build)
        if json {
            print(BenchFormat.json(summary))
        } else {
            let shardText = header.shards > 1 ? " shard \(header.shard)/\(header.shards)" : ""
            print("sweep \(sc.name)\(shardText): \(lines.count) seed(s), \(fails.count) failure(s), \(errs) error(s) in \(String(format: "%.1f", wall)) s (\(String(format: "%.2f", summary.seedsPerSecond)) seeds/s)" + (resumed > 0 ? ", \(resumed) from an earlier run" : ""))
            for o in byOracle.keys.sorted() { print("  \(o): \(byOracle[o]!)") }
            print("  results: \(path)")
            // Which binary ran: digests compare only within one build (Docs/store.md, issue 28).
            let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
            print("  build: \(header.build) (\(exe))")
        }
        if lost > 0 && !stoppedEarly {
            throw Self.fail("\(lost) seed(s) got no result (a worker died); rerun the same command to run them")
        }
        if fails.count > 0 { throw ExitCode(1) }
        if errs > 0 { throw ExitCode(2) }
    }
}

/// Loads and saves `DIR/bank.json` (imsim seeds, sweep --bank, merge --bank).
enum SeedBankFile {
    static func load(_ dir: String) throws -> SeedBank {
        let path = dir + "/bank.json"
        guard let data = FileManager.default.contents(atPath: path) else {
            var isDir: ObjCBool = false
            if FileManager.default.fileExists(atPath: dir, isDirectory: &isDir), !isDir.boolValue {
                throw SweepIOError("--bank \(dir): not a directory")
            }
            return SeedBank()
        }
        do { return try JSONDecoder().decode(SeedBank.self, from: data) } catch {
            throw SweepIOError("\(path): not a seed bank (\(error))")
        }
    }

    static func save(_ b: SeedBank, to dir: String) throws {
        try SweepResultWriter.makeDirectory(dir)
        let e = JSONEncoder()
        e.outputFormatting = [.prettyPrinted, .sortedKeys]
        try SweepResultWriter.writeAtomically(Array(try e.encode(b)), to: dir + "/bank.json")
    }
}

/// Worker processes that run one seed per request (`imsim sweep-worker`), fed over stdin.
final class WorkerPool: @unchecked Sendable {
    private var processes: [Process] = []
    private var inputs: [FileHandle] = []
    private let lock = NSCondition()
    private var lines: [(Int, String?)] = []
    private var buffers: [Data] = []

    var count: Int { processes.count }

    init(count: Int, arguments: [String]) throws {
        let exe = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        for w in 0..<count {
            let p = Process()
            p.executableURL = exe
            p.arguments = arguments
            let inPipe = Pipe(), outPipe = Pipe()
            p.standardInput = inPipe
            p.standardOutput = outPipe
            buffers.append(Data())
            outPipe.fileHandleForReading.readabilityHandler = { [weak self] h in
                let chunk = h.availableData
                self?.received(chunk, from: w)
            }
            try p.run()
            processes.append(p)
            inputs.append(inPipe.fileHandleForWriting)
        }
    }

    private func received(_ chunk: Data, from w: Int) {
        lock.lock()
        defer { lock.unlock() }
        if chunk.isEmpty {
            // EOF: the worker exited; a pending request gets a nil line.
            lines.append((w, nil))
            lock.signal()
            return
        }
        buffers[w].append(chunk)
        while let nl = buffers[w].firstIndex(of: 0x0A) {
            let line = String(decoding: buffers[w][buffers[w].startIndex..<nl], as: UTF8.self)
            buffers[w] = Data(buffers[w][(nl + 1)...])
            lines.append((w, line))
            lock.signal()
        }
    }

    func send(seed: UInt64, to w: Int) {
        inputs[w].write(Data("\(seed)\n".utf8))
    }

    /// Blocks until some worker answers (nil line = the worker died).
    func nextLine() -> (Int, String?) {
        lock.lock()
        while lines.isEmpty { lock.wait() }
        let l = lines.removeFirst()
        lock.unlock()
        return l
    }

    func finish(kill: Bool) {
        for (i, p) in processes.enumerated() {
            try? inputs[i].close()
            if kill { p.terminate() }
        }
        for p in processes { p.waitUntilExit() }
    }
}

/// Progress on stderr: a bar on a terminal, a line every 10 s otherwise.
final class Progress {
    let total: Int
    let tty = isatty(2) != 0
    let start = Date()
    var lastPrint = Date.distantPast
    var done = 0, failures = 0

    init(total: Int) { self.total = total }

    func update(done: Int, failures: Int) {
        self.done = done
        self.failures = failures
        let now = Date()
        if tty {
            guard now.timeIntervalSince(lastPrint) > 0.1 || done == total else { return }
        } else {
            guard now.timeIntervalSince(lastPrint) >= 10 || done == total else { return }
        }
        lastPrint = now
        let elapsed = now.timeIntervalSince(start)
        let rate = elapsed > 0 ? Double(done) / elapsed : 0
        let eta = rate > 0 ? Double(total - done) / rate : 0
        let width = 30
        let filled = total > 0 ? width * done / total : width
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        let text = "[\(bar)] \(done)/\(total) seeds, \(failures) failures, \(String(format: "%.1f", rate)) seeds/s, ETA \(Self.duration(eta))"
        if tty {
            FileHandle.standardError.write(Data("\r\u{1B}[K\(text)".utf8))
        } else {
            FileHandle.standardError.write(Data("\(text)\n".utf8))
        }
    }

    func note(_ s: String) {
        FileHandle.standardError.write(Data(((tty ? "\r\u{1B}[K" : "") + s + "\n").utf8))
        if tty { lastPrint = .distantPast }   // redraw the bar under the note
    }

    func finish() {
        if tty { FileHandle.standardError.write(Data("\n".utf8)) }
    }

    static func duration(_ s: Double) -> String {
        let t = Int(s.rounded())
        return t >= 3600 ? "\(t / 3600)h\((t % 3600) / 60)m" : t >= 60 ? "\(t / 60)m\(t % 60)s" : "\(t)s"
    }
}

/// `imsim sweep-worker`: reads seeds from stdin, runs each, writes one JSON result per line.
struct SweepWorkerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "sweep-worker", abstract: "Internal: a sweep's worker process.",
                                                    shouldDisplay: false)
    @Argument var scenario: String
    @Flag var swarm = false
    @Option var until: String?
    @Option var bugs: String?
    /// `imsim bench sweep` measures sweeps without the oracles too.
    @Flag(name: .customLong("no-oracles")) var noOracles = false
    @Option var oracles: String?

    func run() throws {
        ProcessMemory.keepFreedMemory()
        var (sc, _) = try Scenario.load(pathOrName: scenario)
        if swarm { sc.swarm = true }
        if let bugs { sc = try BugsOption.apply(bugs, to: sc) }
        let untilTime = try until.map { SimTime.zero + (try SimDuration(parsing: $0)) }
        // Seed-independent set-up once per worker, not per seed.
        let shared = try WorldTemplate(scenario: sc)
        let enc = JSONEncoder()
        enc.outputFormatting = [.sortedKeys]
        while let line = readLine() {
            guard let seed = UInt64(line.trimmingCharacters(in: .whitespaces)) else { continue }
            let result: SweepResult
            do {
                var opts = OracleOptions(scenarioArgument: scenario + (swarm ? " --swarm" : "") + BugsOption.reproSuffix(bugs))
                opts.stopAtFirstViolation = true
                if let o = oracles { opts.enabled = Set(o.split(separator: ",").map(String.init)) }
                let run = try ScenarioRun(scenario: sc, seed: seed, scenarioArgument: scenario, oracles: noOracles ? nil : opts,
                                          shared: shared)
                let (_, wall) = Stopwatch.time { run.run(until: untilTime) }
                result = SweepResult(seed: seed, run: run, wallSeconds: wall)
                shared.recycleStores(of: run.world)
            } catch {
                result = SweepResult(seed: seed, outcome: .error, simNanoseconds: 0, events: 0, wallSeconds: 0, digest: "",
                                     detail: "\(error)")
            }
            FileHandle.standardOutput.write(try enc.encode(result) + Data("\n".utf8))
        }
    }
}
