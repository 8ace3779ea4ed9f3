import IMWire
import SimKernel

/// What the network is, before any device is added: the conditions of a link without overrides
/// and the TCP constants.
public struct NetworkOptions: Hashable, Sendable {
    /// The conditions of every link a device does not override (scenario `network`).
    public var conditions: NetworkConditions
    /// A connection attempt whose SYN cannot arrive within this fails (TCP connect timeout).
    public var connectTimeout: SimDuration

    public init(conditions: NetworkConditions = NetworkConditions(), connectTimeout: SimDuration = .seconds(10)) {
        self.conditions = conditions
        self.connectTimeout = connectTimeout
    }
}

/// Counters of what the links carried (part of the run summary, `WorldStats`).
public struct NetworkStats: Sendable, Equatable {
    public var connectionsOpened = 0
    public var connectionsRefused = 0
    public var bytesToServer = 0
    public var bytesToDevices = 0
    public var bytesLost = 0
    public init() {}
}

/// The simulated network between the devices and the server: one link per device (its
/// conditions, random streams, interface, partition and latency-spike state) and the TCP-like
/// connections over those links (`SimConnection`, two `Pipe`s each).
///
/// It owns every random draw of the links (`LinkStreams`, keyed by the instant of the draw) and
/// decides when what arrives; it schedules its own arrivals (`deliver`, `connectArrive`,
/// `connectComplete`, `closeNotice`) on the world's one kernel, and the World hands each of them
/// back when the kernel dispatches it (`synArrived`, `connectCompleted`, `deliver`,
/// `closeArrived`), then gives what arrived to the cores. The network never calls a core or the
/// World: what an arrival means for them is its return value.
///
/// The world's faults act on it through `reset`, `halfOpen`, `partition`, `spike`, `dropLocal`
/// and `serverCrashed`; the fault schedule itself (when, which device) stays with the World.
final class Network {
    /// One device's access link.
    struct Link {
        let device: String
        let conditions: NetworkConditions
        /// The random draws of this link (latencies, connect setup, segments, refusals, resets).
        var streams: LinkStreams
        /// The device's network interface is up (flapping, `network none` take it down).
        var interfaceUp = true
        /// The connection the device's core currently owns.
        var connection: UInt32?
        var partitionedUntil: SimTime = .zero
        var latencyFactor: Int64 = 1
        var spikeUntil: SimTime = .zero
    }

    /// What the World does with a SYN that reached the server side.
    enum SynOutcome: Equatable {
        /// Refused (server down or `refuseProbability`); the client learns it one downlink
        /// latency later (already scheduled).
        case refused(ConnectionID, device: Int)
        /// Accepted: the World tells the server core, then calls `synAck`.
        case accepted(ConnectionID, device: Int)
    }

    /// One side learned that its connection ended.
    enum CloseArrival: Equatable {
        case toServer(ConnectionID)
        /// `current`: it was the device core's connection (the core is told); otherwise only
        /// the world's notes may mention it.
        case toDevice(Int, ConnectionID, current: Bool)
    }

    /// What became of a write.
    enum Submitted: Equatable {
        case queued
        /// The path is dead (not established, or black-holed): the bytes are lost.
        case lost(ConnectionID)
        /// No connection to write on (nothing happens).
        case noConnection
    }

    let options: NetworkOptions
    private let kernel: Simulator<WorldEvent>
    @exclusivity(unchecked) private(set) var links: [Link] = []
    @exclusivity(unchecked) private(set) var connections: [SimConnection] = []
    @exclusivity(unchecked) private(set) var serverPartitionedUntil: SimTime = .zero
    @exclusivity(unchecked) private(set) var stats = NetworkStats()

    init(kernel: Simulator<WorldEvent>, options: NetworkOptions) {
        self.kernel = kernel
        self.options = options
    }

    /// Adds the link of the next device (its index is the device's index and node id).
    @discardableResult
    func addLink(device id: String, conditions: NetworkConditions? = nil) -> Int {
        links.append(Link(device: id, conditions: conditions ?? options.conditions, streams: LinkStreams(device: id)))
        return links.count - 1
    }

