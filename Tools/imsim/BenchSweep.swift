import ArgumentParser
import Foundation
import IMSim

/// `imsim bench sweep [SCENARIO …]`: how many seeds an hour one core gets through in a sweep —
/// the figure that says how far `imsim sweep` can search in a CI budget or overnight.
struct BenchSweep: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sweep",
        abstract: "Seeds/hour/core of a seed sweep (default: quickstart and chatroom-storm), with and without the oracles.",
        discussion: """
            Runs --seeds seeds of each scenario (whole runs, liveness phase included, unless --until) \
            through the code path of `imsim sweep`: --jobs worker processes (`imsim sweep-worker`), one \
            seed per request, each run single-threaded. Reports seeds/hour/core from wall time \
            (seeds × 3600 / (wall × jobs)) and from CPU time (seeds × 3600 / the workers' CPU seconds, \
            steadier on a shared machine), wall and CPU per seed, and the mean simulated time and \
            events per seed. Wall time covers the whole sweep, process start and scenario load included; \
            CPU time is the worker processes' user + system time (getrusage of the reaped children); \
            faults/seed their minor page faults per seed. \
            Oracles: both (without, then with), on, off. Use a release build.
            --engine slurm (Slurm running, SLURM_CONF set): --seeds seeds (default 200) of each scenario \
            (default quickstart) first as a local `imsim sweep` on every core, then as a Slurm job array \
            of one-core tasks of --block seeds (throttle = cores); reports seeds/hour/core of both, \
            their ratio and the scheduling overhead per task, and checks the results are identical.
            """
    )

    enum OracleMode: String, ExpressibleByArgument, CaseIterable {
        case both, on, off
    }

    @Argument(help: "Scenario names or files (default: quickstart chatroom-storm).") var scenarios: [String] = []
    @Option(help: "Seeds per scenario and mode (1..N; default: 40 for quickstart, 4 otherwise).") var seeds: Int?
    @Option(help: "Worker processes.") var jobs = 1
    @Option(help: "Simulated-time limit per run (default: the whole scenario).") var until: String?
    @Option(help: "Oracles: both (without, then with), on, off.") var oracles: OracleMode = .both
    @Flag(help: "Print JSON instead of a table.") var json = false
    @Option(help: "local (worker processes here) or slurm: the same seeds through a local sweep and a Slurm job array.") var engine = "local"
    @Option(help: "--engine slurm: seeds per array task (comma list for several runs, e.g. 1,50).") var block = "50"

    func validate() throws {
        if let s = seeds, s < 1 { throw ValidationError("--seeds must be at least 1") }
        guard jobs >= 1 else { throw ValidationError("--jobs must be at least 1") }
        if let u = until, (try? SimDuration(parsing: u)) == nil { throw ValidationError("--until: invalid duration \"\(u)\"") }
    }

    struct Figures: Codable {
        var scenario: String
        var oracles: Bool
        var seeds: Int
        var jobs: Int
        var failures: Int
        var errors: Int
        var wallSeconds: Double
        var cpuSeconds: Double
        var seedsPerHourPerCore: Double
        var seedsPerHourPerCoreCPU: Double
        /// Whole-sweep wall × jobs / seeds (what one seed costs a core, process overhead included).
        var wallSecondsPerSeed: Double
        var cpuSecondsPerSeed: Double
        /// Mean of the workers' own timing of each run (the run alone).
        var runWallSecondsPerSeed: Double
        var simulatedSecondsPerSeed: Double
        var eventsPerSeed: Double
        /// The workers' minor page faults per seed (getrusage of the reaped children): memory the
        /// allocator gave back and a later seed touched again.
        var minorFaultsPerSeed: Double
    }

    struct Report: Codable {
        var benchmark = "sweep"
        var build: String
        var until: String?
        var cores: Int
        var results: [Figures]
    }

    func run() throws {
        BenchFormat.warnIfDebug()
        guard engine == "local" || engine == "slurm" else { throw ValidationError("--engine: local or slurm") }
        if engine == "slurm" { return try runSlurm() }
        let names = scenarios.isEmpty ? ["quickstart", "chatroom-storm"] : scenarios
        for n in names {
            do { _ = try Scenario.load(pathOrName: n) } catch {
                FileHandle.standardError.write(Data("imsim: \(n): \(error)\n".utf8))
                throw ExitCode(2)
            }
        }
        let modes: [Bool] = switch oracles {
        case .both: [false, true]
        case .on: [true]
        case .off: [false]
        }
        var results: [Figures] = []
        if !json { print(Self.header) }
        for name in names {
            let n = seeds ?? (name == "quickstart" ? 40 : 4)
            for withOracles in modes {
                let f = try measure(name, seeds: n, oracles: withOracles)
                results.append(f)
                if !json { print(Self.row(f)) }
            }
        }
        if json {
            print(BenchFormat.json(Report(build: IMSimVersion.buildConfiguration, until: until,
                                          cores: ProcessInfo.processInfo.activeProcessorCount, results: results)))
        } else {
            print("\(IMSimVersion.buildConfiguration) build, \(jobs) worker process(es), \(ProcessInfo.processInfo.activeProcessorCount) cores" +
                  (until.map { ", runs cut at \($0)" } ?? ", whole runs (liveness phase included)"))
        }
    }

    /// One sweep of seeds 1...n, as `imsim sweep` runs it.
    func measure(_ scenario: String, seeds n: Int, oracles: Bool) throws -> Figures {
        var args = ["sweep-worker", scenario]
        if let u = until { args += ["--until", u] }
        if !oracles { args.append("--no-oracles") }
        let cpu0 = Self.childrenCPUSeconds()
        let faults0 = Self.childrenMinorFaults()
        let clock = ContinuousClock()
        let start = clock.now
        let pool = try WorkerPool(count: min(jobs, n), arguments: args)
        var next: UInt64 = 1
        var running = 0
        for w in 0..<pool.count {
            pool.send(seed: next, to: w); next += 1; running += 1
        }
        var failures = 0, errors = 0
        var runWall = 0.0, sim = 0.0, events = 0.0
        while running > 0 {
            let (w, line) = pool.nextLine()
            running -= 1
            if let line, let r = try? JSONDecoder().decode(SweepResult.self, from: Data(line.utf8)) {
                switch r.outcome {
                case .pass: break
                case .fail: failures += 1
                case .error: errors += 1
                }
                runWall += r.wallSeconds
                sim += Double(r.simNanoseconds) / 1e9
                events += Double(r.events)
            } else {
                errors += 1
                if line == nil { continue }   // the worker died: no more requests to it
            }
            if next <= UInt64(n) {
                pool.send(seed: next, to: w); next += 1; running += 1
            }
        }
        pool.finish(kill: false)
        let d = clock.now - start
        let wall = Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
        let cpu = Self.childrenCPUSeconds() - cpu0
        let faults = Self.childrenMinorFaults() - faults0
        let seedsRun = Double(n)
        return Figures(
            scenario: scenario, oracles: oracles, seeds: n, jobs: pool.count, failures: failures, errors: errors,
            wallSeconds: wall, cpuSeconds: cpu,
            seedsPerHourPerCore: seedsRun * 3600 / (wall * Double(pool.count)),
            seedsPerHourPerCoreCPU: cpu > 0 ? seedsRun * 3600 / cpu : 0,
            wallSecondsPerSeed: wall * Double(pool.count) / seedsRun, cpuSecondsPerSeed: cpu / seedsRun,
            runWallSecondsPerSeed: runWall / seedsRun, simulatedSecondsPerSeed: sim / seedsRun, eventsPerSeed: events / seedsRun,
            minorFaultsPerSeed: Double(faults) / seedsRun)
    }

    /// User + system CPU seconds of this process's terminated, reaped children.
    static func childrenCPUSeconds() -> Double {
        var u = rusage()
        getrusage(RUSAGE_CHILDREN.rawValue, &u)
        func s(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        return s(u.ru_utime) + s(u.ru_stime)
    }

    /// Minor page faults of this process's terminated, reaped children.
    static func childrenMinorFaults() -> Int {
        var u = rusage()
        getrusage(RUSAGE_CHILDREN.rawValue, &u)
        return u.ru_minflt
    }

    static let header = "scenario         oracles  seeds  fail  seeds/h/core (wall)  (CPU)   wall/seed  CPU/seed  run/seed  sim/seed  events/seed  faults/seed"

    static func row(_ f: Figures) -> String {
        func pad(_ s: String, _ n: Int, left: Bool = false) -> String {
            s.count >= n ? s : (left ? String(repeating: " ", count: n - s.count) + s : s + String(repeating: " ", count: n - s.count))
        }
        return pad(f.scenario, 16) + " " + pad(f.oracles ? "on" : "off", 7) + " " + pad("\(f.seeds)", 6, left: true)
            + " " + pad("\(f.failures + f.errors)", 5, left: true)
            + " " + pad(String(format: "%.0f", f.seedsPerHourPerCore), 20, left: true)
            + " " + pad(String(format: "%.0f", f.seedsPerHourPerCoreCPU), 7, left: true)
            + " " + pad(String(format: "%.3f s", f.wallSecondsPerSeed), 10, left: true)
            + " " + pad(String(format: "%.3f s", f.cpuSecondsPerSeed), 9, left: true)
            + " " + pad(String(format: "%.3f s", f.runWallSecondsPerSeed), 9, left: true)
            + " " + pad(String(format: "%.0f s", f.simulatedSecondsPerSeed), 9, left: true)
            + " " + pad(String(format: "%.0f", f.eventsPerSeed), 12, left: true)
            + " " + pad(String(format: "%.0f", f.minorFaultsPerSeed), 12, left: true)
    }
}
