import IMWire
import NIOCore
import NIOPosix
import SimKernel

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Faults the proxy injects between clients and the server (`imsim proxy`).
public struct FaultProxyOptions: Sendable {
    public var listenHost = "127.0.0.1"
    /// 0 = any free port.
    public var listenPort = 0
    public var target: SocketAddress
    /// One-way delay added to every chunk, each direction.
    public var delay: SimDuration = .zero
    /// The delay varies uniformly in delay ± jitter (order within a direction is kept, as TCP does).
    public var jitter: SimDuration = .zero
    /// Resets (RST to both ends) per second per connection; 0 = none.
    public var resetRatePerSecond: Double = 0
    /// A black-hole window every `blackholeEvery` (from the proxy's start), lasting `blackholeFor`.
    public var blackholeEvery: SimDuration?
    public var blackholeFor: SimDuration = .seconds(10)
    public var blackholeMode: BlackholeMode = .hold
    public var seed: UInt64 = 1
    public var log: (@Sendable (String) -> Void)?
    /// Bytes one direction of one connection may hold (delayed or held by a black-hole, or
    /// waiting for a slow reader); past it the proxy stops reading from the sender (TCP
    /// backpressure) until half of it has drained.
    public var maxQueuedBytes = 4 << 20

    public init(target: SocketAddress) { self.target = target }
}

/// What a black-hole does to the connections it catches.
public enum BlackholeMode: String, Sendable, CaseIterable {
    /// A partition: nothing passes (bytes, FIN) until the window ends, then everything arrives —
    /// TCP retransmits. New connections wait for the window's end before reaching the server.
    case hold
    /// Half-open: every connection open during the window silently drops everything from then on,
    /// closes included; neither end is told. Connections made after the window are fine.
    case drop
}

public struct FaultProxyStats: Sendable, Hashable {
    public var accepted = 0
    public var open = 0
    public var resets = 0
    public var blackholes = 0
    public var halfOpened = 0
    public var bytesToServer = 0
    public var bytesToClients = 0
    public var bytesDropped = 0
    /// Bytes queued in the proxy now (all connections, both directions).
    public var queuedBytes = 0
    /// The most one direction of one connection ever held.
    public var peakQueuedBytes = 0
    /// Times the proxy stopped reading from a sender because its queue was full.
    public var readPauses = 0
    public init() {}
}

/// A TCP proxy on one event loop that delays, resets and black-holes the connections between
/// clients and the server, so that a real runtime sees real reconnects and half-open connections
/// on loopback. Its randomness comes from a seeded `RandomStream` (the times at which real
/// connections arrive are not seeded, so runs are similar, not identical).
public final class FaultProxy: Sendable {
    public let eventLoop: EventLoop
    public let port: Int
    private let listener: Channel
    private let bound: NIOLoopBound<ProxyHost>

    private init(eventLoop: EventLoop, port: Int, listener: Channel, bound: NIOLoopBound<ProxyHost>) {
        self.eventLoop = eventLoop
        self.port = port
        self.listener = listener
        self.bound = bound
    }

    public static func start(_ options: FaultProxyOptions, group: EventLoopGroup) -> EventLoopFuture<FaultProxy> {
        let loop = group.next()
        return loop.submit { NIOLoopBound(ProxyHost(options: options, loop: loop), eventLoop: loop) }.flatMap { bound in
            ServerBootstrap(group: loop)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .serverChannelOption(.backlog, value: 256)
                .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let host = bound.value
                        let link = host.accepted(channel)
                        try channel.pipeline.syncOperations.addHandler(ProxySideHandler(host: host, link: link, side: .client))
                    }
                }
                .bind(host: options.listenHost, port: options.listenPort)
                .map { listener in
                    bound.value.startSchedules()
                    let port = listener.localAddress?.port ?? options.listenPort
                    bound.value.log("proxy listening on \(options.listenHost):\(port) → \(options.target)")
                    return FaultProxy(eventLoop: loop, port: port, listener: listener, bound: bound)
                }
        }
    }

    /// Resets every open connection now (both ends get an RST). Returns how many.
    @discardableResult
    public func resetAll() -> EventLoopFuture<Int> {
        eventLoop.submit { self.bound.value.resetAll() }
    }

    /// Ends every black-hole window now (held bytes and connections go on at once).
    public func heal() -> EventLoopFuture<Void> {
        eventLoop.submit { self.bound.value.heal() }
    }

    /// Starts a black-hole window now.
    public func blackhole(for length: SimDuration, mode: BlackholeMode) -> EventLoopFuture<Void> {
        eventLoop.submit { self.bound.value.startBlackhole(for: length, mode: mode) }
    }

    public func stats() -> EventLoopFuture<FaultProxyStats> {
        eventLoop.submit { self.bound.value.stats }
    }

    public func shutdown() -> EventLoopFuture<Void> {
        listener.close().recover { _ in }.flatMap { self.eventLoop.submit { self.bound.value.shutdown() } }
    }
}