    // MARK: - Views

    private var now: SimTime { kernel.now }
    /// Device `d` is node `d`; the server is the node after the last device.
    private var serverNode: NodeID { NodeID(UInt32(links.count)) }
    private func node(_ d: Int) -> NodeID { NodeID(UInt32(d)) }

    var connectionCount: Int { connections.count }
    func device(ofConnection c: ConnectionID) -> Int? {
        c.raw < UInt64(connections.count) ? connections[Int(c.raw)].device : nil
    }
    func hasConnection(device d: Int) -> Bool { links[d].connection != nil }
    func isInterfaceUp(device d: Int) -> Bool { links[d].interfaceUp }
    func partitionedUntil(device d: Int) -> SimTime { links[d].partitionedUntil }
    func spikeUntil(device d: Int) -> SimTime { links[d].spikeUntil }
    /// Bytes still in flight on any live connection.
    var bytesInFlight: Int {
        connections.reduce(0) { $0 + ($1.phase == .closed ? 0 : $1.up.bytesQueued + $1.down.bytesQueued) }
    }

    /// Until when the path between device `d` and the server is black-holed (device or server
    /// partition), or nil.
    func partitionEnd(_ d: Int) -> SimTime? {
        let end = max(links[d].partitionedUntil, serverPartitionedUntil)
        return end > now ? end : nil
    }

    /// One one-way latency draw of device `d`'s link (spikes included).
    func latency(_ d: Int, toServer: Bool) -> SimDuration {
        let model = toServer ? links[d].conditions.uplink : links[d].conditions.downlink
        var rng = toServer ? links[d].streams.uplink.next(kernel.streams, at: now) : links[d].streams.downlink.next(kernel.streams, at: now)
        var l = model.sample(&rng)
        if links[d].spikeUntil > now { l = l * links[d].latencyFactor }
        return l
    }

    // MARK: - Connecting

    /// Opens a connection for device `d` (closing the one it had); returns its id (the next index).
    func open(device d: Int) -> ConnectionID {
        if links[d].connection != nil { close(device: d) }
        let index = connections.count
        let id = ConnectionID(UInt64(index))
        connections.append(SimConnection(id: id, device: d))
        links[d].connection = UInt32(index)
        stats.connectionsOpened += 1
        let c32 = UInt32(index)
        guard links[d].interfaceUp else {
            kernel.schedule(.closeNotice(connection: c32, toServer: false, reason: .networkDown), to: node(d), after: .zero)
            return id
        }
        // SYN: handshake setup + one-way latency; a black-holed path loses SYNs until it heals
        // (TCP retries), and the attempt times out if that takes too long.
        var connectRng = links[d].streams.connect.next(kernel.streams, at: now)
        let setup = links[d].conditions.connectSetup.sample(&connectRng)
        var arrive = now + setup + latency(d, toServer: true)
        if let end = partitionEnd(d), end > arrive { arrive = end + latency(d, toServer: true) }
        if arrive - now > options.connectTimeout {
            connections[index].connectTimeout = kernel.schedule(
                .closeNotice(connection: c32, toServer: false, reason: .timeout), to: node(d), after: options.connectTimeout)
        } else {
            kernel.schedule(.connectArrive(connection: c32), to: serverNode, at: arrive)
        }
        return id
    }

    /// The SYN of connection `c` reached the server side (`WorldEvent.connectArrive`); nil when
    /// the client gave the attempt up meanwhile.
    func synArrived(_ c: Int, serverListening: Bool) -> SynOutcome? {
        let d = connections[c].device
        guard connections[c].clientAttached, connections[c].phase == .connecting else { return nil }
        var refuseRng = links[d].streams.refuse.next(kernel.streams, at: now)
        if !serverListening || refuseRng.chance(links[d].conditions.refuseProbability.ratio) {
            connections[c].phase = .closed
            stats.connectionsRefused += 1
            kernel.schedule(.closeNotice(connection: UInt32(c), toServer: false, reason: .refused), to: node(d),
                            after: latency(d, toServer: false))
            return .refused(connections[c].id, device: d)
        }
        connections[c].phase = .established
        connections[c].serverAttached = true
        return .accepted(connections[c].id, device: d)
    }

