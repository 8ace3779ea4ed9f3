import Foundation
import IMClient
import IMReplay
import IMRuntime
import IMServer
import IMWire
import NIOCore
import NIOPosix
import Testing

@Suite("Runtime basics (loopback)")
struct RuntimeBasicsTests {
    @Test("two clients exchange messages through the real server; its events go to a JSONL file")
    func exchange() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let events = tempPath("events.jsonl")
        var so = RuntimeServerOptions()
        so.users = ["alice", "bob"]
        so.eventsPath = events
        let server = try await RuntimeServer.start(so, group: group).get()
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
        // Written to EVENTS.partial, renamed at shutdown; one JSON object per line.
        let lines = try String(contentsOfFile: events, encoding: .utf8).split(separator: "\n")
        #expect(lines.allSatisfy { $0.hasPrefix("{\"t\":") && $0.hasSuffix("\"}") })
        #expect(lines.filter { $0.contains("messageAccepted") }.count == 3)
        #expect(lines.filter { $0.contains("sessionOpened") }.count == 2)
    }

    @Test("a wrong token is refused by the server core: connectError, no reconnect")
    func wrongToken() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await startServer(group, users: ["alice"])
        var o = try clientOptions("mallory", port: server.port)
        o.token = "token-alice-stolen"
        let c = try await RuntimeClient.start(o, eventLoop: group.next()).get()
        c.connect()
        #expect(try await eventually(10) { try await c.summary().get().statuses.last == .tokenIncorrect })
        try await Task.sleep(for: .milliseconds(300))
        let s = try await c.stop().get()
        #expect(s.connectionsOpened == 1)
        #expect(s.connectedCount == 0)
        try await server.shutdown().get()
        try await group.shutdownGracefully()
    }

    @Test("a client over an existing store file says so in its capture header (freshStore false)")
    func reusedStore() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await startServer(group, users: ["alice", "bob"])
        let db = tempPath("alice.sqlite")
        var headers: [Bool] = []
        for run in 1...2 {
            var o = try clientOptions("alice", port: server.port)
            o.storePath = db
            let path = tempPath("alice-\(run).jsonl")
            o.capture = RecorderCaptureSink.file(path)
            let c = try await RuntimeClient.start(o, eventLoop: group.next()).get()
            c.connect()
            #expect(try await eventually(10) { try await c.summary().get().connectedCount == 1 })
            c.call(.send(conversation: ConversationKey(.privateChat, "bob"), objectName: "RC:TxtMsg",
                         content: "{\"content\":\"run \(run)\"}", pushText: nil, mentioned: false))
            #expect(try await eventually(10) { try await c.summary().get().sendOk == 1 })
            _ = try await c.stop().get()
            headers.append(try CaptureReader(path: path).header.freshStore)
        }
        #expect(headers == [true, false])
        try await server.shutdown().get()
        try await group.shutdownGracefully()
    }
}

@Suite("Runtime pcap (loopback)")
struct RuntimePcapTests {
    @Test("serve --pcap: the real traffic as pcapng, one TCP conversation per client, payload bytes equal what the server read and wrote")
    func capture() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let path = tempPath("serve.pcapng")
        var so = RuntimeServerOptions()
        so.users = ["alice", "bob"]
        so.pcapPath = path
        let server = try await RuntimeServer.start(so, group: group).get()
        let alice = try await RuntimeClient.start(try clientOptions("alice", port: server.port), eventLoop: group.next()).get()
        let bob = try await RuntimeClient.start(try clientOptions("bob", port: server.port), eventLoop: group.next()).get()
        alice.connect()
        bob.connect()
        #expect(try await eventually(10) {
            let a = try await alice.summary().get(), b = try await bob.summary().get()
            return a.connectedCount == 1 && b.connectedCount == 1
        })
        alice.call(.send(conversation: ConversationKey(.privateChat, "bob"), objectName: "RC:TxtMsg",
                         content: "{\"content\":\"hi\"}", pushText: nil, mentioned: false))
        #expect(try await eventually(10) { try await bob.summary().get().received.count == 1 })
        _ = try await alice.stop().get()
        _ = try await bob.stop().get()
        let stats = try await server.stats().get()
        #expect(!FileManager.default.fileExists(atPath: path), "the capture appears only at shutdown")
        try await server.shutdown().get()
        try await group.shutdownGracefully()

        // Walk the pcapng blocks: Section Header, one interface, Enhanced Packet Blocks.
        let data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        func u32(_ o: Int) -> Int { Int(data[o]) | Int(data[o + 1]) << 8 | Int(data[o + 2]) << 16 | Int(data[o + 3]) << 24 }
        #expect(u32(0) == 0x0A0D_0D0A)
        var o = 0, packets = 0, toServer = 0, toClient = 0, syns = 0
        while o + 12 <= data.count {
            let type = u32(o), len = u32(o + 4)
            #expect(len >= 12 && len % 4 == 0 && o + len <= data.count && u32(o + len - 4) == len, "block at \(o)")
            guard len >= 12, o + len <= data.count else { break }
            if type == 6 {
                packets += 1
                let p = o + 28  // Ethernet frame
                let ipLen = Int(data[p + 16]) << 8 | Int(data[p + 17])
                let tcp = p + 34
                let payload = ipLen - 40
                let dport = Int(data[tcp + 2]) << 8 | Int(data[tcp + 3])
                if data[tcp + 13] & 0x02 != 0 && data[tcp + 13] & 0x10 == 0 { syns += 1 }
                if dport == server.port { toServer += payload } else { toClient += payload }
            }
            o += len
        }
        #expect(o == data.count)
        #expect(syns == 2)
        #expect(toServer == stats.bytesIn && toServer > 0)
        #expect(toClient == stats.bytesOut && toClient > 0)
        #expect(packets > 10)
    }
}