enum ProxySide { case client, server }

private func naturalLog(_ x: Double) -> Double { log(x) }

/// One proxied connection: the client's socket, the server's socket and a pipe each way.
final class ProxyLink {
    let id: Int
    var client: Channel?
    var server: Channel?
    var serverConnecting = false
    var toServer = ProxyPipe()
    var toClient = ProxyPipe()
    /// Half-open: everything is dropped from now on, nobody is told.
    var dead = false
    var finished = false
    var resetTask: Scheduled<Void>?
    /// The connect to the server a hold-mode black-hole postponed.
    var connectTask: Scheduled<Void>?
    init(id: Int) { self.id = id }
}

/// Chunks on their way in one direction, each due at a monotonic time; order is kept.
struct ProxyPipe {
    enum Item { case bytes(ByteBuffer), fin, rst }
    var queue: [(due: UInt64, item: Item)] = []
    var lastDue: UInt64 = 0
    var scheduled: Scheduled<Void>?
    /// Bytes in `queue`.
    var bytes = 0
    /// Reading from the sender is paused (the queue passed the limit).
    var paused = false
}

/// The proxy's state; confined to its event loop.
final class ProxyHost {
    let options: FaultProxyOptions
    let loop: EventLoop
    var rng: RandomStream
    var links: [Int: ProxyLink] = [:]
    var nextLink = 1
    var stats = FaultProxyStats()
    /// Until when (monotonic ns) a hold-mode black-hole holds everything.
    var holdUntil: UInt64 = 0
    /// Until when a drop-mode black-hole kills the connections it sees.
    var dropUntil: UInt64 = 0
    var schedule: Scheduled<Void>?
    var stopped = false

    init(options: FaultProxyOptions, loop: EventLoop) {
        self.options = options
        self.loop = loop
        rng = RandomStream(seed: options.seed)
    }

    func log(_ line: @autoclosure () -> String) { options.log?(line()) }

    static func now() -> UInt64 { NIODeadline.now().uptimeNanoseconds }

    func startSchedules() {
        guard let every = options.blackholeEvery, every > .zero else { return }
        schedule = loop.assumeIsolated().scheduleTask(in: .nanoseconds(every.nanoseconds)) { [weak self] in
            guard let self, !self.stopped else { return }
            self.startBlackhole(for: self.options.blackholeFor, mode: self.options.blackholeMode)
            self.startSchedules()
        }
    }

    // MARK: Connections

    func accepted(_ channel: Channel) -> ProxyLink {
        let link = ProxyLink(id: nextLink)
        nextLink += 1
        link.client = channel
        links[link.id] = link
        stats.accepted += 1
        stats.open = links.count
        if Self.now() < dropUntil { halfOpen(link) }
        armReset(link)
        link.serverConnecting = true
        let wait = holdUntil > Self.now() ? holdUntil - Self.now() : 0
        if wait > 0 {
            // A partition: the SYN to the server gets through when the window ends.
            link.connectTask = loop.assumeIsolated().scheduleTask(in: .nanoseconds(Int64(wait))) { [weak self] in self?.connectServer(link) }
        } else {
            connectServer(link)
        }
        return link
    }