    /// The server accepted connection `c`: the client learns it one downlink latency later.
    func synAck(_ c: Int) {
        kernel.schedule(.connectComplete(connection: UInt32(c)), to: node(connections[c].device),
                        after: latency(connections[c].device, toServer: false))
    }

    /// The SYN-ACK of connection `c` reached the device (`WorldEvent.connectComplete`): the
    /// device whose core learns it is open, or nil when that no longer applies.
    func connectCompleted(_ c: Int) -> Int? {
        let d = connections[c].device
        guard connections[c].clientAttached, connections[c].phase == .established,
              links[d].connection == UInt32(c), !connections[c].blackholed else { return nil }
        return d
    }

    // MARK: - Bytes

    /// Device `d` writes `bytes` on its connection.
    func submit(device d: Int, _ bytes: [UInt8]) -> Submitted {
        guard let c32 = links[d].connection else { return .noConnection }
        return submit(Int(c32), toServer: true, bytes)
    }

    /// The server writes `bytes` on connection `id` (nothing happens once its side is closed).
    func submit(server id: ConnectionID, _ bytes: [UInt8]) -> Submitted {
        let c = Int(id.raw)
        guard c < connections.count, connections[c].serverAttached else { return .noConnection }
        return submit(c, toServer: false, bytes)
    }

    private func submit(_ c: Int, toServer: Bool, _ bytes: [UInt8]) -> Submitted {
        guard connections[c].phase == .established, !connections[c].blackholed else {
            stats.bytesLost += bytes.count
            return .lost(connections[c].id)
        }
        let d = connections[c].device
        if toServer { stats.bytesToServer += bytes.count } else { stats.bytesToDevices += bytes.count }
        let lat = latency(d, toServer: toServer)
        let seed = links[d].streams.segments.nextSeed(kernel.streams, at: now)
        let ratio = links[d].conditions.splitProbability.ratio
        let bw = links[d].conditions.bandwidthBytesPerSecond
        let headChanged: Bool
        if RandomStream.firstChance(ratio, seed: seed) == false {
            // Most writes are not split: their segment stream is never seeded in full.
            headChanged = toServer
                ? connections[c].up.write(bytes, now: now, latency: lat, bandwidth: bw)
                : connections[c].down.write(bytes, now: now, latency: lat, bandwidth: bw)
        } else {
            var segments = RandomStream(seed: seed)
            let split = segments.chance(ratio)
            headChanged = toServer
                ? connections[c].up.write(bytes, now: now, latency: lat, bandwidth: bw, split: split, rng: &segments)
                : connections[c].down.write(bytes, now: now, latency: lat, bandwidth: bw, split: split, rng: &segments)
        }
        if headChanged { scheduleDelivery(c, toServer: toServer) }
        return .queued
    }

    private func scheduleDelivery(_ c: Int, toServer: Bool) {
        // Read in place: a copy of the Pipe costs a retain/release pair per delivery.
        guard let at = toServer ? connections[c].up.headArrival : connections[c].down.headArrival else { return }
        let target = toServer ? serverNode : node(connections[c].device)
        kernel.schedule(.deliver(connection: UInt32(c), toServer: toServer), to: target, at: max(at, now))
    }

    /// Who reads the bytes of a delivery (`deliver(connection:toServer:into:)`).
    enum Reader: Equatable {
        case server(ConnectionID)
        case device(Int)
    }

