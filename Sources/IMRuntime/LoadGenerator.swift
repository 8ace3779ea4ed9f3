import IMClient
import IMWire
import NIOCore
import NIOPosix
import SimKernel

/// `imsim loadgen` / `imsim bench runtime`: N runtime clients in one process, on one event loop,
/// sending private messages to each other through a real server for a bounded time.
public struct LoadOptions: Sendable {
    public var server: SocketAddress
    public var clients = 10
    public var duration: SimDuration = .seconds(10)
    public var workload: Workload = .rate(perSecond: 50)
    /// Users are `<prefix>0001`, `<prefix>0002`, … (the server must know them).
    public var userPrefix = "u"
    public var seed: UInt64 = 1
    /// How long to wait for every client to connect before sending.
    public var connectDeadline: SimDuration = .seconds(15)
    /// How long to wait after the last send for messages still in flight.
    public var drain: SimDuration = .seconds(2)
    /// Each client records its capture as `DIR/<userId>.jsonl`, or nil.
    public var captureDir: String?
    /// The server's token secret (`imsim serve --secret`): clients log in with signed tokens.
    public var tokenSecret: [UInt8]?
    public var log: (@Sendable (String) -> Void)?

    public enum Workload: Sendable, Equatable {
        /// Open loop: this many messages per second in all, exponential gaps per client.
        case rate(perSecond: Double)
        /// Closed loop: each client keeps this many sends outstanding (throughput).
        case window(Int)
    }

    public init(server: SocketAddress) { self.server = server }

    /// The i-th user id (1-based) for a prefix: `u0001`.
    public static func userId(_ i: Int, prefix: String = "u") -> String {
        let n = String(i)
        return prefix + String(repeating: "0", count: max(0, 4 - n.count)) + n
    }
}

/// What a load run measured.
public struct LoadReport: Sendable, Codable, Hashable {
    public var clients: Int
    public var connected: Int
    public var seconds: Double
    public var sent: Int
    public var sendOk: Int
    public var sendFailed: Int
    /// Distinct messages received by their peer.
    public var received: Int
    public var duplicates: Int
    public var reconnects: Int
    public var messagesPerSecond: Double
    /// Send call → `received` callback on the peer, ms.
    public var latencyP50Ms: Double
    public var latencyP99Ms: Double
    public var latencyMaxMs: Double
    /// Send call → `sendResult` (the server's PUBACK) on the sender, ms.
    public var ackP50Ms: Double
    public var ackP99Ms: Double
}

public enum LoadGenerator {
    /// Runs the load on one loop of `group`; the future completes with the report when the run,
    /// the drain and the clients' shutdown are done.
    public static func run(_ options: LoadOptions, group: EventLoopGroup) -> EventLoopFuture<LoadReport> {
        let loop = group.next()
        return loop.flatSubmit {
            let run = LoadRun(options: options, loop: loop)
            return run.start()
        }
    }
}

/// One load run's state; confined to its loop.
final class LoadRun {
    let options: LoadOptions
    let loop: EventLoop
    var rng: RandomStream
    var clients: [ClientHost] = []
    /// Send time (monotonic ns) by "sender:seq".
    var inFlight: [String: Int64] = [:]
    var seen: Set<String> = []
    var latencies: [Int64] = []
    var ackLatencies: [Int64] = []
    /// Send times of each client's outstanding sends, by messageId (from `messageInserted`).
    var pendingAcks: [[Int64: Int64]] = []
    var lastSendNs: [Int64] = []
    var sent = 0, sendOk = 0, sendFailed = 0, duplicates = 0
    var sending = false
    var seq: [Int] = []
    var startNs: Int64 = 0
    /// Tags this run's messages (a fresh store pulls older runs' messages of the same users).
    let runTag = String(WallClock.monotonicNs(), radix: 36)
    var endNs: Int64 = 0
    let done: EventLoopPromise<LoadReport>

    init(options: LoadOptions, loop: EventLoop) {
        self.options = options
        self.loop = loop
        rng = RandomStream(seed: options.seed)
        done = loop.makePromise()
    }

    func log(_ line: @autoclosure () -> String) { options.log?(line()) }

    func start() -> EventLoopFuture<LoadReport> {
        do {
            for i in 1...max(1, options.clients) {
                let user = LoadOptions.userId(i, prefix: options.userPrefix)
                // A fresh in-memory store restarts the clientUniqueId counter: with the same device id
                // as an earlier run, new sends would collide with the server's idempotency keys and
                // be absorbed as repeats (Docs/runtime.md, findings). A device per run avoids it.
                var o = RuntimeClientOptions(server: options.server,
                                             identity: DeviceIdentity(userId: user, deviceId: "\(user)-lg-\(runTag)", platform: .mobile),
                                             token: options.tokenSecret.map {
                                                 RuntimeTokens.issue(userId: user, secret: $0, validForMs: 86_400_000, nowMs: WallClock.osEpochMs())
                                             } ?? RuntimeServerOptions.token(for: user))
                o.connectTimeout = .seconds(10)
                if let dir = options.captureDir { o.capture = RecorderCaptureSink.file("\(dir)/\(user).jsonl", source: "imsim loadgen") }
                let host = try ClientHost(options: o, loop: loop)
                let index = i - 1
                host.appObserver = { [unowned self] cb, _ in self.callback(cb, client: index) }
                clients.append(host)
                seq.append(0)
                pendingAcks.append([:])
                lastSendNs.append(0)
            }
        } catch {
            for c in clients { _ = try? c.stop() }
            return loop.makeFailedFuture(error)
        }
        for c in clients { c.feed(.api(.connect(token: c.options.token, timeLimitSeconds: 0))) }
        waitForConnections(deadline: WallClock.monotonicNs() + options.connectDeadline.nanoseconds)
        return done.futureResult
    }

