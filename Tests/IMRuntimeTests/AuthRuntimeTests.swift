import IMClient
import IMRuntime
import IMServer
import IMWire
import NIOCore
import NIOPosix
import Testing

/// Issue 23, item 6: with a secret the runtime accepts only tokens it signed (HMAC-SHA256 over
/// user id and expiry). A forged token for bob gets nothing of bob's.
@Suite(.serialized) struct AuthRuntimeTests {
    static let secret = Array("correct horse battery staple 23".utf8)

    static func startSigned(_ group: EventLoopGroup) async throws -> RuntimeServer {
        var o = RuntimeServerOptions()
        o.users = ["alice", "bob"]
        o.tokenSecret = secret
        return try await RuntimeServer.start(o, group: group).get()
    }

    static func client(_ user: String, token: String, port: Int, device: String? = nil, group: EventLoopGroup) async throws -> RuntimeClient {
        var o = try clientOptions(user, port: port, device: device)
        o.token = token
        let c = try await RuntimeClient.start(o, eventLoop: group.next()).get()
        c.connect()
        return c
    }

    static func valid(_ user: String, secret: [UInt8] = secret, validForMs: Int64 = 3_600_000) -> String {
        RuntimeTokens.issue(userId: user, secret: secret, validForMs: validForMs, nowMs: WallClock.osEpochMs())
    }

    /// The token with its last MAC character changed. Always a different character: replacing it
    /// with a fixed one left the token valid whenever the MAC happened to end in that character.
    static func tamperedLastCharacter(_ token: String) -> String {
        let last = token.last
        return String(token.dropLast()) + (last == "0" ? "1" : "0")
    }

    @Test("forged tokens for bob are refused (31004) and receive none of bob's messages")
    func forgedTokensGetNothing() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await Self.startSigned(group)
        let alice = try await Self.client("alice", token: Self.valid("alice"), port: server.port, group: group)
        #expect(try await eventually(10) { try await alice.summary().get().connectedCount == 1 })
        alice.call(.send(conversation: ConversationKey(.privateChat, "bob"), objectName: "RC:TxtMsg",
                         content: #"{"content":"for bob only"}"#, pushText: nil, mentioned: false))
        #expect(try await eventually(10) { try await server.stats().get().messagesAccepted == 1 })

        let aliceToken = Self.valid("alice")
        let forgeries = [
            "token-bob",                                                       // the old fixed token
            Self.valid("bob", secret: Array("another secret of 32 bytes......".utf8)),  // another server's key
            aliceToken.replacingOccurrences(of: "v1.alice.", with: "v1.bob."), // alice's MAC, bob's name
            Self.tamperedLastCharacter(Self.valid("bob")),                     // tampered MAC
        ]
        var forged: [RuntimeClient] = []
        for (i, t) in forgeries.enumerated() {
            forged.append(try await Self.client("bob", token: t, port: server.port, device: "mallory-\(i)", group: group))
        }
        for f in forged {
            #expect(try await eventually(10) { try await f.summary().get().connectErrors == [31004] })
        }
        // The real bob, with a token the server signed, gets the message.
        let bob = try await Self.client("bob", token: Self.valid("bob"), port: server.port, group: group)
        #expect(try await eventually(10) { try await bob.summary().get().received.count == 1 })
        for f in forged {
            let s = try await f.stop().get()
            #expect(s.connectedCount == 0)
            #expect(s.received.isEmpty)
        }
        #expect(try await server.stats().get().sessionsOpened == 2)
        _ = try await bob.stop().get()
        _ = try await alice.stop().get()
        try await server.shutdown().get()
        try await group.shutdownGracefully()
    }

    @Test("an expired signed token is refused with 31020")
    func expiredToken() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await Self.startSigned(group)
        let expired = RuntimeTokens.issue(userId: "bob", secret: Self.secret, validForMs: -60_000, nowMs: WallClock.osEpochMs())
        let c = try await Self.client("bob", token: expired, port: server.port, group: group)
        #expect(try await eventually(10) { try await c.summary().get().connectErrors == [31020] })
        let s = try await c.stop().get()
        #expect(s.connectedCount == 0)
        try await server.shutdown().get()
        try await group.shutdownGracefully()
    }

    @Test func secretsShorterThan16BytesAreRefused() throws {
        let path = tempPath("short-secret")
        try Array("short".utf8).withUnsafeBufferPointer { b in
            let f = fopen(path, "w")
            fwrite(b.baseAddress, 1, b.count, f)
            fclose(f)
        }
        #expect(throws: RuntimeError.self) { try RuntimeTokens.readSecret(path: path) }
    }
}