    /// The head segment of one direction of connection `c` is due (`WorldEvent.deliver`): the
    /// bytes due now (one read), moved into `bytes`, and who reads them — or nil when nothing
    /// reaches a core. The World reads them from its own variable and hands the buffer back
    /// afterwards (`WriteBufferPool`), with no payload copied and destroyed per delivery.
    func deliver(connection c: Int, toServer: Bool, into bytes: inout [UInt8]) -> Reader? {
        let d = connections[c].device
        if let end = partitionEnd(d) {
            // The path is black-holed: TCP keeps retransmitting; everything arrives after the heal.
            if toServer { connections[c].up.holdUntil(end) } else { connections[c].down.holdUntil(end) }
            scheduleDelivery(c, toServer: toServer)
            return nil
        }
        bytes = toServer ? connections[c].up.takeDue(now: now) : connections[c].down.takeDue(now: now)
        scheduleDelivery(c, toServer: toServer)
        guard !bytes.isEmpty, !connections[c].blackholed else { return nil }
        // Content, not only the event: two runs that deliver different bytes differ in digest.
        kernel.foldIntoDigest(StableHash.fnv1a(bytes))
        kernel.foldIntoDigest(UInt64(c) << 1 | (toServer ? 1 : 0))
        if toServer {
            guard connections[c].serverAttached else { return nil }
            return .server(connections[c].id)
        } else {
            guard connections[c].clientAttached, links[d].connection == UInt32(c) else { return nil }
            return .device(d)
        }
    }

    // MARK: - Closing

    /// Device `d` closes its connection: FIN follows the bytes already sent.
    func close(device d: Int) {
        guard let c32 = links[d].connection else { return }
        let c = Int(c32)
        links[d].connection = nil
        connections[c].clientAttached = false
        if let t = connections[c].connectTimeout { kernel.cancel(t) }
        if connections[c].serverAttached && !connections[c].blackholed {
            let at = max(now + latency(d, toServer: true), connections[c].up.lastArrival)
            kernel.schedule(.closeNotice(connection: c32, toServer: true, reason: .closedByPeer), to: serverNode, at: at)
        } else if !connections[c].serverAttached {
            connections[c].phase = .closed
        }
    }

    /// The server closes connection `id`: FIN follows the bytes already queued.
    func close(server id: ConnectionID) {
        let c = Int(id.raw)
        guard c < connections.count, connections[c].serverAttached else { return }
        connections[c].serverAttached = false
        let d = connections[c].device
        if connections[c].clientAttached && !connections[c].blackholed {
            let at = max(now + latency(d, toServer: false), connections[c].down.lastArrival)
            kernel.schedule(.closeNotice(connection: UInt32(c), toServer: false, reason: .closedByPeer), to: node(d), at: at)
        } else if !connections[c].clientAttached {
            connections[c].phase = .closed
        }
    }

    /// A close notice of connection `c` reached one side (`WorldEvent.closeNotice`); nil when
    /// that side already knew, or when a FIN waits for the bytes sent before it.
    func closeArrived(_ c: Int, toServer: Bool, reason: TransportCloseReason) -> CloseArrival? {
        if toServer {
            guard connections[c].serverAttached else { return nil }
            if reason == .closedByPeer, finWaits(c, toServer: true) { return nil }
            connections[c].serverAttached = false
            if !connections[c].clientAttached { connections[c].phase = .closed }
            return .toServer(connections[c].id)
        }
        let d = connections[c].device
        guard connections[c].clientAttached else { return nil }
        if reason == .closedByPeer, finWaits(c, toServer: false) { return nil }
        connections[c].clientAttached = false
        if !connections[c].serverAttached { connections[c].phase = .closed }
        guard links[d].connection == UInt32(c) else { return .toDevice(d, connections[c].id, current: false) }
        links[d].connection = nil
        return .toDevice(d, connections[c].id, current: true)
    }

    /// A FIN is the last segment of its direction: a peer reads every byte sent before it, then
    /// EOF. When bytes of that direction are still undelivered — due at this very instant (their
    /// delivery was scheduled after the FIN, which was scheduled at the last segment's arrival)
    /// or held by a partition — the FIN is put back behind them and true is returned.
    private func finWaits(_ c: Int, toServer: Bool) -> Bool {
        guard !(toServer ? connections[c].up.isEmpty : connections[c].down.isEmpty) else { return false }
        let last = toServer ? connections[c].up.lastArrival : connections[c].down.lastArrival
        kernel.schedule(.closeNotice(connection: UInt32(c), toServer: toServer, reason: .closedByPeer),
                        to: toServer ? serverNode : node(connections[c].device), at: max(now, last))
        return true
    }

