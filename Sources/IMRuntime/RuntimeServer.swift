import IMServer
import IMTraceFormat
import IMWire
import NIOCore
import NIOPosix
import SimKernel

/// What `RuntimeServer` hosts and where it listens.
public struct RuntimeServerOptions: Sendable {
    /// Loopback by default.
    public var host = "127.0.0.1"
    /// 0 = any free port (read it back from `RuntimeServer.port`).
    public var port = 0
    public var config = ServerConfig()
    /// Users known to the server; each logs in with `token-<userId>` (like the simulator's
    /// `World.token(for:)`).
    public var users: [String] = []
    /// JSONL file of server events (`{"t": ms, "event": "…"}` per line), or nil.
    public var eventsPath: String?
    /// A pcapng capture of every connection's traffic as the server read and wrote it
    /// (Docs/look.md), or nil. Written to PATH.partial, renamed at shutdown.
    public var pcapPath: String?
    /// A line per event for a human (the CLI prints it), or nil.
    public var log: (@Sendable (String) -> Void)?
    /// With a secret, users log in only with tokens signed by it (`RuntimeTokens`, HMAC-SHA256);
    /// without, with the insecure fixed `token-<userId>` (tests, old scripts).
    public var tokenSecret: [UInt8]?
    /// Bytes a connection may have written but not yet taken by its socket; a peer that sends
    /// but never reads (PINGREQ floods) is closed past this, with a log line.
    public var maxOutboundBytes = 4 << 20
    /// How long a connection the core closed may take to flush before it is reset (a peer that
    /// stops reading cannot keep a closing connection, nor make the server read on its behalf).
    public var closeFlushTimeout: TimeAmount = .seconds(2)
    /// SO_SNDBUF of accepted sockets (nil: the system's, autotuned up to megabytes). Tests make
    /// it small so that "queued in the server" is not hidden in the kernel.
    public var socketSendBufferBytes: Int?

    public init() {}

    /// The token a user logs in with (the simulator's convention).
    public static func token(for userId: String) -> String { "token-\(userId)" }
}

/// Counters of a running server (read with `RuntimeServer.stats()`).
public struct RuntimeServerStats: Sendable, Hashable {
    public var connectionsAccepted = 0
    public var connectionsOpen = 0
    public var bytesIn = 0
    public var bytesOut = 0
    public var messagesAccepted = 0
    public var sessionsOpened = 0
    public var timersFired = 0
    /// Bytes written and not yet taken by the sockets, now (all connections).
    public var outboundQueuedBytes = 0
    /// The most one connection ever had queued.
    public var peakOutboundQueuedBytes = 0
    /// Connections closed for not reading (over `maxOutboundBytes`).
    public var slowReadersClosed = 0
    /// Sockets still open (a connection the core closed counts until its socket is gone).
    public var socketsOpen = 0
    public init() {}
}

/// A TCP server hosting one `ServerCore` on a single event loop: accepted channels become
/// `.connectionAccepted`, reads `.bytes`, closes `.connectionClosed`; the core's effects become
/// writes, closes and timers on the same loop. Server time is the real epoch clock in ms.
public final class RuntimeServer: Sendable {
    /// The loop that runs the core and every connection.
    public let eventLoop: EventLoop
    /// The port it listens on (resolved when `port` was 0).
    public let port: Int
    public let host: String
    private let listener: Channel
    private let bound: NIOLoopBound<ServerHost>

    private init(eventLoop: EventLoop, host: String, port: Int, listener: Channel, bound: NIOLoopBound<ServerHost>) {
        self.eventLoop = eventLoop
        self.host = host
        self.port = port
        self.listener = listener
        self.bound = bound
    }

