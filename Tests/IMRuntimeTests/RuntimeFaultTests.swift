import IMClient
import IMRuntime
import IMServer
import IMWire
import NIOCore
import NIOPosix
import SimKernel
import Testing

@Suite("Runtime transport and faults (loopback)")
struct RuntimeFaultTests {
    static func send(_ c: RuntimeClient, to peer: String, _ text: String) {
        c.call(.send(conversation: ConversationKey(.privateChat, peer), objectName: "RC:TxtMsg",
                     content: "{\"content\":\"\(text)\"}", pushText: nil, mentioned: false))
    }

    @Test("nothing listening: the connect is refused and the core schedules a reconnect")
    func refused() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        // Bind a port, then free it: nothing listens there.
        let probe = try await startServer(group, users: [])
        let port = probe.port
        try await probe.shutdown().get()
        let c = try await RuntimeClient.start(try clientOptions("alice", port: port), eventLoop: group.next()).get()
        c.connect()
        #expect(try await eventually(10) { try await c.summary().get().connectFailures >= 2 })
        let s = try await c.stop().get()
        #expect(s.connectedCount == 0)
        #expect(s.statuses.first == .connecting)
        try await group.shutdownGracefully()
    }

    @Test("a proxy reset: both ends see it, the client reconnects and still gets every message")
    func resetReconnects() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await startServer(group, users: ["alice", "bob"])
        let proxy = try await FaultProxy.start(FaultProxyOptions(target: try SocketAddress(ipAddress: "127.0.0.1", port: server.port)), group: group).get()
        let alice = try await RuntimeClient.start(try clientOptions("alice", port: proxy.port), eventLoop: group.next()).get()
        let bob = try await RuntimeClient.start(try clientOptions("bob", port: proxy.port), eventLoop: group.next()).get()
        alice.connect()
        bob.connect()
        #expect(try await eventually(10) { try await server.stats().get().sessionsOpened == 2 })
        let resets = try await proxy.resetAll().get()
        #expect(resets == 2)
        #expect(try await eventually(15) { try await server.stats().get().sessionsOpened == 4 })
        Self.send(alice, to: "bob", "after reset")
        #expect(try await eventually(10) { try await bob.summary().get().received.count == 1 })
        let b = try await bob.stop().get()
        let a = try await alice.stop().get()
        #expect(a.transportsLost == 1 && b.transportsLost == 1)
        #expect(a.sendOk == 1)
        try await proxy.shutdown().get()
        try await server.shutdown().get()
        try await group.shutdownGracefully()
    }

    @Test("hold black-hole: a message sent inside the window arrives after it")
    func holdBlackhole() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await startServer(group, users: ["alice", "bob"])
        let proxy = try await FaultProxy.start(FaultProxyOptions(target: try SocketAddress(ipAddress: "127.0.0.1", port: server.port)), group: group).get()
        let alice = try await RuntimeClient.start(try clientOptions("alice", port: proxy.port), eventLoop: group.next()).get()
        let bob = try await RuntimeClient.start(try clientOptions("bob", port: proxy.port), eventLoop: group.next()).get()
        alice.connect()
        bob.connect()
        #expect(try await eventually(10) { try await server.stats().get().sessionsOpened == 2 })
        // The window lasts until the test heals it, so no timing decides the outcome: while it
        // holds, the message cannot arrive (however slow this machine is); after, it must.
        try await proxy.blackhole(for: .seconds(3600), mode: .hold).get()
        Self.send(alice, to: "bob", "held")
        #expect(try await eventually(10) { try await proxy.stats().get().queuedBytes > 0 })
        #expect(try await bob.summary().get().received.isEmpty)
        try await proxy.heal().get()
        #expect(try await eventually(15) { try await bob.summary().get().received.count == 1 })
        let s = try await proxy.stats().get()
        #expect(s.resets == 0 && s.halfOpened == 0)
        _ = try await alice.stop().get()
        let b = try await bob.stop().get()
        #expect(b.transportsLost == 0)
        try await proxy.shutdown().get()
        try await server.shutdown().get()
        try await group.shutdownGracefully()
    }

    @Test("drop black-hole: the connection is half-open; the client's ping timeout ends it and it reconnects")
    func halfOpen() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await startServer(group, users: ["alice"])
        let proxy = try await FaultProxy.start(FaultProxyOptions(target: try SocketAddress(ipAddress: "127.0.0.1", port: server.port)), group: group).get()
        var o = try clientOptions("alice", port: proxy.port)
        o.config.heartbeatInterval = .milliseconds(500)
        o.config.pingTimeout = .milliseconds(500)
        let alice = try await RuntimeClient.start(o, eventLoop: group.next()).get()
        alice.connect()
        #expect(try await eventually(10) { try await server.stats().get().sessionsOpened == 1 })
        try await proxy.blackhole(for: .milliseconds(100), mode: .drop).get()
        #expect(try await eventually(15) { try await server.stats().get().sessionsOpened == 2 })
        // The server never heard of the client's close; the new login of the same device replaces
        // the old session.
        #expect(try await server.stats().get().connectionsAccepted == 2)
        #expect(try await proxy.stats().get().halfOpened == 1)
        let a = try await alice.stop().get()
        #expect(a.transportsLost == 0, "the client closed it itself (ping timeout), nothing was reported by the socket")
        #expect(a.connectionsOpened == 2)
        try await proxy.shutdown().get()
        try await server.shutdown().get()
        try await group.shutdownGracefully()
    }

    @Test("network down and up: NETWORK_UNAVAILABLE, then a reconnect at once")
    func networkChange() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await startServer(group, users: ["alice"])
        let alice = try await RuntimeClient.start(try clientOptions("alice", port: server.port), eventLoop: group.next()).get()
        alice.connect()
        #expect(try await eventually(10) { try await server.stats().get().sessionsOpened == 1 })
        alice.network(available: false)
        #expect(try await eventually(5) { try await alice.summary().get().statuses.last == .networkUnavailable })
        alice.network(available: true)
        #expect(try await eventually(10) { try await server.stats().get().sessionsOpened == 2 })
        let a = try await alice.stop().get()
        #expect(a.statuses.suffix(3) == [.networkUnavailable, .connecting, .connected])
        try await server.shutdown().get()
        try await group.shutdownGracefully()
    }

    @Test("loadgen: every message sent is received once")
    func loadgen() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        var so = RuntimeServerOptions()
        so.users = (1...4).map { LoadOptions.userId($0) }
        so.config.rateLimitPerSecond = 0
        let server = try await RuntimeServer.start(so, group: group).get()
        var o = LoadOptions(server: try SocketAddress(ipAddress: "127.0.0.1", port: server.port))
        o.clients = 4
        o.duration = .milliseconds(800)
        o.workload = .rate(perSecond: 50)
        o.drain = .seconds(3)
        let r = try await LoadGenerator.run(o, group: group).get()
        #expect(r.connected == 4)
        #expect(r.sent > 0)
        #expect(r.sendOk == r.sent)
        #expect(r.received == r.sent)
        #expect(r.duplicates == 0)
        #expect(r.latencyP50Ms > 0 && r.latencyP50Ms <= r.latencyP99Ms)
        try await server.shutdown().get()
        try await group.shutdownGracefully()
    }
}
