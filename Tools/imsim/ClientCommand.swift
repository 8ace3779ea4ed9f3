import ArgumentParser
import Foundation
import IMSim
import NIOCore
import NIOPosix

struct ClientCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "client",
        abstract: "Run the real client core over TCP against `imsim serve`, driven by a script.",
        discussion: """
            The client connects at start (with --token, or a token it signs with --secret FILE, \
            or the insecure "token-<user>"), runs the script (a JSON array of \
            steps with delays, Docs/runtime.md), stays --linger longer, then stops like a process \
            exit. --capture records the production capture (Docs/capture-format.md) that `imsim \
            replay` replays in the simulator. --store keeps the SQLite database (WAL) in a file.
            """
    )

    @Option(help: "The server (or proxy), HOST:PORT.") var server: String
    @Option(help: "User id.") var user: String
    @Option(help: "Device id (default <user>-phone with --store, else <user>-phone-<process>: a store-less run is a fresh install).") var device: String?
    @Option(help: "mobile, desktop or web.") var platform = "mobile"
    @Option(help: "Script file (JSON array of steps).") var script: String?
    @Option(help: "Write the production capture to this file.") var capture: String?
    @Option(help: "SQLite database file (default: in memory).") var store: String?
    @Option(help: "Client bug switches, e.g. B1.") var bugs: String?
    @Option(help: "Heartbeat interval (default 30s; recorded in the capture).") var heartbeat: String?
    @Option(help: "Stay connected this long after the last step.") var linger = "2s"
    @Flag(help: "Do not call connect at start (the script does).") var noConnect = false
    @Flag(help: "Only print the closing summary.") var quiet = false
    @Option(help: "Login token (from `imsim token`).") var token: String?
    @Option(help: "The server's secret file: sign a 24 h token for --user.") var secret: String?

    func loginToken() throws -> String {
        if let token, secret != nil { throw ValidationError("give --token or --secret, not both") }
        if let token { return token }
        guard let secret else { return RuntimeServerOptions.token(for: user) }
        do {
            return RuntimeTokens.issue(userId: user, secret: try RuntimeTokens.readSecret(path: secret), validForMs: 86_400_000,
                                       nowMs: WallClock.osEpochMs())
        } catch { throw ValidationError("--secret: \(error)") }
    }

    func run() throws {
        guard let platform = Platform(rawValue: platform) else { throw ValidationError("--platform must be mobile, desktop or web") }
        // Without --store every run is a fresh install whose clientUniqueId counter restarts at 1: under
        // the same device id its sends would repeat an earlier run's ids and the server would absorb
        // them as resends (Docs/runtime.md, findings). A default device id per process avoids that.
        let deviceId = device ?? (store == nil ? "\(user)-phone-\(String(UInt32(getpid()), radix: 16))" : "\(user)-phone")
        let identity = DeviceIdentity(userId: user, deviceId: deviceId, platform: platform)
        var o = RuntimeClientOptions(server: try RuntimeCLI.address(server, option: "--server"), identity: identity,
                                     token: try loginToken())
        o.config.bugs = ClientBugs(try RuntimeCLI.bugs(bugs, side: .client, option: "--bugs"))
        if let h = heartbeat { o.config.heartbeatInterval = try RuntimeCLI.duration(h, option: "--heartbeat") }
        o.storePath = store
        if let capture { o.capture = RuntimeCapture.factory(path: capture, source: "imsim client --user \(user)") }
        let quiet = self.quiet
        o.log = { line in if !quiet { RuntimeCLI.printLine("\(identity.deviceId) \(line)") } }
        let steps: ClientScript
        if let script {
            guard let data = FileManager.default.contents(atPath: script) else { throw ValidationError("--script: cannot read \(script)") }
            do { steps = try ClientScript.parse(String(decoding: data, as: UTF8.self), path: script) } catch {
                throw ValidationError("--script: \(error)")
            }
        } else {
            steps = ClientScript(steps: [])
        }
        let lingerFor = try RuntimeCLI.duration(linger, option: "--linger")

        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let client = try RuntimeClient.start(o, eventLoop: group.next()).wait()
        if !noConnect { client.connect() }
        try client.run(steps).wait()
        Thread.sleep(forTimeInterval: Double(lingerFor.nanoseconds) / 1e9)
        let s = try client.stop().wait()
        RuntimeCLI.printLine("\(identity.deviceId): sent \(s.sendOk) ok, \(s.sendFailed) failed; received \(s.received.count) (\(s.duplicates.count) duplicated); \(s.connectionsOpened) connection attempts, \(s.connectedCount) connected, \(s.transportsLost) lost" + (capture.map { "; capture \($0)" } ?? ""))
    }
}