    /// Binds and starts serving on one loop of `group`.
    public static func start(_ options: RuntimeServerOptions, group: EventLoopGroup) -> EventLoopFuture<RuntimeServer> {
        let loop = group.next()
        return loop.submit { () throws -> NIOLoopBound<ServerHost> in
            NIOLoopBound(try ServerHost(options: options, loop: loop), eventLoop: loop)
        }.flatMap { bound in
            ServerBootstrap(group: loop)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .serverChannelOption(.backlog, value: 256)
                .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        if let n = options.socketSendBufferBytes {
                            try channel.syncOptions?.setOption(.socketOption(.so_sndbuf), value: SocketOptionValue(n))
                        }
                        try channel.pipeline.syncOperations.addHandler(ServerConnectionHandler(host: bound.value))
                    }
                }
                .bind(host: options.host, port: options.port)
                .flatMapErrorThrowing { error in
                    bound.value.shutdown()
                    throw error
                }
                .map { listener in
                    let port = listener.localAddress?.port ?? options.port
                    bound.value.log("listening on \(options.host):\(port), \(options.users.count) users")
                    return RuntimeServer(eventLoop: loop, host: options.host, port: port, listener: listener, bound: bound)
                }
        }
    }

    /// Calls the server API (RongCloud's REST API) on the loop.
    public func api(_ call: ServerAPICall) -> EventLoopFuture<Void> {
        eventLoop.submit { self.bound.value.feed(.api(call)) }
    }

    public func stats() -> EventLoopFuture<RuntimeServerStats> {
        eventLoop.submit { self.bound.value.stats }
    }

    /// Stops listening, closes every connection (the clients see FIN), cancels the timers and
    /// closes the events file.
    public func shutdown() -> EventLoopFuture<Void> {
        listener.close().recover { _ in }.flatMap {
            self.eventLoop.submit { self.bound.value.shutdown() }
        }
    }
}

/// The server core and its connections; confined to its event loop.
final class ServerHost {
    var core: ServerCore
    var clock = WallClock()
    let loop: EventLoop
    let timers: TimerTable<ServerTimer>
    var channels: [ConnectionID: Channel] = [:]
    var nextConnection: UInt64 = 1
    var stats = RuntimeServerStats()
    let events: LineLog?
    let pcap: PcapngCapture?
    let printer: (@Sendable (String) -> Void)?
    let maxOutboundBytes: Int
    let closeFlushTimeout: TimeAmount
    /// Per connection: bytes handed to the channel whose write has not completed.
    var pendingOut: [ConnectionID: Int] = [:]
    private var feeding = false
    private var queue: [ServerInput] = []
    private var stopped = false

    init(options: RuntimeServerOptions, loop: EventLoop) throws {
        var directory = ServerDirectory()
        if let secret = options.tokenSecret {
            directory.signer = RuntimeTokens.signer(secret: secret)
            directory.accounts = Set(options.users)
        } else {
            for u in options.users { directory.addUser(u, token: RuntimeServerOptions.token(for: u)) }
        }
        core = ServerCore(config: options.config, directory: directory)
        maxOutboundBytes = options.maxOutboundBytes
        closeFlushTimeout = options.closeFlushTimeout
        self.loop = loop
        timers = TimerTable(loop: loop)
        events = try options.eventsPath.map { try LineLog(path: $0) }
        pcap = try options.pcapPath.map { try PcapngCapture(path: $0, comment: "imsim serve (real traffic, server side)") }
        printer = options.log
    }

    func log(_ line: String) { printer?(line) }

    // MARK: Transport → core

    func accepted(_ channel: Channel) -> ConnectionID? {
        guard !stopped else { channel.close(promise: nil); return nil }
        let id = ConnectionID(nextConnection)
        nextConnection += 1
        channels[id] = channel
        if let pcap {
            pcap.opened(id, client: Self.endpoint(channel.remoteAddress), server: Self.endpoint(channel.localAddress), ns: WallClock.osEpochNs())
        }
        stats.socketsOpen += 1
        stats.connectionsAccepted += 1
        stats.connectionsOpen = channels.count
        feed(.connectionAccepted(id))
        return id
    }

    func received(_ bytes: [UInt8], on id: ConnectionID) {
        guard channels[id] != nil else { return }
        stats.bytesIn += bytes.count
        pcap?.data(id, toServer: true, bytes, ns: WallClock.osEpochNs())
        feed(.bytes(id, bytes))
    }

    /// The peer closed or reset: tell the core, unless the core closed it itself.
    func closed(_ id: ConnectionID, reason: TransportCloseReason) {
        guard channels.removeValue(forKey: id) != nil else { return }
        stats.connectionsOpen = channels.count
        pcap?.closed(id, byServer: false, reset: reason == .reset, ns: WallClock.osEpochNs())
        feed(.connectionClosed(id, reason))
    }

    // MARK: Core

    /// Feeds one input at the current server time. Inputs that arrive while effects are being
    /// applied (a close that reports synchronously) wait for the current one to finish.
    func feed(_ input: ServerInput) {
        guard !stopped else { return }
        queue.append(input)
        guard !feeding else { return }
        feeding = true
        while !queue.isEmpty {
            let next = queue.removeFirst()
            let now = clock.nowMs()
            let effects = core.handle(next, now: now)
            apply(effects, now: now)
        }
        feeding = false
    }

