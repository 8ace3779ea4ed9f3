import Benchmarks
import ArgumentParser
import Foundation
import IMSim

struct BenchStore: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store",
        abstract: "Message-store throughput: received-message inserts/s against the raw SQLite floor.",
        discussion: """
            Three runs over the same messages and schema, each on a fresh database: the raw floor \
            (one prepared INSERT, all rows in one transaction), storeReceived per message (dedup \
            lookup + insert + conversation update, one transaction each, as the client does it), \
            and storeReceived in batches (one transaction per batch). Prints rates and the ratios \
            to the floor (goal: at least 50%). --file runs on a WAL-mode file instead of :memory:; \
            --device on a simulated device disk (the storage-fault VFS, WAL, synchronous=NORMAL, \
            issue 28): compare its rates with a :memory: run for the VFS's cost.
            """
    )

    @Option(help: "Messages per run (default 200,000; 20,000 with --quick).") var messages: Int?
    @Option(help: "Conversations the messages are spread over.") var conversations = 100
    @Option(help: "Messages per transaction in the batched run.") var batch = 100
    @Option(help: "Timed repetitions of each run; the best is reported.") var repetitions = 3
    @Option(help: "Run on this database file (WAL) instead of :memory:; it must not exist and is removed afterwards.") var file: String?
    @Flag(help: "Run on a simulated device disk (the storage-fault VFS, as `client.store: device`) instead of :memory:.") var device = false
    @Option(help: .hidden) var only: Int?  // run just variant 0 (raw), 1 (per message) or 2 (batched), for profiling
    @Flag(help: "Small run that only proves the build works (CI).") var quick = false
    @Flag(help: "Print JSON instead of text.") var json = false

    func validate() throws {
        if let m = messages, m <= 0 { throw ValidationError("--messages must be positive") }
        guard conversations >= 1 else { throw ValidationError("--conversations must be at least 1") }
        guard batch >= 1 else { throw ValidationError("--batch must be at least 1") }
        guard repetitions >= 1 else { throw ValidationError("--repetitions must be at least 1") }
        if device, file != nil { throw ValidationError("--device and --file exclude each other") }
        if let f = file {
            for p in [f, f + "-wal", f + "-shm"] where FileManager.default.fileExists(atPath: p) {
                throw ValidationError("--file \(f): \(p) exists; the benchmark creates and deletes its own file")
            }
        }
    }

    struct Run: Codable {
        var name: String
        var messages: Int
        var transactions: Int
        /// Wall-clock seconds per repetition.
        var seconds: [Double]
        /// Thread CPU seconds per repetition (less sensitive to noisy neighbours).
        var cpuSeconds: [Double]
        var bestSeconds: Double
        var perSecond: Double
        var cpuPerSecond: Double
        var ratioToRawFloor: Double
        var cpuRatioToRawFloor: Double
    }

    struct Report: Codable {
        var benchmark = "store"
        var build: String
        var database: String
        var sqliteVersion: String
        var messages: Int
        var conversations: Int
        var batch: Int
        var repetitions: Int
        var runs: [Run]
        var goalRatio = 0.5
    }

    func run() throws {
        BenchFormat.warnIfDebug()
        let n = messages ?? (quick ? 20_000 : 200_000)
        let reps = quick ? 1 : repetitions
        let input = StoreBenchmark.messages(count: n, conversations: conversations)
        let place = file.map { "\($0) (WAL, synchronous=NORMAL)" } ?? (device ? "simulated device disk (VFS, WAL, synchronous=NORMAL)" : ":memory:")
        if !json {
            print("imsim bench store — \(n) received messages over \(conversations) conversations, \(place), best of \(reps) (\(IMSimVersion.buildConfiguration) build, SQLite \(SQLiteInfo.version))")
        }
        typealias Variant = (name: String, transactions: Int, work: (IMStore) throws -> Void)
        let variants: [Variant] = [
            ("raw floor: 1 prepared INSERT, 1 transaction", 1, { try StoreBenchmark.rawFloor($0, input) }),
            ("storeReceived, 1 transaction per message", n, { _ = try StoreBenchmark.perMessage($0, input) }),
            ("storeReceived, \(batch) per transaction", (n + batch - 1) / batch,
             { _ = try StoreBenchmark.batched($0, input, batchSize: batch) }),
        ]
        // Repetitions interleave the variants, so a burst of load from a neighbour hits all alike.
        var wall = Array(repeating: [Double](), count: variants.count)
        var cpu = wall
        for _ in 0..<reps {
            for (i, v) in variants.enumerated() {
                if let only, only != i {
                    wall[i].append(1); cpu[i].append(1)
                    continue
                }
                removeFiles()
                let store = try device ? IMStore(location: .device(SimDisk(seed: 1))) : file.map { try IMStore.file($0) } ?? IMStore.inMemory()
                let c0 = CPUClock.threadSeconds()
                let (_, secs) = try Stopwatch.time { try v.work(store) }
                cpu[i].append(CPUClock.threadSeconds() - c0)
                wall[i].append(secs)
                let stored = try store.totalMessageCount()
                guard stored == n else { throw ValidationError("\(v.name) stored \(stored) rows, expected \(n)") }
                store.close()
            }
        }
        removeFiles()
        let floorWall = Double(n) / wall[0].min()!, floorCPU = Double(n) / cpu[0].min()!
        let runs = variants.indices.map { i in
            let best = wall[i].min()!, bestCPU = cpu[i].min()!
            return Run(name: variants[i].name, messages: n, transactions: variants[i].transactions, seconds: wall[i],
                       cpuSeconds: cpu[i], bestSeconds: best, perSecond: Double(n) / best, cpuPerSecond: Double(n) / bestCPU,
                       ratioToRawFloor: Double(n) / best / floorWall, cpuRatioToRawFloor: Double(n) / bestCPU / floorCPU)
        }
        let report = Report(build: IMSimVersion.buildConfiguration, database: device ? "device (VFS)" : file == nil ? ":memory:" : "file (WAL)",
                            sqliteVersion: SQLiteInfo.version, messages: n, conversations: conversations, batch: batch,
                            repetitions: reps, runs: runs)
        if json {
            print(BenchFormat.json(report))
            return
        }
        print("  \("".padding(toLength: 46, withPad: " ", startingAt: 0))    wall msgs/s  µs/msg  vs floor   |  cpu msgs/s  vs floor")
        for r in runs {
            let name = r.name.padding(toLength: 46, withPad: " ", startingAt: 0)
            print("  \(name) \(BenchFormat.rate(r.perSecond).leftPad(12))  \(String(format: "%6.2f", 1e6 / r.perSecond))  \(String(format: "%6.1f", r.ratioToRawFloor * 100))%   | \(BenchFormat.rate(r.cpuPerSecond).leftPad(11))  \(String(format: "%6.1f", r.cpuRatioToRawFloor * 100))%")
        }
        print("  goal: ≥ 50% of the raw floor")
    }

    private func removeFiles() {
        guard let f = file else { return }
        for p in [f, f + "-wal", f + "-shm"] { try? FileManager.default.removeItem(atPath: p) }
    }
}

extension String {
    fileprivate func leftPad(_ n: Int) -> String {
        count >= n ? self : String(repeating: " ", count: n - count) + self
    }
}

/// Thread CPU time: on a shared 2-core VM it moves less with the neighbours' load than wall time.
enum CPUClock {
    /// CPU time of the calling thread.
    static func threadSeconds() -> Double { seconds(CLOCK_THREAD_CPUTIME_ID) }
    /// CPU time of every thread of the process (a trace writer's thread included).
    static func processSeconds() -> Double { seconds(CLOCK_PROCESS_CPUTIME_ID) }

    private static func seconds(_ clock: clockid_t) -> Double {
        var ts = timespec()
        clock_gettime(clock, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
