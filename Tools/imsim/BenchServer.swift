import Benchmarks
import ArgumentParser
import Foundation
import IMSim

struct BenchServer: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "server",
        abstract: "IMServer throughput: accepts and fan-outs per second.",
        discussion: """
            Workloads (ServerBenchmark in Sources/IMServer): "private" = 1,000 online users, \
            private messages between random pairs; "group" = 10 groups of 100 online members; \
            "chatroom" = one room of 500 joined members, one message per 5 ms; "pull" = one user \
            pulls the messages it got while offline, in pages of 50. The core is fed pre-encoded \
            client frames; events (the trace facts) are produced as in a real run. msgs/s counts \
            client messages (or pulled messages for "pull"), fan-outs/s the writes of a message \
            to a recipient session.
            """
    )

    @Option(help: "Messages per workload (default 200,000; 10,000 with --quick).") var messages: Int?
    @Option(help: "Timed repetitions; the best is reported.") var repetitions = 3
    @Flag(help: "Small run that only proves the build works (CI).") var quick = false
    @Flag(help: "Print JSON instead of text.") var json = false
    @Option(help: "Run only this workload (private, group, chatroom, pull).") var workload: String?

    struct Figure: Codable {
        var workload: String
        var messages: Int
        var bestSeconds: Double
        var messagesPerSecond: Double
        var fanOutsPerSecond: Double
        var effectsPerSecond: Double
        var microsecondsPerMessage: Double
        /// Thread CPU time per message (less sensitive to a loaded machine than wall time).
        var cpuMicrosecondsPerMessage: Double
        var fanOutsPerMessage: Double
        var checksum: UInt64
    }

    struct Report: Codable {
        var benchmark = "server"
        var build: String
        var figures: [Figure]
    }

    func validate() throws {
        guard repetitions >= 1 else { throw ValidationError("--repetitions must be at least 1") }
        if let m = messages, m < 1 { throw ValidationError("--messages must be positive") }
        if let w = workload, ServerBenchmark.Workload(rawValue: w) == nil {
            throw ValidationError("--workload must be one of: \(ServerBenchmark.Workload.allCases.map(\.rawValue).joined(separator: ", "))")
        }
    }

    func run() throws {
        BenchFormat.warnIfDebug()
        let n = messages ?? (quick ? 10_000 : 200_000)
        let reps = quick ? 1 : repetitions
        if !json { print("imsim bench server — best of \(reps) (\(IMSimVersion.buildConfiguration) build)") }
        var figures: [Figure] = []
        for w in ServerBenchmark.Workload.allCases where workload == nil || workload == w.rawValue {
            // Fan-out heavy workloads get fewer messages so each takes a similar time.
            let count = w == .chatroom ? max(1, n / 50) : (w == .group ? max(1, n / 10) : n)
            let prepared = ServerBenchmark.prepare(w, messages: count)
            var best = Double.infinity
            var bestCPU = Double.infinity
            var last: ServerBenchmark.Result?
            for _ in 0..<reps {
                let cpu0 = Self.threadCPUSeconds()
                let (r, secs) = Stopwatch.time { ServerBenchmark.run(prepared) }
                bestCPU = min(bestCPU, Self.threadCPUSeconds() - cpu0)
                if let l = last, l != r { throw ValidationError("nondeterminism in \(w.rawValue): \(r) != \(l)") }
                last = r
                best = min(best, secs)
            }
            let r = last!
            let msgs = w == .pull ? r.pulled : count
            let fig = Figure(workload: w.rawValue, messages: msgs, bestSeconds: best, messagesPerSecond: Double(msgs) / best,
                             fanOutsPerSecond: Double(r.fanOuts) / best, effectsPerSecond: Double(r.effects) / best,
                             microsecondsPerMessage: best * 1e6 / Double(msgs), cpuMicrosecondsPerMessage: bestCPU * 1e6 / Double(msgs),
                             fanOutsPerMessage: Double(r.fanOuts) / Double(msgs),
                             checksum: r.checksum)
            figures.append(fig)
            if !json {
                let pad = w.rawValue.padding(toLength: 9, withPad: " ", startingAt: 0)
                print("  \(pad) \(BenchFormat.rate(fig.messagesPerSecond)) msgs/s  \(BenchFormat.rate(fig.fanOutsPerSecond)) fan-outs/s  \(BenchFormat.rate(fig.effectsPerSecond)) effects/s  \(String(format: "%7.2f", fig.microsecondsPerMessage)) µs/msg (cpu \(String(format: "%.2f", fig.cpuMicrosecondsPerMessage)))  (\(String(format: "%.0f", fig.fanOutsPerMessage)) fan-outs/msg)")
            }
        }
        if json { print(BenchFormat.json(Report(build: IMSimVersion.buildConfiguration, figures: figures))) }
    }

    static func threadCPUSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