    // MARK: - Faults

    /// Reset: in-flight bytes are lost and each side learns at its own time.
    func reset(device d: Int) {
        guard let c32 = links[d].connection else { return }
        let c = Int(c32)
        guard connections[c].phase == .established else { return }
        connections[c].up.clear()
        connections[c].down.clear()
        connections[c].phase = .closed
        let downLatency = latency(d, toServer: false)
        var resetRng = links[d].streams.reset.next(kernel.streams, at: now)
        let toClient = SimDuration(nanoseconds: resetRng.uniform(0...downLatency.nanoseconds))
        kernel.schedule(.closeNotice(connection: c32, toServer: false, reason: .reset), to: node(d), after: toClient)
        if connections[c].serverAttached {
            kernel.schedule(.closeNotice(connection: c32, toServer: true, reason: .reset), to: serverNode,
                            after: latency(d, toServer: true))
        }
    }

    /// Half-open: the path silently drops everything from now on; nobody is told.
    func halfOpen(device d: Int) {
        guard let c32 = links[d].connection else { return }
        let c = Int(c32)
        guard connections[c].phase == .established else { return }
        connections[c].blackholed = true
        connections[c].up.clear()
        connections[c].down.clear()
    }

    /// The device's interface went away (or changed): its socket errors locally at once; the
    /// server is not told (the path is gone), so its side stays half-open until its idle
    /// timeout. True when the device had a connection (its core must be told).
    func dropLocal(device d: Int) -> Bool {
        guard let c32 = links[d].connection else { return false }
        let c = Int(c32)
        connections[c].blackholed = true
        connections[c].up.clear()
        connections[c].down.clear()
        links[d].connection = nil
        connections[c].clientAttached = false
        if let t = connections[c].connectTimeout { kernel.cancel(t) }
        return true
    }

    func setInterface(device d: Int, up: Bool) { links[d].interfaceUp = up }

    /// The server process died: every server-side socket vanishes (the host's kernel sends RST).
    func serverCrashed() {
        for c in connections.indices where connections[c].serverAttached {
            connections[c].serverAttached = false
            connections[c].up.clear()
            connections[c].down.clear()
            if connections[c].clientAttached && !connections[c].blackholed {
                let d = connections[c].device
                kernel.schedule(.closeNotice(connection: UInt32(c), toServer: false, reason: .reset), to: node(d),
                                after: latency(d, toServer: false))
            } else {
                connections[c].phase = .closed
            }
        }
    }

    /// Device `d`'s path is black-holed until at least `until`.
    func partition(device d: Int, until: SimTime) {
        links[d].partitionedUntil = max(links[d].partitionedUntil, until)
    }

    /// Every path to the server is black-holed until at least `until`.
    func partitionServer(until: SimTime) {
        serverPartitionedUntil = max(serverPartitionedUntil, until)
    }

    /// Device `d`'s latencies are multiplied by `factor` until at least `until`.
    func spike(device d: Int, factor: Int64, until: SimTime) {
        links[d].latencyFactor = factor
        links[d].spikeUntil = max(links[d].spikeUntil, until)
    }

    /// A spike of device `d` ended; the factor goes back to 1 unless a later spike still runs.
    func spikeEnded(device d: Int) {
        if links[d].spikeUntil <= now { links[d].latencyFactor = 1 }
    }

    /// The liveness heal of the server's side: no partition of the server from now on.
    func healServer() { serverPartitionedUntil = now }

    /// The liveness heal of device `d`'s link: no partition, no spike from now on.
    func heal(device d: Int) {
        links[d].partitionedUntil = now
        links[d].spikeUntil = now
        links[d].latencyFactor = 1
    }
}
