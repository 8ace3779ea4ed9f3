import IMClient
import IMRuntime
import IMServer
import IMWire
import NIOCore
import NIOPosix
import SimKernel
import Testing

/// Server + one fault proxy per device + 3 clients (alice, bob, carol) with scripts, captures and
/// file stores, on loopback; the faults cause real reconnects. Bob's path is slow (150 ms each
/// way), so every reconnect of his has a ~300 ms window in which alice's and carol's messages
/// reach him as `s_msg` while his pull is in flight — the B1 race.
struct EndToEndRun {
    var captures: [String: String] = [:]
    var summaries: [String: RuntimeClientSummary] = [:]
    var quiesced = false

    static let users = ["alice", "bob", "carol"]

    static let scripts: [String: String] = [
        "alice": #"""
            [{"after": "300ms", "action": "send", "to": "private:bob", "text": "from alice", "count": 34, "interval": "220ms"},
             {"after": "500ms", "action": "read", "conversation": "private:bob"}]
            """#,
        "carol": #"""
            [{"after": "410ms", "action": "send", "to": "private:bob", "text": "from carol", "count": 34, "interval": "220ms"}]
            """#,
        "bob": #"""
            [{"after": "2s", "action": "send", "to": "private:alice", "text": "from bob", "count": 6, "interval": "1s"},
             {"at": "8s", "action": "read", "conversation": "private:alice"},
             {"after": "10ms", "action": "read", "conversation": "private:carol"}]
            """#,
    ]

    /// Runs the whole thing; every wait has a deadline.
    static func run(bobBugs: ClientBugs, dir: String) async throws -> EndToEndRun {
        var result = EndToEndRun()
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await startServer(group, users: users)
        let target = try SocketAddress(ipAddress: "127.0.0.1", port: server.port)
        var proxies: [String: FaultProxy] = [:]
        for (user, delay) in [("alice", 20), ("bob", 150), ("carol", 20)] {
            var p = FaultProxyOptions(target: target)
            p.delay = .milliseconds(Int64(delay))
            p.jitter = user == "carol" ? .milliseconds(10) : .zero
            p.seed = 7
            proxies[user] = try await FaultProxy.start(p, group: group).get()
        }
        var clients: [String: RuntimeClient] = [:]
        for user in users {
            var o = try clientOptions(user, port: proxies[user]!.port)
            o.storePath = "\(dir)/\(user).sqlite"
            o.capture = RecorderCaptureSink.file("\(dir)/\(user).jsonl", source: "IMRuntimeTests end-to-end")
            // Fast heartbeats: a half-open connection is noticed in ~2.5 s (recorded in the header).
            o.config.heartbeatInterval = .seconds(1)
            o.config.pingTimeout = .milliseconds(1500)
            if user == "bob" { o.config.bugs = bobBugs }
            clients[user] = try await RuntimeClient.start(o, eventLoop: group.next()).get()
            result.captures[user] = "\(dir)/\(user).jsonl"
        }
        let start = ContinuousClock.now
        var runs: [EventLoopFuture<Void>] = []
        for user in users {
            clients[user]!.connect()
            runs.append(clients[user]!.run(try ClientScript.parse(scripts[user]!, path: "\(user).json")))
        }
        // The fault plan (times from the start).
        let plan: [(ms: Int, what: () async throws -> Void)] = [
            (1500, { _ = try await proxies["bob"]!.resetAll().get() }),
            (2500, { try await proxies["carol"]!.blackhole(for: .milliseconds(600), mode: .hold).get() }),
            (3000, { _ = try await proxies["bob"]!.resetAll().get() }),
            (3200, { _ = try await proxies["alice"]!.resetAll().get() }),
            (4500, { _ = try await proxies["bob"]!.resetAll().get(); _ = try await proxies["carol"]!.resetAll().get() }),
            (5000, { try await proxies["alice"]!.blackhole(for: .milliseconds(200), mode: .drop).get() }),
            (6000, { _ = try await proxies["bob"]!.resetAll().get() }),
        ]
        for step in plan {
            let at = start + .milliseconds(step.ms)
            if ContinuousClock.now < at { try await Task.sleep(until: at, clock: .continuous) }
            try await step.what()
        }
        for f in runs { try await f.get() }
        // Quiet period: everything sent OK must reach bob (each reconnect pulls what was missed).
        result.quiesced = try await eventually(20) {
            let bob = try await clients["bob"]!.summary().get()
            let a = try await clients["alice"]!.summary().get()
            let c = try await clients["carol"]!.summary().get()
            return Set(a.sent + c.sent).isSubset(of: Set(bob.received))
        }
        try await Task.sleep(for: .milliseconds(300))
        for user in users { result.summaries[user] = try await clients[user]!.stop().get() }
        for p in proxies.values { try await p.shutdown().get() }
        try await server.shutdown().get()
        try await group.shutdownGracefully()
        return result
    }
}
