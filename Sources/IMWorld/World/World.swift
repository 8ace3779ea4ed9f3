import IMClient
import IMServer
import IMStore
import IMWire
import SimKernel

/// The simulated world: the real client cores (one per device, each with its real SQLite store)
/// and the real server core, connected by simulated TCP links, driven by one seeded kernel.
/// A run is a pure function of (scenario, seed, build).
public final class World {
    public let scenario: Scenario
    public let seed: UInt64
    public let sim: Simulator<WorldEvent>
    // Single-threaded by construction (one kernel loop drives everything): the hot fields skip
    // Swift's dynamic exclusivity checks, which cost ~5% of a run (swift_beginAccess per access).
    @exclusivity(unchecked) public internal(set) var phase: RunPhase = .active

    @exclusivity(unchecked) var devices: [DeviceHost] = []
    @exclusivity(unchecked) var users: [UserHost] = []
    var userIndex: [String: Int] = [:]
    var deviceIndexById: [String: Int] = [:]
    @exclusivity(unchecked) var server: ServerHost
    /// The links and connections between the devices and the server.
    let network: Network
    /// Delivered write buffers, handed back to the next writes of the same side (storage reuse
    /// only): one pool per direction, so a client write gets a buffer sized for client writes
    /// and the server one of its (larger) answers; a mismatch costs a regrowth.
    let clientWriteBuffers = WriteBufferPool()
    let serverWriteBuffers = WriteBufferPool()
    /// The observers in stage order, boxed; they are called through `observerRefs` without
    /// retaining (`forEachObserver`): a loop over an array of existentials retains and releases
    /// each observer per fact (~4.5 M pairs an hour).
    private var observerBoxes: [ObserverBox] = []
    @exclusivity(unchecked) private var observerRefs = UnsafeMutableBufferPointer<Unmanaged<ObserverBox>>(start: nil, count: 0)
    /// Old `observerRefs` buffers, freed with the world (a loop may hold one).
    private var retiredObserverRefs: [UnsafeMutableBufferPointer<Unmanaged<ObserverBox>>] = []
    /// The world's own counters; the network's are `network.stats` (`stats` joins them).
    @exclusivity(unchecked) var counters = WorldStats()

    /// The detail stream of the fault occurrence being started (set by `faultStart`).
    @exclusivity(unchecked) var faultRng: RandomStream
    /// Per fault kind: one occurrence chain per device (by index), or one (`server`) for a
    /// world-wide kind.
    @exclusivity(unchecked) var faultStreams: [FaultKind: [OccurrenceStreams]] = [:]
    let faults: [FaultKind: FaultRate]
    public let clientConfig: ClientConfig
    let groups: [String: [String]]
    let rooms: [ChatroomSpec]
    let healAt: SimTime
    /// Random occurrences before this are skipped (`Scenario.randomFrom`).
    let randomFrom: SimTime
    let deadline: SimTime
    @exclusivity(unchecked) var pendingAppCalls: [(device: Int, call: ClientAPICall)] = []
    @exclusivity(unchecked) var burstUntil: SimTime = .zero
    /// Devices the script disconnected or logged out on purpose (not expected to converge).
    var deliberatelyOffline: Set<Int> = []
    @exclusivity(unchecked) var inBatch = false
    /// > 0 while the world applies a core's effects: the notes that applying them causes wait
    /// until observers have heard of the effects (`publishApplied`).
    @exclusivity(unchecked) var applying = 0
    @exclusivity(unchecked) var deferredNotes: [WorldNote] = []
    /// Extra convergence conditions (the oracles' "everything delivered"), checked in liveness:
    /// each says what it still waits for, or nil once satisfied.
    public var convergenceChecks: [(World) -> String?] = []
    public internal(set) var convergedAt: SimTime?

    /// Builds the world. Throws for scenario problems only found when building (population).
    /// - Parameter shared: seed-independent set-up made once for many seeds (sweeps); the run is
    ///   the same without it.
    public convenience init(scenario: Scenario, seed: UInt64) throws(ScenarioError) {
        try self.init(scenario: scenario, seed: seed, shared: nil)
    }

    /// The kernel's pending-event layout for worlds: a wheel of 2^24 ns (16.8 ms) buckets spanning
    /// 68.7 s holds network deliveries and the cores' ms–s timers unsorted until their bucket comes
    /// up, so the heap the kernel pops from stays small. Events come out in the same order on every
    /// layout (`WorldQueueLayoutTests`); mixed-1k's 15 min: 4,710.6 → 4,636.6 M instructions.
    public static let queueLayout = QueueLayout.wheel(bucketShift: 24, bucketCount: 4096)

