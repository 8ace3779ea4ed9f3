import IMRuntime
import IMServer
import IMWire
import NIOCore
import NIOPosix
import Testing

/// Issue 23, item 5: the TCP runtime under a hostile peer keeps bounded memory. Measured by the
/// bytes the server and the proxy hold queued (their own counters), never by RSS or timing.
@Suite(.serialized) struct HostilePeerTests {
    /// A raw TCP peer that writes what it is told and never reads (tiny receive buffer).
    final class Silent: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
    }

    static func rawPeer(_ group: EventLoopGroup, port: Int) async throws -> Channel {
        try await ClientBootstrap(group: group)
            .channelOption(.socketOption(.so_rcvbuf), value: 4096)
            .channelOption(.autoRead, value: false)
            .channelInitializer { ch in ch.eventLoop.makeCompletedFuture { try ch.pipeline.syncOperations.addHandler(Silent()) } }
            .connect(host: "127.0.0.1", port: port).get()
    }

    /// Options for these tests: the server's wall-clock deadlines (10 s to CONNECT, 90 s idle) are
    /// not under test, and the test task that writes the CONNECT can wait longer than that for a
    /// thread when the full suite's long synchronous tests hold the cooperative pool (seen in CI:
    /// the connection closed on `connectTimeout` before the CONNECT was written).
    static func options() -> RuntimeServerOptions {
        var o = RuntimeServerOptions()
        o.users = ["alice"]
        o.config.connectDeadline = .seconds(3600)
        o.config.sessionIdleTimeout = .seconds(3600)
        return o
    }

    static func connectFrame(_ user: String) throws -> [UInt8] {
        try StreamFraming.encode(.connect(Frame.Connect(keepAlive: 30, clientId: "mobile:\(user)-raw", appKey: ServerConfig().appKey,
                                                        token: RuntimeServerOptions.token(for: user))),
                                 direction: .clientToServer)
    }

    /// Writes `frame` `count` times in 64 KiB batches while the channel lives; returns bytes written.
    static func flood(_ channel: Channel, _ frame: [UInt8], count: Int) async -> Int {
        let perBatch = max(1, 65_536 / frame.count)
        var written = 0
        var left = count
        while left > 0, channel.isActive {
            let n = min(perBatch, left)
            var buffer = channel.allocator.buffer(capacity: n * frame.count)
            for _ in 0..<n { buffer.writeBytes(frame) }
            do { try await channel.writeAndFlush(buffer).get() } catch { break }
            written += n * frame.count
            left -= n
        }
        return written
    }

    @Test("a client that sends PINGREQs but never reads is closed at the outbound limit; nothing stays queued")
    func slowReaderIsClosed() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        var o = Self.options()
        o.maxOutboundBytes = 64 << 10
        o.socketSendBufferBytes = 8192   // the kernel holds little: the queue is the server's
        let server = try await RuntimeServer.start(o, group: group).get()
        let peer = try await Self.rawPeer(group, port: server.port)
        _ = await Self.flood(peer, try Self.connectFrame("alice"), count: 1)
        #expect(try await eventually(10) { try await server.stats().get().sessionsOpened == 1 })
        let ping = try StreamFraming.encode(.pingReq(), direction: .clientToServer)
        // 1 MB of PINGREQs: far more PINGRESP than the socket buffers and the limit together hold
        // (the flood stops when the server resets the connection).
        _ = await Self.flood(peer, ping, count: (1 << 20) / ping.count)
        #expect(try await eventually(20) { try await server.stats().get().slowReadersClosed == 1 })
        #expect(try await eventually(10) { try await server.stats().get().socketsOpen == 0 })
        let s = try await server.stats().get()
        let pingResp = try StreamFraming.encode(.pingResp(), direction: .serverToClient)
        #expect(s.peakOutboundQueuedBytes <= o.maxOutboundBytes)
        #expect(s.peakOutboundQueuedBytes > o.maxOutboundBytes - pingResp.count * 2)
        #expect(s.outboundQueuedBytes == 0)
        try? await peer.close().get()
        try await server.shutdown().get()
        try await group.shutdownGracefully()
    }

    @Test("after a protocol error the server stops reading and closes even when the peer never reads")
    func protocolErrorCloses() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        var o = Self.options()
        o.maxOutboundBytes = 256 << 20   // not the slow-reader rule: the close after the error
        o.closeFlushTimeout = .milliseconds(500)
        o.socketSendBufferBytes = 8192
        let server = try await RuntimeServer.start(o, group: group).get()
        let peer = try await Self.rawPeer(group, port: server.port)
        _ = await Self.flood(peer, try Self.connectFrame("alice"), count: 1)
        #expect(try await eventually(10) { try await server.stats().get().sessionsOpened == 1 })
        let ping = try StreamFraming.encode(.pingReq(), direction: .clientToServer)
        _ = await Self.flood(peer, ping, count: (64 << 10) / ping.count)
        // Garbage: not a frame header the decoder accepts.
        _ = await Self.flood(peer, [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF], count: 4)
        // Generous: a loaded debug build takes a while to answer the PINGREQs before the garbage.
        #expect(try await eventually(60) { try await server.stats().get().socketsOpen == 0 })
        let s = try await server.stats().get()
        #expect(s.connectionsOpen == 0)
        #expect(s.outboundQueuedBytes == 0)
        try? await peer.close().get()
        try await server.shutdown().get()
        try await group.shutdownGracefully()
    }

    @Test("the proxy's queue toward a receiver that never reads stays at its limit (backpressure)")
    func proxyBackpressure() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        // A "server" that accepts and never reads.
        let sink = try await ServerBootstrap(group: group)
            .childChannelOption(.autoRead, value: false)
            .childChannelOption(.socketOption(.so_rcvbuf), value: 4096)
            .childChannelInitializer { ch in ch.eventLoop.makeCompletedFuture { try ch.pipeline.syncOperations.addHandler(Silent()) } }
            .bind(host: "127.0.0.1", port: 0).get()
        var po = FaultProxyOptions(target: try SocketAddress(ipAddress: "127.0.0.1", port: sink.localAddress!.port!))
        po.maxQueuedBytes = 256 << 10
        po.delay = .milliseconds(200)
        let proxy = try await FaultProxy.start(po, group: group).get()
        let sender = try await ClientBootstrap(group: group).connect(host: "127.0.0.1", port: proxy.port).get()
        // 32 MB toward it; the writes stall once the proxy stops reading.
        let writer = Task { await Self.flood(sender, [UInt8](repeating: 0x42, count: 1024), count: 32 << 10) }
        #expect(try await eventually(20) { try await proxy.stats().get().readPauses >= 1 })
        try await Task.sleep(for: .milliseconds(500))
        let s = try await proxy.stats().get()
        // One read burst past the limit at most: NIO reads up to 4 × 64 KiB before it sees that
        // reading stopped. Bounded by the limit, whatever the sender sends (32 MB here).
        let burst = 4 * (64 << 10)
        #expect(s.peakQueuedBytes <= po.maxQueuedBytes + burst)
        #expect(s.queuedBytes <= po.maxQueuedBytes + burst)
        #expect(s.bytesToServer < 8 << 20)
        try await proxy.shutdown().get()
        try? await sender.close().get()
        _ = await writer.value
        try await sink.close().get()
        try await group.shutdownGracefully()
    }
}