    func apply(_ effects: [ServerEffect], now: Int64) {
        for effect in effects {
            switch effect {
            case .send(let id, let bytes, _):
                guard let channel = channels[id] else { continue }
                let n = bytes.count
                let queued = pendingOut[id, default: 0] + n
                if queued > maxOutboundBytes {
                    closeSlowReader(id, channel, queued: queued - n)
                    continue
                }
                pendingOut[id] = queued
                stats.outboundQueuedBytes += n
                stats.peakOutboundQueuedBytes = max(stats.peakOutboundQueuedBytes, queued)
                stats.bytesOut += n
                pcap?.data(id, toServer: false, bytes, ns: WallClock.osEpochNs())
                channel.writeAndFlush(channel.allocator.buffer(bytes: bytes)).assumeIsolated().whenComplete { [weak self] _ in
                    guard let self else { return }
                    self.stats.outboundQueuedBytes -= n
                    if let left = self.pendingOut[id] { self.pendingOut[id] = left - n > 0 ? left - n : nil }
                }
            case .close(let id):
                guard let channel = channels.removeValue(forKey: id) else { continue }
                stats.connectionsOpen = channels.count
                pcap?.closed(id, byServer: true, reset: false, ns: WallClock.osEpochNs())
                // Read nothing more (after a protocol error the peer's input is refused, not
                // drained); flush what the core sent before, but reset if the peer will not take it.
                _ = channel.setOption(ChannelOptions.autoRead, value: false)
                TransportErrors.flushAndClose(channel)
                channel.eventLoop.scheduleTask(in: closeFlushTimeout) {
                    if channel.isActive { TransportErrors.reset(channel) }
                }
            case .setTimer(let timer, let after):
                timers.set(timer, after: after) { [unowned self] t in
                    self.stats.timersFired += 1
                    self.feed(.timerFired(t))
                }
            case .cancelTimer(let timer):
                timers.cancel(timer)
            case .event(let event):
                switch event {
                case .messageAccepted: stats.messagesAccepted += 1
                case .sessionOpened: stats.sessionsOpened += 1
                default: break
                }
                if events != nil || printer != nil {
                    let text = "\(event)"
                    events?.write("{\"t\":\(now),\"event\":\(JSONText.string(text))}")
                    printer?("\(now) \(text)")
                }
            }
        }
    }

    /// A peer that sends but does not read: reset its connection (which frees what was queued
    /// for it) and tell the core the transport is gone.
    func closeSlowReader(_ id: ConnectionID, _ channel: Channel, queued: Int) {
        channels.removeValue(forKey: id)
        stats.connectionsOpen = channels.count
        stats.slowReadersClosed += 1
        log("closing connection \(id.raw): slow reader (\(queued) bytes unsent, limit \(maxOutboundBytes))")
        pcap?.closed(id, byServer: true, reset: true, ns: WallClock.osEpochNs())
        _ = channel.setOption(ChannelOptions.autoRead, value: false)
        TransportErrors.reset(channel)
        feed(.connectionClosed(id, .reset))
    }

    /// A socket went away (however it was closed).
    func socketClosed() { stats.socketsOpen -= 1 }

    func shutdown() {
        guard !stopped else { return }
        stopped = true
        timers.cancelAll()
        for id in channels.keys.sorted() {
            pcap?.closed(id, byServer: true, reset: false, ns: WallClock.osEpochNs())
            channels[id]!.close(promise: nil)
        }
        channels = [:]
        events?.close()
        do { try pcap?.finish() } catch { log("pcap: \(error)") }
    }
}

extension ServerHost {
    /// An IPv4 endpoint for the capture (other families show as 127.0.0.1).
    static func endpoint(_ a: SocketAddress?) -> PcapngCapture.Endpoint {
        var bytes: [UInt8] = []
        if let ip = a?.ipAddress, case .v4 = a {
            bytes = ip.split(separator: ".").compactMap { UInt8($0) }
        }
        return PcapngCapture.Endpoint(address: bytes, port: UInt16(truncatingIfNeeded: a?.port ?? 0))
    }
}

/// One accepted connection's pipeline end: bytes and closes to the host.
final class ServerConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    let host: ServerHost
    var id: ConnectionID?
    var reason: TransportCloseReason?

    init(host: ServerHost) { self.host = host }

    func channelActive(context: ChannelHandlerContext) {
        id = host.accepted(context.channel)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        guard let id, let bytes = buffer.readBytes(length: buffer.readableBytes) else { return }
        host.received(bytes, on: id)
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        if reason == nil { reason = TransportErrors.closeReason(error) }
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let id {
            host.closed(id, reason: reason ?? .closedByPeer)
            host.socketClosed()
        }
        context.fireChannelInactive()
    }
}