    public init(scenario: Scenario, seed: UInt64, shared: WorldTemplate?,
                queue: QueueLayout = World.queueLayout) throws(ScenarioError) {
        self.scenario = scenario
        self.seed = seed
        sim = Simulator(seed: seed, queue: queue)
        let streams = sim.streams
        faultRng = streams.stream("faults/none")
        network = Network(kernel: sim, options: NetworkOptions(conditions: scenario.network))
        let epoch = scenario.epochMs ?? Scenario.defaultEpochMs

        // People and places (explicit + generated population).
        var builder = PopulationBuilder(scenario: scenario, streams: streams)
        try builder.build()
        groups = builder.groups
        rooms = builder.rooms
        clientConfig = World.clientConfig(scenario)
        let serverConfig = World.serverConfig(scenario)
        var directory = ServerDirectory()
        // The server checks signed tokens as the runtime does (Docs/reliability.md), with the
        // deterministic model MAC: valid tokens expire long after the run, expired ones before it
        // starts, revoked ones carry a wrong MAC.
        directory.signer = World.tokenSigner
        for u in builder.users {
            directory.accounts.insert(u.id)
            if u.banned { directory.bannedUsers.insert(u.id) }
        }
        directory.groups = builder.groups
        for g in scenario.groups where !g.muted.isEmpty { directory.groupMutes[g.id] = Set(g.muted) }
        directory.chatrooms = builder.rooms.filter(\.keepAlive).map(\.id)
        for r in builder.rooms where !r.whitelist.isEmpty { directory.chatroomWhitelists[r.id] = r.whitelist }
        var serverCore = ServerCore(config: serverConfig, directory: directory)
        serverCore.writeBuffers = serverWriteBuffers
        server = ServerHost(core: serverCore, clock: ServerClock(epochMs: epoch))

        // Faults (swarm: a random subset with scaled rates, drawn from its own stream).
        var chosen = scenario.faults?.random ?? [:]
        if scenario.swarm {
            var picked: [FaultKind: FaultRate] = [:]
            for kind in FaultKind.allCases {
                guard var rate = chosen[kind] else { continue }
                // One stream per kind: enabling another kind never changes this kind's pick.
                var swarmRng = streams.stream(StreamKey.swarm(kind))
                if swarmRng.chance(Ratio(1, 2)) {
                    // scale 0.25× … 2× in eighths
                    let eighths = swarmRng.uniform(2...16)
                    rate.rate.milliEvents = max(1, rate.rate.milliEvents * eighths / 8)
                    picked[kind] = rate
                }
            }
            chosen = picked
        }
        faults = chosen
        healAt = SimTime(nanoseconds: (scenario.liveness.healAt ?? scenario.duration).duration.nanoseconds)
        randomFrom = SimTime(nanoseconds: scenario.randomFrom?.duration.nanoseconds ?? 0)
        deadline = healAt + scenario.liveness.deadline.duration

        let storeOptions = IMStore.Options(dedupByMessageUId: scenario.client.storeDedup,
                                           recallDecrementsUnread: scenario.client.recallDecrementsUnread)
        // Every device starts from a copy of one freshly migrated database (the schema script
        // per device was ~4% of a mixed-1k run).
        var template: IMStore?
        func emptyStore() throws -> IMStore {
            if let template { return template }
            if let shared { return shared.emptyStore }
            let t = try IMStore(location: .memory, options: storeOptions)
            template = t
            return t
        }
        defer { template?.close() }
        // Only a power loss can tell what was synced from what was written: a run that cannot
        // have one keeps no synced copies on its devices (same results, less work).
        let canLosePower = faults[.powerLoss] != nil || faults[.powerLossTorn] != nil
            || scenario.script.contains { if case .powerLoss = $0.action { true } else { false } }
        for (ui, u) in builder.users.enumerated() {
            var host = UserHost(id: u.id, devices: [], streams: UserStreams(streams, user: u.id))
            host.groups = builder.userGroups[u.id] ?? []
            host.rooms = builder.rooms.filter { $0.members.contains(u.id) }.map(\.id)
            host.contacts = builder.contacts[u.id] ?? []
            host.contactHashes = host.contacts.map { StableHash.fnv1a($0) }
            host.groupHashes = host.groups.map { StableHash.fnv1a($0) }
            host.active = builder.activeUsers.contains(u.id)
            for d in u.devices {
                let index = devices.count
                sim.addNode(d.id)
                let store: IMStore
                var disk: SimDisk?
                do {
                    if scenario.client.store == .device {
                        var diskSeed = streams.stream(StreamKey.storage(device: d.id))
                        let dk = SimDisk(seed: diskSeed.next())
                        store = try IMStore(copyOf: emptyStore(), on: dk, options: storeOptions)
                        dk.faults.syncLies = scenario.client.syncLies
                        dk.tracksPowerLoss = canLosePower
                        disk = dk
                    } else {
                        store = try shared?.recycledStore(options: storeOptions)
                            ?? IMStore(copyOf: emptyStore(), options: storeOptions)
                    }
                } catch {
                    throw ScenarioError(path: "$", message: "cannot open the store of \(d.id): \(error)")
                }
                let identity = DeviceIdentity(userId: u.id, deviceId: d.id, platform: d.platform)
                devices.append(DeviceHost(
                    index: index, userIndex: ui, identity: identity, token: World.signedToken(for: u.id, state: u.token, epochMs: epoch),
                    autoConnect: d.autoConnect, core: nil, store: store, disk: disk,
                    clock: DeviceClock(epochMs: epoch, offsetMs: d.clockOffsetMs, driftPpm: d.clockDriftPpm)))
                network.addLink(device: d.id, conditions: d.network)
                deviceIndexById[d.id] = index
                host.devices.append(index)
            }
            userIndex[u.id] = users.count
            users.append(host)
        }
        sim.addNode("server")
        scheduleStart()
    }

