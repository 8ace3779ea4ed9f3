import ArgumentParser
import Foundation
import IMSim
import NIOCore
import NIOPosix

struct BenchRuntime: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "runtime",
        abstract: "Messages/s and latency through the real server on loopback (IMRuntime).",
        discussion: """
            One process: the server core on one event loop (thread), N client cores (in-memory \
            SQLite stores) on another — the 2 cores of the machine. Two runs: "throughput" (closed \
            loop, --window sends outstanding per client) and "latency" (open loop at --rate msgs/s). \
            Latency = send call → received callback on the peer. Private messages between random \
            pairs; the server's rate limit is off.
            """
    )

    @Option(help: "Number of clients.") var clients = 50
    @Option(help: "Length of each run.") var duration = "10s"
    @Option(help: "Closed loop: sends outstanding per client.") var window = 4
    @Option(help: "Open loop: messages per second for the latency run.") var rate: Double = 1000
    @Flag(help: "Small run that only proves the build works.") var quick = false
    @Flag(help: "Print JSON.") var json = false

    struct Figure: Codable {
        var run: String
        var report: LoadReport
    }

    struct Report: Codable {
        var benchmark = "runtime"
        var build: String
        var figures: [Figure]
    }

    func run() throws {
        BenchFormat.warnIfDebug()
        let n = quick ? min(clients, 10) : clients
        let length = quick ? SimDuration.seconds(1) : try RuntimeCLI.duration(duration, option: "--duration")
        let serverGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let clientGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer {
            try? clientGroup.syncShutdownGracefully()
            try? serverGroup.syncShutdownGracefully()
        }
        var so = RuntimeServerOptions()
        // Each run has its own users: a fresh client store would otherwise pull the other run's messages.
        so.users = (1...n).map { LoadOptions.userId($0, prefix: "t") } + (1...n).map { LoadOptions.userId($0, prefix: "l") }
        so.config.rateLimitPerSecond = 0
        let server = try RuntimeServer.start(so, group: serverGroup).wait()
        if !json { print("imsim bench runtime — \(n) clients, \(length) per run (\(IMSimVersion.buildConfiguration) build)") }
        var figures: [Figure] = []
        for (name, workload) in [("throughput", LoadOptions.Workload.window(window)), ("latency", .rate(perSecond: quick ? 100 : rate))] {
            var o = LoadOptions(server: try SocketAddress(ipAddress: "127.0.0.1", port: server.port))
            o.clients = n
            o.duration = length
            o.workload = workload
            o.userPrefix = name == "throughput" ? "t" : "l"
            let r = try LoadGenerator.run(o, group: clientGroup).wait()
            figures.append(Figure(run: name, report: r))
            if !json {
                let what = if case .window(let w) = workload { "closed loop, window \(w)" } else { "open loop, \(Int(quick ? 100 : rate)) msgs/s offered" }
                print("\(name) (\(what)):")
                print(LoadgenCommand.text(r).split(separator: "\n").map { "  " + $0 }.joined(separator: "\n"))
            }
        }
        try server.shutdown().wait()
        if json { print(BenchFormat.json(Report(build: IMSimVersion.buildConfiguration, figures: figures))) }
    }
}
