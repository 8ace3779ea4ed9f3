import ArgumentParser
import Foundation
import IMSim
import NIOCore
import NIOPosix

struct LoadgenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "loadgen",
        abstract: "N real clients in one process send private messages through a server for a bounded time.",
        discussion: """
            Users are <prefix>0001…<prefix>N: start the server with `imsim serve --generate-users N \
            --rate-limit 0` (the spec's 5 sends/s per connection would refuse a heavy load). --rate \
            is messages per second in all (exponential gaps, seeded); --window W instead keeps W \
            sends outstanding per client (throughput). Latency = send call → received callback on \
            the peer.
            """
    )

    @Option(help: "The server (or proxy), HOST:PORT.") var server: String
    @Option(help: "Number of clients.") var clients = 10
    @Option(help: "How long to send.") var duration = "30s"
    @Option(help: "Messages per second, all clients together.") var rate: Double = 50
    @Option(help: "Closed loop: sends outstanding per client (overrides --rate).") var window: Int?
    @Option(help: "Prefix of the user ids.") var userPrefix = "u"
    @Option(help: "Seed of the workload's randomness.") var seed: UInt64 = 1
    @Option(help: "Record every client's capture as DIR/<user>.jsonl.") var captureDir: String?
    @Flag(help: "Print JSON.") var json = false
    @Option(help: "The server's secret file (imsim serve --secret): clients log in with signed tokens.") var secret: String?

    func validate() throws {
        guard (2...10_000).contains(clients) else { throw ValidationError("--clients must be 2…10000") }
        guard rate > 0, rate.isFinite else { throw ValidationError("--rate must be positive") }
        if let w = window, !(1...1000).contains(w) { throw ValidationError("--window must be 1…1000") }
    }

    func run() throws {
        var o = LoadOptions(server: try RuntimeCLI.address(server, option: "--server"))
        o.clients = clients
        o.duration = try RuntimeCLI.duration(duration, option: "--duration")
        o.workload = window.map { .window($0) } ?? .rate(perSecond: rate)
        o.userPrefix = userPrefix
        o.seed = seed
        o.captureDir = captureDir
        if let secret {
            do { o.tokenSecret = try RuntimeTokens.readSecret(path: secret) } catch { throw ValidationError("--secret: \(error)") }
        }
        let json = self.json
        o.log = { line in if !json { RuntimeCLI.printLine(line) } }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let r = try LoadGenerator.run(o, group: group).wait()
        if json { print(BenchFormat.json(r)); return }
        print(LoadgenCommand.text(r))
        if r.connected < r.clients { throw ExitCode(1) }
    }

    static func text(_ r: LoadReport) -> String {
        """
        clients \(r.connected)/\(r.clients) connected, \(String(format: "%.1f", r.seconds)) s
        sent \(r.sent) (ok \(r.sendOk), failed \(r.sendFailed)), received \(r.received) (\(r.duplicates) duplicates), \(r.reconnects) reconnects
        \(BenchFormat.rate(r.messagesPerSecond)) msgs/s; latency p50 \(String(format: "%.2f", r.latencyP50Ms)) ms, p99 \(String(format: "%.2f", r.latencyP99Ms)) ms, max \(String(format: "%.2f", r.latencyMaxMs)) ms
        send → PUBACK p50 \(String(format: "%.2f", r.ackP50Ms)) ms, p99 \(String(format: "%.2f", r.ackP99Ms)) ms
        """
    }
}