    public static func token(for userId: String) -> String { "token-\(userId)" }

    /// The simulated server's token signer (a fixed key: tokens are part of the run).
    public static let tokenSigner = TokenSigner.model(key: 0x1A5E_ED70_4E11)

    /// The token a user's devices log in with, as the scenario's `token` state says.
    static func signedToken(for userId: String, state: UserSpec.TokenState, epochMs: Int64) -> String {
        switch state {
        case .valid: return tokenSigner.issue(userId: userId, expiryMs: epochMs + 365 * 86_400_000)
        case .expired: return tokenSigner.issue(userId: userId, expiryMs: epochMs - 1)
        case .revoked:
            // Signed by someone else: the MAC does not verify.
            return TokenSigner.model(key: 0xBAD).issue(userId: userId, expiryMs: epochMs + 365 * 86_400_000)
        }
    }

    /// Adds an observer after those of its stage and before those of later stages: the order
    /// of `addObserver` calls decides nothing across stages.
    public func addObserver(_ o: any WorldObserver) {
        let stage = o.stage
        let at = observerBoxes.firstIndex { $0.observer.stage > stage } ?? observerBoxes.endIndex
        observerBoxes.insert(ObserverBox(o), at: at)
        retiredObserverRefs.append(observerRefs)
        observerRefs = .allocate(capacity: observerBoxes.count)
        _ = observerRefs.initialize(from: observerBoxes.map { Unmanaged.passUnretained($0) })
    }

    deinit {
        observerRefs.deallocate()
        for r in retiredObserverRefs { r.deallocate() }
    }

    /// Calls `body` with each observer in order, retaining none (`observerBoxes` keeps them).
    @inline(__always)
    func forEachObserver(_ body: (any WorldObserver) -> Void) {
        for r in observerRefs { r._withUnsafeGuaranteedRef { body($0.observer) } }
    }

    // MARK: - Read-only views

