import Benchmarks
import ArgumentParser
import Foundation
import IMSim

struct BenchClient: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "client",
        abstract: "Client core receive path: messages/s through ClientCore against the store's own per-message cost.",
        discussion: """
            Feeds a connected, in-sync ClientCore pre-encoded server bytes: direct deliveries \
            (s_msg, one transaction and one PUBACK per message) and pull pages (one transaction and \
            one QUERYCON per page). The baseline is IMStore.storeReceived per message on the same \
            messages (the SQLite floor of the direct path): the ratio shows what the core adds.
            """
    )

    @Option(help: "Messages per run (default 50,000; 5,000 with --quick).") var messages: Int?
    @Option(help: "Conversations the messages are spread over.") var conversations = 100
    @Option(help: "Messages per pull page.") var page = 50
    @Option(help: "Timed repetitions of each run; the best is reported.") var repetitions = 3
    @Flag(help: "Small run that only proves the build works (CI).") var quick = false
    @Flag(help: "Print JSON instead of text.") var json = false

    func validate() throws {
        if let m = messages, m <= 0 { throw ValidationError("--messages must be positive") }
        guard conversations >= 1 else { throw ValidationError("--conversations must be at least 1") }
        guard page >= 1 else { throw ValidationError("--page must be at least 1") }
        guard repetitions >= 1 else { throw ValidationError("--repetitions must be at least 1") }
    }

    struct Run: Codable {
        var name: String
        var messages: Int
        var bestSeconds: Double
        var perSecond: Double
        var ratioToStoreFloor: Double
    }

    struct Report: Codable {
        var benchmark = "client"
        var build: String
        var messages: Int
        var conversations: Int
        var pageSize: Int
        var runs: [Run]
    }

    func run() throws {
        BenchFormat.warnIfDebug()
        let n = messages ?? (quick ? 5_000 : 50_000)
        let reps = quick ? 1 : repetitions

        func best(_ body: () throws -> Int) throws -> Double {
            var bestTime = Double.infinity
            for _ in 0..<reps {
                let (done, secs) = try Stopwatch.time(body)
                guard done == n else { throw ValidationError("benchmark delivered \(done) of \(n) messages") }
                bestTime = min(bestTime, secs)
            }
            return bestTime
        }

        let stored = StoreBenchmark.messages(count: n, conversations: conversations)
        let floor = try best { try StoreBenchmark.perMessage(try IMStore.inMemory(), stored) }
        let direct = try ClientBenchmark.directDeliveries(count: n, conversations: conversations)
        let directTime = try best {
            var core = try ClientBenchmark.connectedCore()
            return ClientBenchmark.run(&core, direct)
        }
        let pages = try ClientBenchmark.pullPages(count: n, conversations: conversations, pageSize: page, firstQueryId: 2)
        let pullTime = try best {
            var core = try ClientBenchmark.connectedCore()
            return ClientBenchmark.run(&core, pages)
        }
        let floorRate = Double(n) / floor
        let runs = [
            Run(name: "store floor (storeReceived per message)", messages: n, bestSeconds: floor, perSecond: floorRate, ratioToStoreFloor: 1),
            Run(name: "ClientCore s_msg (direct delivery)", messages: n, bestSeconds: directTime,
                perSecond: Double(n) / directTime, ratioToStoreFloor: (Double(n) / directTime) / floorRate),
            Run(name: "ClientCore pull pages of \(page)", messages: n, bestSeconds: pullTime,
                perSecond: Double(n) / pullTime, ratioToStoreFloor: (Double(n) / pullTime) / floorRate),
        ]
        if json {
            print(BenchFormat.json(Report(build: IMSimVersion.buildConfiguration, messages: n, conversations: conversations,
                                          pageSize: page, runs: runs)))
            return
        }
        print("client receive path: \(n) messages over \(conversations) conversations (\(IMSimVersion.buildConfiguration) build, best of \(reps))")
        for r in runs {
            print("  \(r.name.padding(toLength: 42, withPad: " ", startingAt: 0)) \(BenchFormat.rate(r.perSecond).padding(toLength: 8, withPad: " ", startingAt: 0)) msg/s  \(String(format: "%.2f", r.ratioToStoreFloor))× store floor")
        }
    }
}
