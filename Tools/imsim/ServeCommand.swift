import ArgumentParser
import Foundation
import IMSim
import NIOCore
import NIOPosix

struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the real server core over TCP (SwiftNIO, one event loop, real clock).",
        discussion: """
            With --secret FILE users log in only with tokens signed by that secret (HMAC-SHA256 over \
            user id and expiry; `imsim token USER --secret FILE` prints one): an expired token is \
            refused with CONNACK 10 (31020), any other bad token with CONNACK 4 (31004). Without \
            --secret the insecure fixed token "token-<userId>" is accepted (anyone can log in as \
            anyone; a warning says so). Listens on loopback \
            by default; prints "listening on HOST:PORT" (with --port 0, the port chosen). Runs until \
            SIGINT/SIGTERM or --for. See Docs/runtime.md.
            """
    )

    @Option(help: "Port to listen on (0 = any free port).") var port: Int
    @Option(help: "Address to listen on.") var host = "127.0.0.1"
    @Option(help: "Users: a file (one id per line, or a JSON array) or a comma-separated list.") var users: String?
    @Option(help: "Also create users <prefix>0001…<prefix>N (the loadgen's users).") var generateUsers = 0
    @Option(help: "Prefix of generated users.") var userPrefix = "u"
    @Option(help: "Write server events as JSONL to this file.") var events: String?
    @Option(help: "Write the connections' traffic as a pcapng capture (open with Tools/wireshark/rmtp.lua; written at stop).") var pcap: String?
    @Option(help: "Sends per second per connection (the spec's 5; 0 = unlimited, e.g. for loadgen).") var rateLimit = 5
    @Option(help: "Delivery of new messages: direct (s_msg) or notify (s_ntf + pull).") var delivery = "direct"
    @Option(help: "Server bug switches, e.g. B2,B12.") var bugs: String?
    @Option(name: .customLong("for"), help: "Stop after this long (e.g. 30s).") var runFor: String?
    @Flag(help: "Print every server event.") var verbose = false
    @Option(help: "Secret file (≥ 16 bytes): accept only tokens signed by it (see `imsim token`).") var secret: String?

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0…65535") }
        guard ["direct", "notify"].contains(delivery) else { throw ValidationError("--delivery must be direct or notify") }
        guard rateLimit >= 0 else { throw ValidationError("--rate-limit must not be negative") }
        guard (0...100_000).contains(generateUsers) else { throw ValidationError("--generate-users must be 0…100000") }
    }

    func run() throws {
        var o = RuntimeServerOptions()
        o.host = host
        o.port = port
        o.users = try users.map(RuntimeCLI.users) ?? []
        if generateUsers > 0 { o.users += (1...generateUsers).map { LoadOptions.userId($0, prefix: userPrefix) } }
        if o.users.isEmpty { o.users = ["alice", "bob", "carol", "dave"] }
        o.eventsPath = events
        o.pcapPath = pcap

        if let secret {
            do { o.tokenSecret = try RuntimeTokens.readSecret(path: secret) } catch { throw ValidationError("--secret: \(error)") }
        } else {
            RuntimeCLI.printLine("warning: no --secret: anyone can log in as anyone with \"token-<userId>\"")
        }
        o.config.rateLimitPerSecond = rateLimit
        o.config.delivery = delivery == "notify" ? .notify : .direct
        o.config.bugs = ServerBugs(try RuntimeCLI.bugs(bugs, side: .server, option: "--bugs"))
        let verbose = self.verbose
        o.log = { line in
            if verbose || line.hasPrefix("listening") { RuntimeCLI.printLine(line) }
        }
        let limit = try runFor.map { try RuntimeCLI.duration($0, option: "--for") }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let server = try RuntimeServer.start(o, group: group).wait()
        RuntimeCLI.waitForStop(limit: limit)
        let stats = try server.stats().wait()
        try server.shutdown().wait()
        RuntimeCLI.printLine("stopped: \(stats.connectionsAccepted) connections, \(stats.sessionsOpened) sessions, \(stats.messagesAccepted) messages accepted, \(stats.bytesIn) bytes in, \(stats.bytesOut) bytes out")
    }
}
