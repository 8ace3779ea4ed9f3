import Benchmarks
import ArgumentParser
import Foundation
import IMSim

struct BenchKernel: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kernel",
        abstract: "Event-kernel throughput: nodes playing ping-pong with random delays and idle timers that are mostly cancelled.",
        discussion: """
            Prints events/s, ns/event and the determinism digest (the same for the same seed, \
            nodes and events on every machine). --vs-simpy runs the same workload in SimPy \
            (Tools/bench/simpy_pingpong.py; installs simpy from PyPI when missing) and prints the ratio.
            """
    )

    @Option(help: "Number of nodes.") var nodes = 1000
    @Option(help: "Events to dispatch per run (default 20,000,000; 1,000,000 with --quick).") var events: UInt64?
    @Option(help: "Run seed.") var seed: UInt64 = 1
    @Option(help: "Timed repetitions; the best is reported.") var repetitions: Int = 3
    @Flag(help: "Small run that only proves the build works (CI).") var quick = false
    @Flag(help: "Print JSON instead of text.") var json = false
    @Flag(name: .customLong("vs-simpy"), help: "Also run the SimPy baseline and print the ratio.") var vsSimpy = false
    @Option(help: "Events for the SimPy run (default 1,000,000; 200,000 with --quick).") var simpyEvents: UInt64?
    @Option(help: "Pending-event set: wheel (1024 buckets of 2^12 ns beside the heap, the default) or heap (one 4-ary heap). Same events in the same order either way.")
    var queue = "wheel"
    @Flag(name: .customLong("no-compare"), help: "Skip the run on the other queue layout.") var noCompare = false
    @Option(help: "Path to simpy_pingpong.py (default: found next to the sources or in ./Tools/bench).") var simpyScript: String?

    func validate() throws {
        guard nodes >= 2 else { throw ValidationError("--nodes must be at least 2") }
        guard repetitions >= 1 else { throw ValidationError("--repetitions must be at least 1") }
        if let e = events, e == 0 { throw ValidationError("--events must be positive") }
        guard queue == "wheel" || queue == "heap" else { throw ValidationError("--queue: wheel or heap") }
    }

    var layout: QueueLayout { queue == "heap" ? .heap : KernelBenchmark.wheel }
    var otherLayout: QueueLayout { queue == "heap" ? KernelBenchmark.wheel : .heap }

    struct Report: Codable {
        var benchmark = "kernel"
        var build: String
        var nodes: Int
        var events: UInt64
        var seed: UInt64
        var runs: [Double]
        var bestSeconds: Double
        var eventsPerSecond: Double
        var nsPerEvent: Double
        var digest: String
        var result: KernelBenchmark.Result
        var simpy: SimPyReport?
        var ratioVsSimPy: Double?
        var queue: QueueReport?
        var layout: String
        /// The same run on the other layout (same digest, checked): best seconds and the ratio.
        var otherLayout: String?
        var otherLayoutBestSeconds: Double?
        var speedupOverOtherLayout: Double?
    }

    /// Hold-model throughput of the kernel's queue vs swift-collections' Heap, same keys.
    struct QueueReport: Codable {
        var pending: Int
        var operations: Int
        var quaternaryHeapOpsPerSecond: Double
        var collectionsHeapOpsPerSecond: Double
        var ratio: Double
    }

    struct SimPyReport: Codable {
        var events: UInt64
        var seconds: Double
        var eventsPerSecond: Double
        var simpyVersion: String
    }

    func run() throws {
        BenchFormat.warnIfDebug()
        let n = events ?? (quick ? 1_000_000 : 20_000_000)
        let reps = quick ? 1 : repetitions
        var times: [Double] = []
        var last: KernelBenchmark.Result?
        if !json {
            print("imsim bench kernel — ping-pong + idle timers, \(nodes) nodes, \(n) events, seed \(seed), queue \(layout) (\(IMSimVersion.buildConfiguration) build)")
        }
        for r in 0..<reps {
            let (result, secs) = Stopwatch.time { KernelBenchmark.run(seed: seed, nodes: nodes, events: n, queue: layout) }
            if let l = last, l.digest != result.digest {
                throw ValidationError("nondeterminism: run \(r + 1) digest \(result.digest) != \(l.digest)")
            }
            last = result
            times.append(secs)
            if !json {
                print("  run \(r + 1): \(String(format: "%.3f", secs)) s  \(BenchFormat.rate(Double(n) / secs)) events/s  \(String(format: "%.1f", secs * 1e9 / Double(n))) ns/event")
            }
        }
        let best = times.min()!
        let result = last!
        var report = Report(
            build: IMSimVersion.buildConfiguration, nodes: nodes, events: n, seed: seed, runs: times,
            bestSeconds: best, eventsPerSecond: Double(n) / best, nsPerEvent: best * 1e9 / Double(n),
            digest: result.digest, result: result, layout: layout.description)
        if !quick && !noCompare {
            // The other layout on the same workload, interleaved with nothing else: same digest or fail.
            var otherBest = Double.infinity
            for _ in 0..<reps {
                let (o, secs) = Stopwatch.time { KernelBenchmark.run(seed: seed, nodes: nodes, events: n, queue: otherLayout) }
                guard o.digest == result.digest else {
                    throw ValidationError("the \(otherLayout) layout gave digest \(o.digest), the \(layout) layout \(result.digest)")
                }
                otherBest = min(otherBest, secs)
            }
            report.otherLayout = otherLayout.description
            report.otherLayoutBestSeconds = otherBest
            report.speedupOverOtherLayout = otherBest / best
        }
        if !quick {
            report.queue = compareQueues(pending: 2 * nodes, operations: Int(min(n, 5_000_000)))
        }
        if vsSimpy {
            let sp = try runSimPy(events: simpyEvents ?? (quick ? 200_000 : 1_000_000))
            report.simpy = sp
            report.ratioVsSimPy = report.eventsPerSecond / sp.eventsPerSecond
        }
        if json {
            print(BenchFormat.json(report))
            return
        }
        print("  best: \(BenchFormat.rate(report.eventsPerSecond)) events/s, \(String(format: "%.1f", report.nsPerEvent)) ns/event")
        print("  digest \(result.digest)  sim time \(result.finalTime)  max queue depth \(result.counters.maxQueueDepth)")
        print("  pings \(result.pingsSent)  timers cancelled \(result.counters.timersCancelled)  timers fired \(result.timeoutsFired)")
        if let o = report.otherLayout, let ob = report.otherLayoutBestSeconds, let sp = report.speedupOverOtherLayout {
            print("  \(o): best \(BenchFormat.rate(Double(n) / ob)) events/s, same digest; \(layout) is \(String(format: "%.2f", sp))× that")
        }
        if let q = report.queue {
            print("  queue (hold model, \(q.pending) pending): QuaternaryHeap \(BenchFormat.rate(q.quaternaryHeapOpsPerSecond)) ops/s, swift-collections Heap \(BenchFormat.rate(q.collectionsHeapOpsPerSecond)) ops/s (\(String(format: "%.2f", q.ratio))×)")
        }
        if let sp = report.simpy, let ratio = report.ratioVsSimPy {
            print("  SimPy \(sp.simpyVersion): \(sp.events) events in \(String(format: "%.3f", sp.seconds)) s  \(BenchFormat.rate(sp.eventsPerSecond)) events/s")
            print("  ratio: IMSim is \(String(format: "%.1f", ratio))× SimPy")
        }
    }

    private func compareQueues(pending: Int, operations: Int) -> QueueReport {
        let (a, ta) = Stopwatch.time { HoldBenchmark.quaternary(pending: pending, operations: operations, seed: seed) }
        let (b, tb) = Stopwatch.time { HoldBenchmark.collectionsHeap(pending: pending, operations: operations, seed: seed) }
        precondition(a == b, "the two heaps popped different keys")
        let qa = Double(operations) / ta, qb = Double(operations) / tb
        return QueueReport(pending: pending, operations: operations, quaternaryHeapOpsPerSecond: qa,
                           collectionsHeapOpsPerSecond: qb, ratio: qa / qb)
    }

    private func locateScript() throws -> String {
        var candidates: [String] = []
        if let s = simpyScript { candidates.append(s) }
        candidates.append(FileManager.default.currentDirectoryPath + "/Tools/bench/simpy_pingpong.py")
        // Next to the sources this binary was built from.
        let here = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        candidates.append(here.appendingPathComponent("bench/simpy_pingpong.py").path)
        for c in candidates where FileManager.default.fileExists(atPath: c) { return c }
        throw ValidationError("cannot find simpy_pingpong.py (tried: \(candidates.joined(separator: ", "))); pass --simpy-script")
    }

    private func runSimPy(events: UInt64) throws -> SimPyReport {
        let script = try locateScript()
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3", script, "--nodes", "\(nodes)", "--events", "\(events)", "--seed", "\(seed)", "--json"]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else {
            throw ValidationError("SimPy baseline failed (exit \(p.terminationStatus)); run: python3 \(script) --events 1000")
        }
        struct Raw: Codable { var events: UInt64; var seconds: Double; var events_per_s: Double; var simpy_version: String }
        let raw = try JSONDecoder().decode(Raw.self, from: data)
        return SimPyReport(events: raw.events, seconds: raw.seconds, eventsPerSecond: raw.events_per_s, simpyVersion: raw.simpy_version)
    }
}