    var connectedCount: Int { clients.filter { $0.summary.connectedCount > 0 }.count }

    func waitForConnections(deadline: Int64) {
        if connectedCount == clients.count || WallClock.monotonicNs() >= deadline {
            log("\(connectedCount)/\(clients.count) clients connected; sending for \(options.duration)")
            begin()
            return
        }
        loop.assumeIsolated().scheduleTask(in: .milliseconds(20)) { [self] in waitForConnections(deadline: deadline) }
    }

    func begin() {
        sending = true
        startNs = WallClock.monotonicNs()
        loop.assumeIsolated().scheduleTask(in: .nanoseconds(options.duration.nanoseconds)) { [self] in
            sending = false
            endNs = WallClock.monotonicNs()
            loop.assumeIsolated().scheduleTask(in: .nanoseconds(options.drain.nanoseconds)) { [self] in finish() }
        }
        guard clients.count > 1 else { return }
        switch options.workload {
        case .rate(let perSecond):
            let perClient = max(perSecond, 0.001) / Double(clients.count)
            for i in clients.indices { scheduleNext(i, perClient: perClient) }
        case .window(let w):
            for i in clients.indices { for _ in 0..<max(1, w) { send(from: i) } }
        }
    }

    func scheduleNext(_ i: Int, perClient: Double) {
        let u = Double(rng.next() >> 11) / Double(UInt64(1) << 53)
        let gap = -ln(1 - u) / perClient
        loop.assumeIsolated().scheduleTask(in: .nanoseconds(Int64(min(gap, 3600) * 1e9))) { [self] in
            guard sending else { return }
            send(from: i)
            scheduleNext(i, perClient: perClient)
        }
    }

    func send(from i: Int) {
        guard sending else { return }
        var peer = rng.uniform(0..<(clients.count - 1))
        if peer >= i { peer += 1 }
        seq[i] += 1
        let key = "\(i):\(seq[i])"
        let t = WallClock.monotonicNs()
        inFlight[key] = t
        lastSendNs[i] = t
        sent += 1
        let to = ConversationKey(.privateChat, clients[peer].options.identity.userId)
        clients[i].feed(.api(.send(conversation: to, objectName: "RC:TxtMsg", content: "{\"content\":\"lg \(runTag) \(key)\"}",
                                   pushText: nil, mentioned: false)))
    }

    func callback(_ cb: AppCallback, client i: Int) {
        switch cb {
        case .received(let m, _, _, _):
            guard let r = m.content.range(of: "lg \(runTag) ") else { return }
            let key = String(m.content[r.upperBound...].prefix { $0 != "\"" })
            if !seen.insert(key).inserted { duplicates += 1; return }
            if let t = inFlight.removeValue(forKey: key) { latencies.append(WallClock.monotonicNs() - t) }
        case .messageInserted(let m):
            pendingAcks[i][m.messageId] = lastSendNs[i]
        case .sendResult(let id, _, _, let error):
            if error == nil { sendOk += 1 } else { sendFailed += 1 }
            if let t = pendingAcks[i].removeValue(forKey: id) { ackLatencies.append(WallClock.monotonicNs() - t) }
            if case .window = options.workload { send(from: i) }
        default:
            break
        }
    }

    func finish() {
        var reconnects = 0
        for c in clients {
            reconnects += max(0, c.summary.connectedCount - 1)
            _ = try? c.stop()
        }
        latencies.sort()
        ackLatencies.sort()
        func pct(_ p: Double, _ values: [Int64]? = nil) -> Double {
            let v = values ?? latencies
            guard !v.isEmpty else { return 0 }
            let idx = min(v.count - 1, Int((Double(v.count) * p).rounded(.up)) - 1)
            return Double(v[max(0, idx)]) / 1e6
        }
        let secs = Double(max(1, endNs - startNs)) / 1e9
        done.succeed(LoadReport(
            clients: clients.count, connected: connectedCount, seconds: secs, sent: sent, sendOk: sendOk, sendFailed: sendFailed,
            received: seen.count, duplicates: duplicates, reconnects: reconnects,
            messagesPerSecond: Double(seen.count) / secs, latencyP50Ms: pct(0.50), latencyP99Ms: pct(0.99),
            latencyMaxMs: latencies.last.map { Double($0) / 1e6 } ?? 0,
            ackP50Ms: pct(0.50, ackLatencies), ackP99Ms: pct(0.99, ackLatencies)))
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

private func ln(_ x: Double) -> Double { log(x) }
