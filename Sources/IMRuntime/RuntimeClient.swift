import IMClient
import IMStore
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

/// What `RuntimeClient` hosts and where it connects.
public struct RuntimeClientOptions: Sendable {
    public var server: SocketAddress
    public var identity: DeviceIdentity
    public var token: String
    public var config = ClientConfig()
    /// The SQLite database file (WAL); nil = in memory.
    public var storePath: String?
    /// TCP connect timeout (the core's CONNACK timeout covers the rest).
    public var connectTimeout: TimeAmount = .seconds(10)
    /// Added to the OS wall clock to give the device clock (a skewed phone).
    public var clockOffsetMs: Int64 = 0
    /// Records the production capture, or nil.
    public var capture: ClientCaptureFactory?
    /// A line per callback and state change for a human, or nil.
    public var log: (@Sendable (String) -> Void)?

    public init(server: SocketAddress, identity: DeviceIdentity, token: String) {
        self.server = server
        self.identity = identity
        self.token = token
    }
}

/// What a client saw, for tests and the CLI's closing line.
public struct RuntimeClientSummary: Sendable, Hashable {
    /// messageUIds of `received` callbacks, in order (a duplicate shows twice).
    public var received: [String] = []
    /// messageUIds of successful `sendResult` callbacks, in order.
    public var sent: [String] = []
    public var sendOk = 0
    public var sendFailed = 0
    public var connectionsOpened = 0
    public var connectFailures = 0
    public var transportsLost = 0
    /// `connected` status callbacks (the first connect and every reconnect).
    public var connectedCount = 0
    public var statuses: [ConnectionStatus] = []
    /// Codes of `connectError` callbacks (31004 token incorrect, 31020 token expired, …).
    public var connectErrors: [Int32] = []
    public var bytesIn = 0
    public var bytesOut = 0
    public var bytesDropped = 0
    public var inputs = 0
    public init() {}

    /// messageUIds received more than once, sorted.
    public var duplicates: [String] {
        var seen: [String: Int] = [:]
        for u in received { seen[u, default: 0] += 1 }
        return seen.filter { $0.value > 1 }.map(\.key).sorted()
    }
}

/// A client driver hosting one `ClientCore` with its store on one event loop: `.openConnection`
/// becomes a TCP connect, reads become `.bytes`, the core's timers run on the loop, its callbacks
/// are logged and recorded. The device clock is the real wall clock (plus an optional offset).
public final class RuntimeClient: Sendable {
    public let eventLoop: EventLoop
    public let identity: DeviceIdentity
    let bound: NIOLoopBound<ClientHost>

    init(eventLoop: EventLoop, identity: DeviceIdentity, bound: NIOLoopBound<ClientHost>) {
        self.eventLoop = eventLoop
        self.identity = identity
        self.bound = bound
    }

    /// Opens the store and the capture on `eventLoop`; the client is idle until `connect`.
    public static func start(_ options: RuntimeClientOptions, eventLoop: EventLoop) -> EventLoopFuture<RuntimeClient> {
        eventLoop.submit {
            let host = try ClientHost(options: options, loop: eventLoop)
            return RuntimeClient(eventLoop: eventLoop, identity: options.identity, bound: NIOLoopBound(host, eventLoop: eventLoop))
        }
    }

    /// Calls the SDK API (on the loop).
    public func call(_ api: ClientAPICall) {
        eventLoop.execute { self.bound.value.feed(.api(api)) }
    }

    /// `connect` with the token of the options.
    public func connect(timeLimitSeconds: Int32 = 0) {
        eventLoop.execute { let h = self.bound.value; h.feed(.api(.connect(token: h.options.token, timeLimitSeconds: timeLimitSeconds))) }
    }

    public func lifecycle(_ change: AppLifecycle) {
        eventLoop.execute { self.bound.value.feed(.lifecycle(change)) }
    }

    /// The device's network: down (the socket dies locally, the server is not told), up, or a
    /// change of interface (wifi ↔ cellular: the old socket dies).
    public func network(available: Bool, changeInterface: Bool = false) {
        eventLoop.execute { self.bound.value.setNetwork(up: available, changeInterface: changeInterface) }
    }

    /// Observes every callback (called on the loop, after the core's effects were applied).
    public func observe(_ observer: @escaping @Sendable (AppCallback, Int64) -> Void) {
        eventLoop.execute { self.bound.value.observers.append(observer) }
    }

    /// Runs a script (steps relative to now); the future completes after its last step.
    public func run(_ script: ClientScript) -> EventLoopFuture<Void> {
        eventLoop.flatSubmit { ScriptRunner.run(script, host: self.bound.value) }
    }

    public func summary() -> EventLoopFuture<RuntimeClientSummary> {
        eventLoop.submit { self.bound.value.summary }
    }