    public var now: SimTime { sim.now }
    public var deviceCount: Int { devices.count }
    public func deviceId(_ d: Int) -> String { devices[d].identity.deviceId }
    public func userId(ofDevice d: Int) -> String { devices[d].identity.userId }
    public func deviceIndex(_ id: String) -> Int? { deviceIndexById[id] }
    public func devicesOfUser(_ userId: String) -> [Int] { userIndex[userId].map { users[$0].devices } ?? [] }
    public var userIds: [String] { users.map(\.id) }
    public func store(ofDevice d: Int) -> IMStore { devices[d].store }
    /// The simulated storage device of a device (`client.store: device`), else nil.
    public func disk(ofDevice d: Int) -> SimDisk? { devices[d].disk }
    public func localMs(ofDevice d: Int) -> Int64 { devices[d].clock.wallMs(at: sim.now) }
    public var serverMs: Int64 { server.clock.ms(at: sim.now) }
    public func connectionStatus(ofDevice d: Int) -> ConnectionStatus { devices[d].status }
    public func isRunning(device d: Int) -> Bool { devices[d].isRunning }
    public func hasConnected(device d: Int) -> Bool { devices[d].connectedOnce }
    public func gaveUp(device d: Int) -> Bool { devices[d].gaveUp }
    public func groupMembers(_ groupId: String) -> [String] { groups[groupId] ?? [] }
    public var chatroomIds: [String] { rooms.map(\.id) }
    public var serverCore: ServerCore { server.core }
    public func clientCore(ofDevice d: Int) -> ClientCore? { devices[d].core }
    /// A conversation as device `d`'s app reads it through the SDK (`ClientCore.conversation(_:)`,
    /// which shows a clearUnread the store has not taken yet as done); with no app running, as
    /// stored (an app kill drops what was owed). Nil: no row, or the read failed.
    public func appConversation(ofDevice d: Int, _ key: ConversationKey) -> StoredConversation? {
        if devices[d].core != nil { return (try? devices[d].core!.conversation(key)) ?? nil }
        return (try? devices[d].store.conversation(key)) ?? nil
    }
    /// How many of a conversation's messages device `d`'s app reads in its local history
    /// (`ClientCore.messageCount(in:)`: a left room whose removal a storage fault left owed holds
    /// only the rows stored after it left); with no app running, as stored. Nil: the read failed.
    public func appMessageCount(ofDevice d: Int, _ key: ConversationKey) -> Int? {
        if devices[d].core != nil { return try? devices[d].core!.messageCount(in: key) }
        return try? devices[d].store.messageCount(in: key)
    }
    public var healTime: SimTime { healAt }
    public var deadlineTime: SimTime { deadline }
    /// Connections opened so far (observers learn each one's id from `AppliedClientEffects`).
    public var connectionCount: Int { network.connectionCount }
    /// The device a connection belongs to.
    public func device(ofConnection c: ConnectionID) -> Int? { network.device(ofConnection: c) }
    public func platform(ofDevice d: Int) -> Platform { devices[d].identity.platform }
    /// Server epoch ms at simulated time zero.
    public var epochMs: Int64 { server.clock.epochMs }
    /// Bytes still in flight on any live connection.
    public var bytesInFlight: Int { network.bytesInFlight }
    /// The run's counters (the world's and the network's).
    public var stats: WorldStats {
        var s = counters
        s.connectionsOpened = network.stats.connectionsOpened
        s.connectionsRefused = network.stats.connectionsRefused
        s.bytesToServer = network.stats.bytesToServer
        s.bytesToDevices = network.stats.bytesToDevices
        s.bytesLost = network.stats.bytesLost
        return s
    }

    // MARK: - Running

    /// Runs the scenario to the end of the liveness phase (or `until`, or a stop request).
    @discardableResult
    public func run(until: SimTime? = nil, stopWhen: ((SimEvent<WorldEvent>) -> Bool)? = nil) -> StopReason {
        var driver = Driver(world: self)
        let limit = until.map { min($0, deadline) } ?? deadline
        let reason = sim.run(&driver, until: limit, stopWhen: stopWhen)
        if phase != .finished && (sim.now >= deadline || reason == .queueEmpty) { finish() }
        return reason
    }

    /// Ends the run: observers get `worldDidFinish`.
    func finish() {
        guard phase != .finished else { return }
        phase = .finished
        note(.phase(.finished))
        forEachObserver { $0.worldDidFinish(self) }
    }

    /// Asks the kernel to stop after the current event (oracles use it on a violation).
    public func requestStop() { sim.requestStop() }

    struct Driver: SimHandler {
        let world: World
        mutating func handle(_ event: SimEvent<WorldEvent>, in sim: Simulator<WorldEvent>) {
            world.dispatch(event)
        }
    }

    func note(_ n: WorldNote) {
        if applying > 0 { deferredNotes.append(n); return }
        forEachObserver { $0.world(self, note: n) }
    }

    /// Applies a core's effects with `apply`, then publishes them with `publish`, then the notes
    /// applying them caused, in order.
    @inline(__always)
    func applyThenPublish(_ apply: () -> Void, _ publish: () -> Void) {
        applying += 1
        apply()
        publish()
        applying -= 1
        if applying == 0 && !deferredNotes.isEmpty {
            let notes = deferredNotes
            deferredNotes.removeAll(keepingCapacity: true)
            for n in notes { note(n) }
        }
    }
}

/// Counters printed in the run summary.
public struct WorldStats: Sendable, Equatable, Codable {
    public var apiSends = 0
    public var connectionsOpened = 0
    public var connectionsRefused = 0
    public var reconnects = 0
    public var bytesToServer = 0
    public var bytesToDevices = 0
    public var bytesLost = 0
    public var faultsInjected = 0
    public var appKills = 0
    public var serverCrashes = 0
    public init() {}
}

/// An observer behind a class reference, so the per-fact loops can borrow it (`Unmanaged`).
final class ObserverBox {
    let observer: any WorldObserver
    init(_ observer: any WorldObserver) { self.observer = observer }
}
