import ArgumentParser
import Foundation
import IMSim

struct SweepCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sweep",
        abstract: "Run a scenario over many seeds in parallel processes and collect the failures.",
        discussion: """
            Each seed runs single-threaded and deterministically in a worker process (--jobs of them). \
            Results go to OUT/results.jsonl (one line per seed); each failure prints a one-line repro. \
            --bank DIR keeps failing seeds (fastest failures first) and re-runs them first next time. \
            --shard K/N splits a seed range across machines with no coordination.
            Exit status: 0 no failures, 1 failures found, 2 usage or scenario error.
            """
    )

    @Argument(help: "Scenario file or built-in name.") var scenario: String
    @Option(help: "Seeds, e.g. 1..10000 or 1..100,500.") var seeds = "1..100"
    @Option(help: "Worker processes (default: the number of cores).") var jobs: Int?
    @Option(help: "Run only shard K of N (e.g. 2/8).") var shard: String?
    @Flag(help: "Swarm testing: each seed enables a random subset of the scenario's faults.") var swarm = false
    @Option(help: "Bug switches to turn on instead of the scenario's (B1,B6 …; \"none\" = all off).") var bugs: String?
    @Option(name: .customLong("stop-after"), help: "Stop after this many failures.") var stopAfter: Int?
    @Option(help: "Output directory for results.jsonl.") var out = "sweep-out"
    @Option(help: "Seed bank directory (failing seeds are kept and re-run first).") var bank: String?
    @Option(help: "Simulated-time limit per run (e.g. 5m).") var until: String?
    @Flag(help: "Print the final summary as JSON.") var json = false

    func validate() throws {
        if let j = jobs, j < 1 { throw ValidationError("--jobs must be at least 1") }
        if let s = stopAfter, s < 1 { throw ValidationError("--stop-after must be at least 1") }
    }

    struct Summary: Codable {
        var scenario: String
        var seedsRun: Int
        var failures: Int
        var errors: Int
        var byOracle: [String: Int]
        var wallSeconds: Double
        var seedsPerSecond: Double
        var results: String
        var stoppedEarly: Bool
    }

    func run() throws {
        var sc: Scenario
        do { (sc, _) = try Scenario.load(pathOrName: scenario) } catch {
            FileHandle.standardError.write(Data("imsim: \(scenario): \(error)\n".utf8))
            throw ExitCode(2)
        }
        if let bugs { sc = try BugsOption.apply(bugs, to: sc) }
        let selection: SeedSelection
        do { selection = try SeedSelection(parsing: seeds, shard: shard) } catch {
            throw ValidationError("\(error)")
        }
        if let u = until, (try? SimDuration(parsing: u)) == nil { throw ValidationError("--until: invalid duration \"\(u)\"") }
        var list = selection.seeds
        guard list.count <= 10_000_000 else { throw ValidationError("at most 10,000,000 seeds per sweep") }

        // The bank's seeds first.
        var bankStore: SeedBank?
        let digest = Digest64.hex(sc.digest)
        if let dir = bank {
            let b = (try? JSONDecoder().decode(SeedBank.self, from: Data(contentsOf: URL(fileURLWithPath: dir + "/bank.json")))) ?? SeedBank()
            let banked = b.seeds(scenario: sc.name, digest: digest, swarm: swarm || sc.swarm)
            if !banked.isEmpty {
                let set = Set(banked)
                list = banked + list.filter { !set.contains($0) }
                FileHandle.standardError.write(Data("bank: re-running \(banked.count) banked seed(s) first\n".utf8))
            }
            bankStore = b
        }

        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let resultsPath = out + "/results.jsonl"
        let partial = resultsPath + ".partial"
        _ = FileManager.default.createFile(atPath: partial, contents: nil)
        guard let resultsFile = FileHandle(forWritingAtPath: partial) else {
            throw ValidationError("cannot write \(partial)")
        }

        var workerArgs = ["sweep-worker", scenario]
        if swarm { workerArgs.append("--swarm") }
        if let bugs { workerArgs += ["--bugs", bugs] }
        if let u = until { workerArgs += ["--until", u] }
        let pool = try WorkerPool(count: min(jobs ?? ProcessInfo.processInfo.activeProcessorCount, max(1, list.count)),
                                  arguments: workerArgs)
        let progress = Progress(total: list.count)
        var next = 0
        var running = 0
        for w in 0..<pool.count where next < list.count {
            pool.send(seed: list[next], to: w); next += 1; running += 1
        }
        var failures = 0, errors = 0, done = 0
        var byOracle: [String: Int] = [:]
        var stoppedEarly = false
        let enc = JSONEncoder()
        enc.outputFormatting = [.sortedKeys]
        let start = Date()
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
                resultsFile.write(try enc.encode(r) + Data("\n".utf8))
                switch r.outcome {
                case .pass:
                    bankStore?.remove(scenario: sc.name, seed: r.seed)
                case .fail:
                    failures += 1
                    byOracle[r.oracle ?? "?", default: 0] += 1
                    progress.note("FAIL seed \(r.seed): \(r.oracle ?? "?") at event \(r.eventIndex ?? 0) (t=\(r.simTime ?? "?")) — \(r.detail ?? "")\n     repro: \(r.repro ?? "")")
                    bankStore?.add(SeedBank.Entry(scenario: sc.name, scenarioDigest: digest, seed: r.seed, oracle: r.oracle ?? "?",
                                                  simNanoseconds: r.simNanoseconds, swarm: swarm || sc.swarm))
                case .error:
                    errors += 1
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
        try resultsFile.close()
        if FileManager.default.fileExists(atPath: resultsPath) { try FileManager.default.removeItem(atPath: resultsPath) }
        try FileManager.default.moveItem(atPath: partial, toPath: resultsPath)
        if let dir = bank, let b = bankStore {
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            let e = JSONEncoder()
            e.outputFormatting = [.prettyPrinted, .sortedKeys]
            try e.encode(b).write(to: URL(fileURLWithPath: dir + "/bank.json"), options: .atomic)
        }
        let wall = Date().timeIntervalSince(start)
        let summary = Summary(scenario: sc.name, seedsRun: done, failures: failures, errors: errors, byOracle: byOracle,
                              wallSeconds: wall, seedsPerSecond: wall > 0 ? Double(done) / wall : 0,
                              results: resultsPath, stoppedEarly: stoppedEarly)
        if json {
            print(BenchFormat.json(summary))
        } else {
            print("sweep \(sc.name): \(done) seed(s), \(failures) failure(s), \(errors) error(s) in \(String(format: "%.1f", wall)) s (\(String(format: "%.2f", summary.seedsPerSecond)) seeds/s)")
            for o in byOracle.keys.sorted() { print("  \(o): \(byOracle[o]!)") }
            print("  results: \(resultsPath)")
        }
        if errors > 0 && failures == 0 { throw ExitCode(2) }
        if failures > 0 { throw ExitCode(1) }
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

    func run() throws {
        var (sc, _) = try Scenario.load(pathOrName: scenario)
        if swarm { sc.swarm = true }
        if let bugs { sc = try BugsOption.apply(bugs, to: sc) }
        let untilTime = try until.map { SimTime.zero + (try SimDuration(parsing: $0)) }
        let enc = JSONEncoder()
        enc.outputFormatting = [.sortedKeys]
        while let line = readLine() {
            guard let seed = UInt64(line.trimmingCharacters(in: .whitespaces)) else { continue }
            let result: SweepResult
            do {
                var opts = OracleOptions(scenarioArgument: scenario + (swarm ? " --swarm" : "") + BugsOption.reproSuffix(bugs))
                opts.stopAtFirstViolation = true
                let run = try ScenarioRun(scenario: sc, seed: seed, scenarioArgument: scenario, oracles: noOracles ? nil : opts)
                let (_, wall) = Stopwatch.time { run.run(until: untilTime) }
                result = SweepResult(seed: seed, run: run, wallSeconds: wall)
            } catch {
                result = SweepResult(seed: seed, outcome: .error, simNanoseconds: 0, events: 0, wallSeconds: 0, digest: "",
                                     detail: "\(error)")
            }
            FileHandle.standardOutput.write(try enc.encode(result) + Data("\n".utf8))
        }
    }
}