    /// Reads the store on the loop (tests, the CLI's closing report).
    public func withStore<T: Sendable>(_ body: @escaping @Sendable (IMStore) throws -> T) -> EventLoopFuture<T> {
        eventLoop.submit { try body(self.bound.value.store) }
    }

    /// Stops like a process exit: timers die, the socket closes, the capture is finished and the
    /// store closed. Returns what the client saw.
    public func stop() -> EventLoopFuture<RuntimeClientSummary> {
        eventLoop.submit { try self.bound.value.stop() }
    }
}

/// The client core, its store, its connection and its timers; confined to its event loop.
final class ClientHost {
    let options: RuntimeClientOptions
    let loop: EventLoop
    var core: ClientCore
    let store: IMStore
    var clock: WallClock
    let timers: TimerTable<ClientTimer>
    let capture: (any ClientCaptureSink)?
    var summary = RuntimeClientSummary()
    var observers: [@Sendable (AppCallback, Int64) -> Void] = []
    /// A loop-confined observer (the load generator's).
    var appObserver: ((AppCallback, Int64) -> Void)?

    /// The current connection attempt; a channel or result of an older attempt is ignored.
    var attempt: UInt64 = 0
    var connecting = false
    var channel: Channel?
    /// Sockets given up when the network went away (the server is not told; closed at stop).
    var abandoned: [Channel] = []
    var networkUp = true
    var stopped = false

    // What the app remembers (the script's `resend` / `recall` act on these).
    var lastFailedMessageId: Int64?
    var lastSentOk: Int64?

    private var feeding = false
    private var queue: [ClientInput] = []

    init(options: RuntimeClientOptions, loop: EventLoop) throws {
        self.options = options
        self.loop = loop
        clock = WallClock(offsetMs: options.clockOffsetMs)
        var fresh = true
        do {
            if let path = options.storePath {
                fresh = access(path, F_OK) != 0
                store = try IMStore.file(path)
            } else {
                store = try IMStore.inMemory()
            }
        } catch {
            throw RuntimeError.store(path: options.storePath ?? ":memory:", message: "\(error)")
        }
        core = ClientCore(identity: options.identity, config: options.config, store: store)
        timers = TimerTable(loop: loop)
        let startMs = clock.nowMs()
        do {
            // After the core: it writes its dedup switch into the store's options.
            capture = try options.capture?(ClientCaptureContext(identity: options.identity, config: options.config,
                                                                storeOptions: store.options, startMs: startMs, freshStore: fresh))
        } catch {
            store.close()
            throw error
        }
        capture?.appStarted(localMs: startMs)
    }

    func log(_ line: @autoclosure () -> String) { options.log?(line()) }

    // MARK: Core

    /// Feeds one input at the device's current time, records it, applies the effects. Inputs that
    /// arrive while effects are applied (a connect failing at once, a close reported
    /// synchronously) are queued behind the current one, as a real SDK's serial queue would.
    func feed(_ input: ClientInput) {
        guard !stopped else { return }
        queue.append(input)
        guard !feeding else { return }
        feeding = true
        while !queue.isEmpty {
            let next = queue.removeFirst()
            let now = clock.nowMs()
            summary.inputs += 1
            capture?.input(next, localMs: now)
            let effects = core.handle(next, now: DeviceTime(milliseconds: now))
            capture?.effects(effects, localMs: now)
            apply(effects, now: now)
        }
        feeding = false
    }

    func apply(_ effects: [ClientEffect], now: Int64) {
        for effect in effects {
            switch effect {
            case .openConnection:
                openConnection()
            case .send(let bytes, _):
                if let channel {
                    summary.bytesOut += bytes.count
                    channel.writeAndFlush(channel.allocator.buffer(bytes: bytes), promise: nil)
                } else {
                    summary.bytesDropped += bytes.count
                }
            case .closeConnection:
                closeConnection()
            case .setTimer(let timer, let after):
                timers.set(timer, after: after) { [unowned self] t in self.feed(.timerFired(t)) }
            case .cancelTimer(let timer):
                timers.cancel(timer)
            case .callback(let cb):
                app(cb, now: now)
            case .note(let note):
                if case .state(let from, let to, let reason) = note { log("\(now) state \(from) → \(to) (\(reason))") }
            }
        }
    }

