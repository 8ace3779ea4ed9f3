import IMClient
import IMReplay
import IMRuntime
import IMServer
import IMWire
import NIOCore
import NIOPosix
import SimKernel
import Testing

@Suite("Runtime captures")
struct CaptureRecordingTests {
    @Test("a runtime client's capture reads back strictly: header, app start, connections, frames, snapshot")
    func captureReadsBack() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await startServer(group, users: ["alice", "bob"])
        let proxy = try await FaultProxy.start(FaultProxyOptions(target: try SocketAddress(ipAddress: "127.0.0.1", port: server.port)), group: group).get()
        let path = tempPath("alice.jsonl")
        var o = try clientOptions("alice", port: proxy.port)
        o.capture = RecorderCaptureSink.file(path, source: "test")
        o.config.bugs = [.b1]
        let alice = try await RuntimeClient.start(o, eventLoop: group.next()).get()
        let bob = try await RuntimeClient.start(try clientOptions("bob", port: proxy.port), eventLoop: group.next()).get()
        alice.connect()
        bob.connect()
        #expect(try await eventually(10) { try await server.stats().get().sessionsOpened == 2 })
        bob.call(.send(conversation: ConversationKey(.privateChat, "alice"), objectName: "RC:TxtMsg",
                       content: "{\"content\":\"1\"}", pushText: nil, mentioned: false))
        #expect(try await eventually(10) { try await alice.summary().get().received.count == 1 })
        #expect(try await proxy.resetAll().get() == 2)
        #expect(try await eventually(15) { try await server.stats().get().sessionsOpened == 4 })
        let a = try await alice.stop().get()
        _ = try await bob.stop().get()

        let reader = try CaptureReader(path: path)
        #expect(reader.header.identity.userId == "alice")
        #expect(reader.header.freshStore)
        #expect(reader.header.bugs == [.B1])
        #expect(reader.header.sdk.hasPrefix("imsim-runtime"))
        let records = try reader.readAll()
        #expect(records.first.map { if case .app(.start) = $0.event { true } else { false } } == true)
        #expect(records.last.map { if case .snapshot = $0.event { true } else { false } } == true)
        let opens = records.filter { if case .open = $0.event { true } else { false } }.count
        #expect(opens == a.connectionsOpened)
        let closedByReset = records.contains { if case .closed(_, .reset) = $0.event { true } else { false } }
        let closedByPeer = records.contains { if case .closed(_, .closedByPeer) = $0.event { true } else { false } }
        #expect(closedByReset || closedByPeer)
        let received = records.filter { if case .callback(.received) = $0.event { true } else { false } }.count
        #expect(received == 1)
        // t never goes back (the runtime's clock is clamped).
        #expect(zip(records, records.dropFirst()).allSatisfy { $0.t <= $1.t })
        try await proxy.shutdown().get()
        try await server.shutdown().get()
        try await group.shutdownGracefully()
    }
}
