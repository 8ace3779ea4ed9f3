import IMClient
import IMRuntime
import IMServer
import IMWire
import NIOCore
import NIOPosix
import Testing

@Suite("Runtime basics (loopback)")
struct RuntimeBasicsTests {
    @Test("two clients exchange messages through the real server")
    func exchange() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await startServer(group, users: ["alice", "bob"])
        let alice = try await RuntimeClient.start(try clientOptions("alice", port: server.port), eventLoop: group.next()).get()
        let bob = try await RuntimeClient.start(try clientOptions("bob", port: server.port), eventLoop: group.next()).get()
        alice.connect()
        bob.connect()
        #expect(try await eventually(10) {
            let a = try await alice.summary().get(), b = try await bob.summary().get()
            return a.connectedCount == 1 && b.connectedCount == 1
        })
        for i in 1...3 {
            alice.call(.send(conversation: ConversationKey(.privateChat, "bob"), objectName: "RC:TxtMsg",
                             content: "{\"content\":\"hi \(i)\"}", pushText: nil, mentioned: false))
        }
        #expect(try await eventually(10) { try await bob.summary().get().received.count == 3 })
        let a = try await alice.stop().get()
        let b = try await bob.stop().get()
        #expect(a.sendOk == 3)
        #expect(b.duplicates.isEmpty)
        let stats = try await server.stats().get()
        #expect(stats.messagesAccepted == 3)
        try await server.shutdown().get()
        try await group.shutdownGracefully()
    }
}