    /// What the app does with a callback: remember, count, log, tell observers.
    func app(_ cb: AppCallback, now: Int64) {
        switch cb {
        case .received(let m, _, _, _):
            if let uid = m.messageUId { summary.received.append(uid) }
            log("\(now) received \(m.messageUId ?? "-") \(m.conversation) from \(m.senderUserId) sentTime \(m.sentTime): \(m.content)")
        case .sendResult(let id, let uid, _, let error):
            if error == nil {
                summary.sendOk += 1
                if let uid { lastSentOk = id; summary.sent.append(uid) }
            } else {
                summary.sendFailed += 1
                lastFailedMessageId = id
            }
            log("\(now) sendResult #\(id) \(uid ?? "-") \(error.map { "error \($0)" } ?? "ok")")
        case .connectionStatus(let s):
            summary.statuses.append(s)
            if s == .connected { summary.connectedCount += 1 }
            log("\(now) status \(s)")
        case .connectError(let code):
            summary.connectErrors.append(code)
            log("\(now) connectError \(code)")
        case .messageInserted(let m):
            log("\(now) messageInserted #\(m.messageId) \(m.conversation) \(m.content)")
        default:
            log("\(now) \(cb)")
        }
        for o in observers { o(cb, now) }
        appObserver?(cb, now)
    }

    // MARK: Transport

    func openConnection() {
        closeConnection()
        attempt &+= 1
        let a = attempt
        guard networkUp else {
            feed(.transport(.closed(.networkDown)))
            return
        }
        connecting = true
        summary.connectionsOpened += 1
        let bound = NIOLoopBound(self, eventLoop: loop)
        ClientBootstrap(group: loop)
            .connectTimeout(options.connectTimeout)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ClientConnectionHandler(host: bound.value, attempt: a))
                }
            }
            .connect(to: options.server)
            .assumeIsolated()
            .whenComplete { [weak self] result in
                guard let self else { return }
                switch result {
                case .success(let channel):
                    // A close or a newer attempt came first: this socket is not wanted.
                    if a != self.attempt || self.stopped { channel.close(promise: nil) }
                case .failure(let error):
                    guard a == self.attempt, self.connecting else { return }
                    self.connecting = false
                    self.summary.connectFailures += 1
                    self.feed(.transport(.closed(TransportErrors.connectFailure(error))))
                }
            }
    }

    /// The core closes its connection (FIN after what was written); its late events are ignored.
    func closeConnection() {
        attempt &+= 1
        connecting = false
        if let channel {
            self.channel = nil
            TransportErrors.flushAndClose(channel)
        }
    }

    func opened(_ channel: Channel, attempt a: UInt64) {
        guard a == attempt, connecting, !stopped else { channel.close(promise: nil); return }
        connecting = false
        self.channel = channel
        feed(.transport(.opened))
    }

    func received(_ bytes: [UInt8], attempt a: UInt64) {
        guard a == attempt, channel != nil else { return }
        summary.bytesIn += bytes.count
        feed(.transport(.bytes(bytes)))
    }

    func lost(attempt a: UInt64, reason: TransportCloseReason) {
        guard a == attempt, channel != nil else { return }
        channel = nil
        summary.transportsLost += 1
        feed(.transport(.closed(reason)))
    }

    /// The interface went away: the socket errors locally at once; the server is not told (its
    /// side stays half-open until its idle timeout), as in the simulator's `dropLocalConnection`.
    func dropLocalConnection() {
        let hadTransport = channel != nil || connecting
        attempt &+= 1
        connecting = false
        if let channel { abandoned.append(channel); self.channel = nil }
        if hadTransport { feed(.transport(.closed(.networkDown))) }
    }

    func setNetwork(up: Bool, changeInterface: Bool) {
        if !up {
            guard networkUp else { return }
            networkUp = false
            dropLocalConnection()
            log("network down")
            feed(.networkChanged(available: false))
        } else {
            if networkUp && !changeInterface { return }
            if networkUp { dropLocalConnection() }
            networkUp = true
            log("network up")
            feed(.networkChanged(available: true))
        }
    }

    func stop() throws -> RuntimeClientSummary {
        guard !stopped else { return summary }
        stopped = true
        timers.cancelAll()
        attempt &+= 1
        channel?.close(promise: nil)
        channel = nil
        for c in abandoned { c.close(promise: nil) }
        abandoned = []
        defer { store.close() }
        try capture?.finish(store: store, localMs: clock.nowMs())
        return summary
    }
}

/// The client connection's pipeline end: open, bytes and loss to the host, tagged with the attempt.
final class ClientConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    let host: ClientHost
    let attempt: UInt64
    var reason: TransportCloseReason?

    init(host: ClientHost, attempt: UInt64) {
        self.host = host
        self.attempt = attempt
    }

    func channelActive(context: ChannelHandlerContext) {
        host.opened(context.channel, attempt: attempt)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        guard let bytes = buffer.readBytes(length: buffer.readableBytes) else { return }
        host.received(bytes, attempt: attempt)
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        if reason == nil { reason = TransportErrors.closeReason(error) }
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        host.lost(attempt: attempt, reason: reason ?? .closedByPeer)
        context.fireChannelInactive()
    }
}