    func connectServer(_ link: ProxyLink) {
        guard !link.finished, !stopped else { return }
        link.serverConnecting = true
        let bound = NIOLoopBound(self, eventLoop: loop)
        let boundLink = NIOLoopBound(link, eventLoop: loop)
        ClientBootstrap(group: loop)
            .connectTimeout(.seconds(10))
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ProxySideHandler(host: bound.value, link: boundLink.value, side: .server))
                }
            }
            .connect(to: options.target)
            .assumeIsolated()
            .whenComplete { [weak self] result in
                guard let self else { return }
                link.serverConnecting = false
                switch result {
                case .success(let channel):
                    if link.finished || self.stopped { channel.close(promise: nil); return }
                    link.server = channel
                    self.deliver(link, toServer: true)
                case .failure:
                    // The server refused: the client sees its connection reset.
                    self.finish(link)
                    if let c = link.client { TransportErrors.reset(c) }
                }
            }
    }

    func read(_ buffer: ByteBuffer, link: ProxyLink, from side: ProxySide) {
        guard !link.finished else { return }
        if link.dead {
            stats.bytesDropped += buffer.readableBytes
            return
        }
        enqueue(.bytes(buffer), link: link, toServer: side == .client)
    }

    func closed(link: ProxyLink, side: ProxySide, reset: Bool) {
        if side == .client { link.client = nil } else { link.server = nil }
        guard !link.finished else { return }
        if link.dead {
            // Half-open: the other end is never told; forget the link once both ends are gone.
            if link.client == nil && link.server == nil && !link.serverConnecting { finish(link) }
            return
        }
        enqueue(reset ? .rst : .fin, link: link, toServer: side == .client)
    }

    func finish(_ link: ProxyLink) {
        guard !link.finished else { return }
        link.finished = true
        link.resetTask?.cancel()
        link.toServer.scheduled?.cancel()
        link.toClient.scheduled?.cancel()
        stats.queuedBytes -= link.toServer.bytes + link.toClient.bytes
        link.toServer.bytes = 0
        link.toClient.bytes = 0
        links.removeValue(forKey: link.id)
        stats.open = links.count
    }

    /// Stops reading from the sender of a direction whose queue passed the limit; reads again
    /// once half of it has drained.
    func applyBackpressure(_ link: ProxyLink, toServer: Bool) {
        guard !link.finished, let source = toServer ? link.client : link.server else { return }
        let pipe = toServer ? link.toServer : link.toClient
        if !pipe.paused && pipe.bytes > options.maxQueuedBytes {
            if toServer { link.toServer.paused = true } else { link.toClient.paused = true }
            stats.readPauses += 1
            _ = source.setOption(ChannelOptions.autoRead, value: false)
        } else if pipe.paused && pipe.bytes <= options.maxQueuedBytes / 2 {
            if toServer { link.toServer.paused = false } else { link.toClient.paused = false }
            _ = source.setOption(ChannelOptions.autoRead, value: true)
            source.read()
        }
    }

    /// The receiver's socket can take bytes again.
    func writable(_ link: ProxyLink, side: ProxySide) {
        deliver(link, toServer: side == .server)
    }

    func heal() {
        holdUntil = 0
        dropUntil = 0
        let now = Self.now()
        for id in links.keys.sorted() {
            guard let link = links[id] else { continue }
            // Items queued during the window were due at its end: due now instead.
            for i in link.toServer.queue.indices { link.toServer.queue[i].due = min(link.toServer.queue[i].due, now) }
            for i in link.toClient.queue.indices { link.toClient.queue[i].due = min(link.toClient.queue[i].due, now) }
            link.toServer.lastDue = min(link.toServer.lastDue, now)
            link.toClient.lastDue = min(link.toClient.lastDue, now)
            if let task = link.connectTask {
                task.cancel()
                link.connectTask = nil
                connectServer(link)
            }
            deliver(link, toServer: true)
            if let l = links[id] { deliver(l, toServer: false) }
        }
    }

    // MARK: Pipes

    func delaySample() -> UInt64 {
        let d = options.delay.nanoseconds
        let j = options.jitter.nanoseconds
        let sample = j > 0 ? d + rng.uniform(-j...j) : d
        return UInt64(max(0, sample))
    }

    func enqueue(_ item: ProxyPipe.Item, link: ProxyLink, toServer: Bool) {
        let now = Self.now()
        var due = max(now + delaySample(), toServer ? link.toServer.lastDue : link.toClient.lastDue)
        due = max(due, holdUntil)
        let n: Int
        if case .bytes(let b) = item { n = b.readableBytes } else { n = 0 }
        stats.queuedBytes += n
        if toServer {
            link.toServer.lastDue = due
            link.toServer.queue.append((due, item))
            link.toServer.bytes += n
            stats.peakQueuedBytes = max(stats.peakQueuedBytes, link.toServer.bytes)
        } else {
            link.toClient.lastDue = due
            link.toClient.queue.append((due, item))
            link.toClient.bytes += n
            stats.peakQueuedBytes = max(stats.peakQueuedBytes, link.toClient.bytes)
        }
        deliver(link, toServer: toServer)
        applyBackpressure(link, toServer: toServer)
    }

    /// Writes every due item of one direction, then schedules the next. A black-hole in hold mode
    /// holds everything until it ends; bytes for the server wait for its socket.
    func deliver(_ link: ProxyLink, toServer: Bool) {
        guard !link.finished else { return }
        var pipe = toServer ? link.toServer : link.toClient
        pipe.scheduled?.cancel()
        pipe.scheduled = nil
        let now = Self.now()
        let target = toServer ? link.server : link.client
        let waitingForServer = toServer && target == nil && link.serverConnecting
        var ended: ProxyPipe.Item?
        var blocked = false
        if now >= holdUntil && !waitingForServer {
            while let head = pipe.queue.first, head.due <= now {
                // A receiver that does not read: keep the bytes here (bounded, see
                // applyBackpressure) instead of in the socket's unbounded outbound buffer.
                if case .bytes = head.item, let target, !target.isWritable { blocked = true; break }
                pipe.queue.removeFirst()
                if case .bytes(let buffer) = head.item {
                    pipe.bytes -= buffer.readableBytes
                    stats.queuedBytes -= buffer.readableBytes
                    if let target {
                        target.writeAndFlush(buffer, promise: nil)
                        if toServer { stats.bytesToServer += buffer.readableBytes } else { stats.bytesToClients += buffer.readableBytes }
                    } else {
                        stats.bytesDropped += buffer.readableBytes
                    }
                } else {
                    ended = head.item
                    break
                }
            }
        }
        if ended == nil, !waitingForServer, !blocked, let next = pipe.queue.first {
            let at = max(next.due, holdUntil)
            let wait = at > now ? at - now : 0
            pipe.scheduled = loop.assumeIsolated().scheduleTask(in: .nanoseconds(Int64(wait))) { [weak self] in
                self?.deliver(link, toServer: toServer)
            }
        }
        if toServer { link.toServer = pipe } else { link.toClient = pipe }
        applyBackpressure(link, toServer: toServer)
        guard let ended else { return }
        // A close travels behind the bytes before it; the other direction dies with the link.
        let other = toServer ? link.client : link.server
        finish(link)
        if let target {
            if case .rst = ended { TransportErrors.reset(target) } else { TransportErrors.flushAndClose(target) }
        }
        if let other, other.isActive { TransportErrors.flushAndClose(other) }
    }

    // MARK: Faults

    func armReset(_ link: ProxyLink) {
        guard options.resetRatePerSecond > 0 else { return }
        let u = Double(rng.next() >> 11) / Double(UInt64(1) << 53)
        let seconds = -naturalLog(1 - u) / options.resetRatePerSecond
        let ns = Int64(min(seconds, 86_400) * 1e9)
        link.resetTask = loop.assumeIsolated().scheduleTask(in: .nanoseconds(ns)) { [weak self, weak link] in
            guard let self, let link, !link.finished else { return }
            self.reset(link)
        }
    }

    func reset(_ link: ProxyLink) {
        guard !link.finished else { return }
        stats.resets += 1
        log("reset connection \(link.id)")
        let client = link.client, server = link.server
        finish(link)
        if let client { TransportErrors.reset(client) }
        if let server { TransportErrors.reset(server) }
    }

    func resetAll() -> Int {
        let all = links.keys.sorted().compactMap { links[$0] }
        for link in all { reset(link) }
        return all.count
    }

    func startBlackhole(for length: SimDuration, mode: BlackholeMode) {
        stats.blackholes += 1
        let end = Self.now() + UInt64(max(0, length.nanoseconds))
        log("black-hole (\(mode.rawValue)) for \(length)")
        switch mode {
        case .hold:
            holdUntil = max(holdUntil, end)
        case .drop:
            dropUntil = max(dropUntil, end)
            for id in links.keys.sorted() { halfOpen(links[id]!) }
        }
    }

    func halfOpen(_ link: ProxyLink) {
        guard !link.dead else { return }
        link.dead = true
        stats.halfOpened += 1
        link.resetTask?.cancel()
        for item in link.toServer.queue + link.toClient.queue {
            if case .bytes(let b) = item.item { stats.bytesDropped += b.readableBytes }
        }
        stats.queuedBytes -= link.toServer.bytes + link.toClient.bytes
        link.toServer.bytes = 0
        link.toClient.bytes = 0
        link.toServer.queue = []
        link.toClient.queue = []
        link.toServer.scheduled?.cancel()
        link.toClient.scheduled?.cancel()
    }

    func shutdown() {
        guard !stopped else { return }
        stopped = true
        schedule?.cancel()
        for id in links.keys.sorted() {
            let link = links[id]!
            finish(link)
            link.client?.close(promise: nil)
            link.server?.close(promise: nil)
        }
    }
}

/// One end of a proxied connection.
final class ProxySideHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    let host: ProxyHost
    let link: ProxyLink
    let side: ProxySide
    var sawReset = false

    init(host: ProxyHost, link: ProxyLink, side: ProxySide) {
        self.host = host
        self.link = link
        self.side = side
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        host.read(unwrapInboundIn(data), link: link, from: side)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { host.writable(link, side: side) }
        context.fireChannelWritabilityChanged()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        if TransportErrors.closeReason(error) == .reset { sawReset = true }
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        host.closed(link: link, side: side, reset: sawReset)
        context.fireChannelInactive()
    }
}
