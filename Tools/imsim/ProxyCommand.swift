import ArgumentParser
import Foundation
import IMSim
import NIOCore
import NIOPosix

struct ProxyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "proxy",
        abstract: "A fault proxy between clients and the server: delays, resets, black-holes (loopback).",
        discussion: """
            Every client connection to --listen gets its own connection to --to. --delay/--jitter \
            delay each chunk (order kept); --reset-rate resets connections (RST both ways) at random, \
            per connection; --blackhole-every/--blackhole-for stop forwarding for a window without \
            closing anything: mode "hold" (a partition: bytes arrive after the window) or "drop" \
            (half-open: connections caught in the window never carry a byte again). Randomness is \
            seeded by --seed. Runs until SIGINT/SIGTERM or --for.
            """
    )

    @Option(help: "Port to listen on (0 = any free port).") var listen: Int
    @Option(help: "Address to listen on.") var host = "127.0.0.1"
    @Option(help: "The server, HOST:PORT.") var to: String
    @Option(help: "One-way delay per chunk, e.g. 50ms.") var delay = "0ms"
    @Option(help: "Delay varies uniformly by ± this.") var jitter = "0ms"
    @Option(help: "Resets per connection, e.g. 0.01/s.") var resetRate: String?
    @Option(help: "Start a black-hole window this often, e.g. 60s.") var blackholeEvery: String?
    @Option(help: "Length of a black-hole window.") var blackholeFor = "10s"
    @Option(help: "hold (partition) or drop (half-open).") var blackholeMode = "hold"
    @Option(help: "Seed of the proxy's randomness.") var seed: UInt64 = 1
    @Option(name: .customLong("for"), help: "Stop after this long.") var runFor: String?
    @Flag(help: "Print every fault.") var verbose = false

    func run() throws {
        var o = FaultProxyOptions(target: try RuntimeCLI.address(to, option: "--to"))
        o.listenHost = host
        o.listenPort = listen
        o.delay = try RuntimeCLI.duration(delay, option: "--delay")
        o.jitter = try RuntimeCLI.duration(jitter, option: "--jitter")
        o.resetRatePerSecond = try resetRate.map { try RuntimeCLI.ratePerSecond($0, option: "--reset-rate") } ?? 0
        o.blackholeEvery = try blackholeEvery.map { try RuntimeCLI.duration($0, option: "--blackhole-every") }
        o.blackholeFor = try RuntimeCLI.duration(blackholeFor, option: "--blackhole-for")
        guard let mode = BlackholeMode(rawValue: blackholeMode) else { throw ValidationError("--blackhole-mode must be hold or drop") }
        o.blackholeMode = mode
        o.seed = seed
        let verbose = self.verbose
        o.log = { line in if verbose || line.hasPrefix("proxy listening") { RuntimeCLI.printLine(line) } }
        let limit = try runFor.map { try RuntimeCLI.duration($0, option: "--for") }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let proxy = try FaultProxy.start(o, group: group).wait()
        RuntimeCLI.waitForStop(limit: limit)
        let s = try proxy.stats().wait()
        try proxy.shutdown().wait()
        RuntimeCLI.printLine("stopped: \(s.accepted) connections, \(s.resets) resets, \(s.blackholes) black-holes (\(s.halfOpened) half-open), \(s.bytesToServer) bytes to the server, \(s.bytesToClients) to clients, \(s.bytesDropped) dropped")
    }
}
