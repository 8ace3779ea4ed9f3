import IMClient
import IMServer
import IMStore
import IMWire
import SimKernel

/// An IM property checked as the run goes. Oracles hear of the run through their suite (the
/// world observer methods, called by `OracleSuite` after its own bookkeeping, in the suite's
/// fixed oracle order) and report violations through it.
public protocol Oracle: WorldObserver {
    var name: String { get }
    /// The facts this oracle is handed: the suite calls it only for these hooks (every other
    /// hook of the oracle must be the protocol's empty default). `.all` unless it says less.
    var hooks: OracleHooks { get }
    /// The effects its applied hook looks at (`.every` unless it says less; see `AppliedKinds`).
    var appliedKinds: AppliedKinds { get }
    /// The server events its serverApplied hook looks at (`.every` unless it says less).
    var serverAppliedKinds: ServerAppliedKinds { get }
    /// The inputs its input hook looks at (`.every` unless it says less).
    var inputKinds: InputKinds { get }
    /// Called once when the run has ended (after the liveness phase).
    func finalCheck(_ world: World)
}

/// The world-observer hooks an oracle implements. The suite hands each fact only to the oracles
/// that take it, in the suite's fixed order: with ~20 oracles, calling every one for every fact
/// (most of them an empty default) was a large part of a sweep seed's instructions.
public struct OracleHooks: OptionSet, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let dispatching = OracleHooks(rawValue: 1 << 0)
    public static let input = OracleHooks(rawValue: 1 << 1)
    public static let applied = OracleHooks(rawValue: 1 << 2)
    public static let serverInput = OracleHooks(rawValue: 1 << 3)
    public static let serverApplied = OracleHooks(rawValue: 1 << 4)
    public static let note = OracleHooks(rawValue: 1 << 5)
    public static let didFinish = OracleHooks(rawValue: 1 << 6)
    public static let all = OracleHooks(rawValue: 0x7F)
}

extension Oracle {
    public var hooks: OracleHooks { .all }
    public var appliedKinds: AppliedKinds { .every }
    public var serverAppliedKinds: ServerAppliedKinds { .every }
    public var inputKinds: InputKinds { .every }
}

/// The client inputs an oracle's input hook looks at, as `AppliedKinds` for effect lists (most
/// inputs are bytes read and timers; few oracles follow more than the app's calls).
public struct InputKinds: OptionSet, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// Set in every input's kinds.
    public static let every = InputKinds(rawValue: 1 << 0)
    public static let api = InputKinds(rawValue: 1 << 1)
    public static let transport = InputKinds(rawValue: 1 << 2)
    public static let timerFired = InputKinds(rawValue: 1 << 3)
    public static let lifecycle = InputKinds(rawValue: 1 << 4)
    public static let networkChanged = InputKinds(rawValue: 1 << 5)

    /// `.every` and the input's kind.
    public static func of(_ input: ClientInput) -> InputKinds {
        switch input {
        case .api: return [.every, .api]
        case .transport: return [.every, .transport]
        case .timerFired: return [.every, .timerFired]
        case .lifecycle: return [.every, .lifecycle]
        case .networkChanged: return [.every, .networkChanged]
        }
    }
}

/// The server events an oracle's `world(_:serverApplied:)` looks at, as `AppliedKinds` for client
/// effect lists (most server lists accept no message: frames, timers, fan-outs).
public struct ServerAppliedKinds: OptionSet, Sendable {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    /// Set in every list's kinds.
    public static let every = ServerAppliedKinds(rawValue: 1 << 0)
    public static let messageAccepted = ServerAppliedKinds(rawValue: 1 << 1)
    public static let dropped = ServerAppliedKinds(rawValue: 1 << 2)
    public static let restarted = ServerAppliedKinds(rawValue: 1 << 3)
    public static let recalled = ServerAppliedKinds(rawValue: 1 << 4)
    public static let kicked = ServerAppliedKinds(rawValue: 1 << 5)
    public static let reconnectRefused = ServerAppliedKinds(rawValue: 1 << 6)
    /// Every other event.
    public static let otherEvent = ServerAppliedKinds(rawValue: 1 << 7)

    /// The kind of one event.
    public static func of(_ e: ServerEvent) -> ServerAppliedKinds {
        switch e {
        case .messageAccepted: return .messageAccepted
        case .dropped: return .dropped
        case .restarted: return .restarted
        case .recalled: return .recalled
        case .kicked: return .kicked
        case .reconnectRefused: return .reconnectRefused
        default: return .otherEvent
        }
    }
}

/// The kinds of client effect an oracle's `world(_:device:applied:)` looks at: the suite hands it
/// an effect list only when the list holds one of them (most lists are a frame and a timer).
/// `.every` (the default): every list, even one with none of its kinds — for an oracle that does
/// something per list (consumes what its input hook noted, judges the list as a whole).
public struct AppliedKinds: OptionSet, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// Set in every list's kinds.
    public static let every = AppliedKinds(rawValue: 1 << 0)
    public static let openConnection = AppliedKinds(rawValue: 1 << 1)
    public static let send = AppliedKinds(rawValue: 1 << 2)
    public static let closeConnection = AppliedKinds(rawValue: 1 << 3)
    /// `setTimer`, `cancelTimer`.
    public static let timer = AppliedKinds(rawValue: 1 << 4)
    /// `connectionStatus`, `connected`, `connectError`.
    public static let connection = AppliedKinds(rawValue: 1 << 5)
    public static let messageInserted = AppliedKinds(rawValue: 1 << 6)
    public static let sendResult = AppliedKinds(rawValue: 1 << 7)
    public static let received = AppliedKinds(rawValue: 1 << 8)
    public static let recalled = AppliedKinds(rawValue: 1 << 9)
    public static let recallResult = AppliedKinds(rawValue: 1 << 10)
    public static let syncReadStatus = AppliedKinds(rawValue: 1 << 11)
    /// `chatroomJoined`, `chatroomJoinFailed`, `chatroomQuit`, `chatroomKicked`, `chatroomDestroyed`.
    public static let chatroomMembership = AppliedKinds(rawValue: 1 << 12)
    /// `chatroomKV`, `chatroomKVResult` (the answers to the app's KV calls).
    public static let chatroomKVAnswer = AppliedKinds(rawValue: 1 << 13)
    public static let history = AppliedKinds(rawValue: 1 << 14)
    public static let remoteHistory = AppliedKinds(rawValue: 1 << 15)
    /// Every other callback (`dbOpened`, `readReceipt`, the KV sync callbacks).
    public static let otherCallback = AppliedKinds(rawValue: 1 << 16)
    /// `note(.stored)`.
    public static let stored = AppliedKinds(rawValue: 1 << 17)
    /// `note(.chatroomState)`.
    public static let chatroomState = AppliedKinds(rawValue: 1 << 18)
    /// Every other note.
    public static let otherNote = AppliedKinds(rawValue: 1 << 19)

    /// The kind of one effect.
    public static func of(_ e: ClientEffect) -> AppliedKinds {
        switch e {
        case .openConnection: return .openConnection
        case .send: return .send
        case .closeConnection: return .closeConnection
        case .setTimer, .cancelTimer: return .timer
        case .callback(let c):
            switch c {
            case .connectionStatus, .connected, .connectError: return .connection
            case .messageInserted: return .messageInserted
            case .sendResult: return .sendResult
            case .received: return .received
            case .recalled: return .recalled
            case .recallResult: return .recallResult
            case .syncReadStatus: return .syncReadStatus
            case .chatroomJoined, .chatroomJoinFailed, .chatroomQuit, .chatroomKicked, .chatroomDestroyed: return .chatroomMembership
            case .chatroomKV, .chatroomKVResult: return .chatroomKVAnswer
            case .history: return .history
            case .remoteHistory: return .remoteHistory
            default: return .otherCallback
            }
        case .note(.stored): return .stored
        case .note(.chatroomState): return .chatroomState
        case .note: return .otherNote
        }
    }
}

/// Which oracles run, and what happens at the first violation.
public struct OracleOptions: Sendable {
    public var enabled: Set<String>
    public var stopAtFirstViolation: Bool
    /// Scenario argument for the repro line (a path or a built-in name).
    public var scenarioArgument: String

    public static let allNames = ["no-duplicate", "order", "no-loss", "unread", "reconnect", "chatroom", "liveness"]
        + [ReconnectKickPolicyOracle.oracleName]
        + [UnreadModelOracle.oracleName, DeliveryOrderOracle.oracleName, RecallCopiesOracle.oracleName,
           ResendIdentityOracle.oracleName]
        + [StorageOracle.oracleName]
        + [HeartbeatOracle.oracleName, ChatroomQuotaOracle.oracleName, ContentOracle.oracleName]
        + MutationOracles.names

    public init(enabled: Set<String> = Set(OracleOptions.allNames), stopAtFirstViolation: Bool = true,
                scenarioArgument: String) {
        self.enabled = enabled
        self.stopAtFirstViolation = stopAtFirstViolation
        self.scenarioArgument = scenarioArgument
    }
}

/// Runs the oracles, keeps the message paths they report with, and counts "sometimes" coverage.
/// The one world observer of the oracles (stage `.judge`): it updates its bookkeeping for each
/// fact, then hands the fact to each oracle in a fixed order.
public final class OracleSuite: WorldObserver {
    public var stage: ObserverStage { .judge }
    public let options: OracleOptions
    public private(set) var violations: [Violation] = []
    /// The enabled oracles: the ones whose reports count.
    public private(set) var oracles: [any Oracle] = []
    /// The enabled oracles and the convergence trackers: no-loss, recall and storage decide when
    /// the liveness phase has converged (and the run stops), so they follow every run with a
    /// suite, enabled or not — the run's length, and so its digest, never depend on `--oracles`.
    /// A tracker that is not enabled reports nothing.
    private var running: [any Oracle] = []
    /// The trackers running only for convergence: their reports are dropped.
    private var silenced: Set<String> = []
    public let paths = MessagePaths()
    public let coverage = Coverage()
    weak var world: World?
    /// Kernel index of the event being dispatched.
    public private(set) var eventIndex: UInt64 = 0
    /// The frames the input being handled completed on its device's connection (decoded once
    /// here, before the oracles see the input).
    public private(set) var inboundFrames: [Frame] = []
    private var inbound: InboundFrames?
    /// Called with every violation as it is reported (the trace recorder writes it).
    public var onViolation: ((Violation) -> Void)?

    public init(options: OracleOptions) {
        self.options = options
    }

    /// Creates the enabled oracles and attaches everything to `world`.
    public func attach(to world: World) {
        self.world = world
        let all: [any Oracle] = [
            NoDuplicateOracle(suite: self), OrderOracle(suite: self), NoLossOracle(suite: self),
            UnreadOracle(suite: self), ReconnectOracle(suite: self), ChatroomOracle(suite: self),
            LivenessOracle(suite: self),
        ] + [ReconnectKickPolicyOracle(suite: self)]
            + [UnreadModelOracle(suite: self), DeliveryOrderOracle(suite: self), RecallCopiesOracle(suite: self),
               ResendIdentityOracle(suite: self)]
            + [StorageOracle(suite: self)]
            + [HeartbeatOracle(suite: self), ChatroomQuotaOracle(suite: self), ContentOracle(suite: self)]
            + MutationOracles.make(suite: self)
        oracles = all.filter { options.enabled.contains($0.name) }
        running = all.filter { options.enabled.contains($0.name) || $0 is NoLossOracle || $0 is RecallCopiesOracle || $0 is StorageOracle }
        silenced = Set(running.map(\.name)).subtracting(options.enabled)
        route()
        if options.enabled.contains("chatroom") || options.enabled.contains(ChatroomQuotaOracle.oracleName) {
            quotaModel = QuotaWindowModel(knobs: QuotaWindowModel.Knobs(world.scenario))
        }
        world.addObserver(self)
        if let noLoss = running.first(where: { $0 is NoLossOracle }) as? NoLossOracle {
            world.convergenceChecks.append { noLoss.undelivered($0) }
        }
        if let recall = running.first(where: { $0 is RecallCopiesOracle }) as? RecallCopiesOracle {
            world.convergenceChecks.append { recall.untold($0) }
        }
        if let storage = running.first(where: { $0 is StorageOracle }) as? StorageOracle {
            world.convergenceChecks.append { storage.unrecovered($0) }
        }
    }

    public func report(_ oracle: String, device: Int? = nil, conversation: ConversationKey? = nil,
                       messageUId: String? = nil, _ detail: String) {
        guard let world, !silenced.contains(oracle) else { return }
        let t = world.now
        let v = Violation(
            oracle: oracle, eventIndex: eventIndex, time: t.description, timeNanoseconds: t.nanoseconds,
            device: device.map { world.deviceId($0) }, conversation: conversation?.description, messageUId: messageUId,
            detail: detail, path: messageUId.map { paths.describe($0, world: world, focus: device) } ?? [],
            repro: "imsim run \(options.scenarioArgument) --seed \(world.seed) --until \(untilArgument(t))")
        violations.append(v)
        onViolation?(v)
        if options.stopAtFirstViolation { world.requestStop() }
    }

    private func untilArgument(_ t: SimTime) -> String {
        // Round up to the next millisecond so the violating event is included.
        let ms = (t.nanoseconds + 999_999) / 1_000_000
        return SimDuration.milliseconds(ms).description
    }

    /// The name a core's incomplete body (`ProtoBody.encodeBuilt`) is reported under: a core bug,
    /// judged by the suite itself whatever oracles are enabled.
    public static let wireOracle = "wire"

    /// The chatroom message-type whitelist the server API last set (nil: the scenario's).
    private var whitelistTypesSet: Set<String>?

    /// The chatroom message-type whitelist in force, from the scenario's `whitelistTypes` and the
    /// `setChatroomMessageWhitelist` calls the world made — never read from the server core.
    func chatroomWhitelistTypes(_ world: World) -> Set<String> {
        if let whitelistTypesSet { return whitelistTypesSet }
        if let s = scenarioWhitelists?.types { return s }
        return scenarioWhitelistSets(world).types
    }

    // MARK: - Observer (path bookkeeping and coverage)

    public func world(_ world: World, dispatching event: SimEvent<WorldEvent>) {
        eventIndex = event.index
        for o in onDispatching { o.world(world, dispatching: event) }
    }

    /// The rooms' user whitelists the server API set (replacing the scenario's).
    private var roomUserWhitelists: [String: Set<String>] = [:]

    /// A room's user whitelist in force, from the scenario's `chatrooms[].whitelist` and the
    /// `setChatroomWhitelist` calls the world made — never read from the server's directory.
    func chatroomUserWhitelist(_ world: World, room: String) -> Set<String> {
        if let set = roomUserWhitelists[room] { return set }
        return (scenarioWhitelists ?? scenarioWhitelistSets(world)).users[room] ?? []
    }

    /// The scenario's whitelists as sets, built once (they were built per chatroom message).
    private func scenarioWhitelistSets(_ world: World) -> (types: Set<String>, users: [String: Set<String>]) {
        var users: [String: Set<String>] = [:]
        for room in world.scenario.chatrooms where users[room.id] == nil { users[room.id] = Set(room.whitelist) }
        let sets = (types: Set(world.scenario.server.chatroom.whitelistTypes), users: users)
        scenarioWhitelists = sets
        return sets
    }

    /// A chatroom message's type or sender is on a whitelist in force (§6: never dropped by the quota).
    func chatroomWhitelisted(_ world: World, _ m: AcceptedMessage) -> Bool {
        chatroomWhitelistTypes(world).contains(m.objectName)
            || chatroomUserWhitelist(world, room: m.conversation.targetId).contains(m.senderUserId)
    }

    public func world(_ world: World, serverInput: ServerInput, serverMs: Int64) {
        switch serverInput {
        case .api(.setChatroomMessageWhitelist(let names)): whitelistTypesSet = Set(names)
        case .api(.setChatroomUserWhitelist(let room, let users)): roomUserWhitelists[room] = Set(users)
        default: break
        }
        for o in onServerInput { o.world(world, serverInput: serverInput, serverMs: serverMs) }
    }

    public func world(_ world: World, device: Int, input: ClientInput, localMs: Int64) {
        if inbound == nil { inbound = InboundFrames(config: world.clientConfig) }
        inboundFrames = inbound!.frames(device: device, input: input)
        switch input {
        case .api(.resend): coverage.hit("resend")
        case .api(.recall): coverage.hit("recall")
        case .lifecycle(.foreground): coverage.hit("foreground")
        case .networkChanged: coverage.hit("network change")
        case .transport(.closed(let r)): coverage.hit("connection closed: \(r.rawValue)")
        default: break
        }
        let kinds = InputKinds.of(input)
        for i in onInput.indices where !onInputKinds[i].isDisjoint(with: kinds) {
            onInput[i].world(world, device: device, input: input, localMs: localMs)
        }
    }

    /// Whether the oracles may read device `d`'s store as they like (shared, lean reads): not on
    /// a simulated disk, where a read may draw from the device's storage stream, so the oracles'
    /// reads stay exactly the app-facing ones they always made.
    static func readsDrawNothing(_ world: World, _ d: Int) -> Bool { world.devices[d].disk == nil }

    /// Reads of device `d`'s store shared by the oracles judging its effect list, or nil (read
    /// the store directly; `readsDrawNothing`).
    func storeReads(_ world: World, _ d: Int) -> StoreReads? {
        guard readsDevice == d, Self.readsDrawNothing(world, d) else { return nil }
        let store = world.store(ofDevice: d)
        while readers.count <= d { readers.append(nil) }
        if let r = readers[d], r.store === store { return r }
        let r = StoreReads(store)
        readers[d] = r
        return r
    }

    public func world(_ world: World, device: Int, applied effects: AppliedClientEffects) {
        readsDevice = device
        defer {
            if device < readers.count { readers[device]?.forget() }
            readsDevice = -1
        }
        var kinds = AppliedKinds.every
        for e in effects {
            kinds.formUnion(.of(e))
            switch e {
            case .callback(.messageInserted(let row)):
                if let cuid = row.clientUniqueId { paths.sent(device: device, clientUniqueId: cuid, messageId: row.messageId, at: world.now) }
            case .callback(.sendResult(let id, let uid, _, let error)):
                if let uid, error == nil { paths.sendResult(uid, device: device, messageId: id, at: world.now) }
                if error != nil { coverage.hit("send failed") }
            case .note(.stored(let id, let uid, _, _, let dir, let isNew)):
                if let uid { paths.stored(uid, device: device, messageId: id, send: dir == .send, isNew: isNew, at: world.now) }
            case .callback(.received(let m, let left, let offline, let hasPackage)):
                if let uid = m.messageUId {
                    paths.notified(uid, device: device, left: left, offline: offline, hasPackage: hasPackage, at: world.now)
                }
                if offline { coverage.hit("offline message") }
            case .note(.skipped(let uid, _, let reason)):
                if let uid { paths.skipped(uid, device: device, reason: reason, at: world.now) }
                coverage.hit("skipped: " + Coverage.shape(reason))
            case .note(.reconnectScheduled): coverage.hit("reconnect scheduled")
            case .note(.syncState(let from, .offline, _)) where from.isPulling:
                coverage.hit("reconnect during a pull")
            case .note(.requestTimedOut): coverage.hit("request timeout")
            case .callback(.chatroomKicked): coverage.hit("chatroom kicked")
            case .note(.incompleteBody(let i)):
                report(Self.wireOracle, device: device, "client core built an incomplete body: \(i)")
            default: break
            }
        }
        quotaModel?.clientSent(effects.effects)
        for i in onApplied.indices where !onAppliedKinds[i].isDisjoint(with: kinds) {
            onApplied[i].world(world, device: device, applied: effects)
        }
    }

    /// The §6 window model the chatroom and quota oracles both judge by, fed once per fact
    /// (nil when neither runs).
    private(set) var quotaModel: QuotaWindowModel?
    /// Its judgements of the server effect list being dispatched.
    private(set) var quotaJudgements: [QuotaWindowModel.Judgement] = []

    public func world(_ world: World, serverApplied serverEffects: AppliedServerEffects) {
        var kinds = ServerAppliedKinds.every
        for case .event(let e) in serverEffects {
            kinds.formUnion(.of(e))
            switch e {
            case .messageAccepted(let m):
                paths.accepted(m, at: world.now, world: world)
                if m.conversation.type == .chatroom { coverage.hit("chatroom message") }
                if let reason = m.droppedForEveryone {
                    paths.dropped(m.messageUId, user: nil, reason: reason, at: world.now)
                    coverage.hit("drop: \(reason.rawValue)")
                }
            case .duplicateSendAbsorbed(let uid, _, _):
                paths.absorbed(uid, at: world.now)
                coverage.hit("idempotent accept")
            case .fannedOut(let uid, _, let dev, _, let via):
                if let d = world.deviceIndex(dev) { paths.fanOut(uid, device: d, via: via, at: world.now) }
                if via == .syncEcho { coverage.hit("sync echo") }
            case .pulled(_, _, let dev, let topic, let uids, _, let finished):
                if let d = world.deviceIndex(dev) { for u in uids { paths.pulled(u, device: d, topic: topic, at: world.now) } }
                if !finished { coverage.hit("pull page not finished") }
                // The pager never splits a run of equal dataTimes: it cut the page short or took the run whole.
                let size = world.scenario.server.pullPageSize
                if topic == Topic.pullMsg.rawValue && ((!finished && uids.count < size) || uids.count > max(1, size)) {
                    coverage.hit("same-ms page boundary")
                }
            case .dropped(let uid, _, let user, let reason):
                if let uid { paths.dropped(uid, user: user, reason: reason, at: world.now) }
                coverage.hit("drop: \(reason.rawValue)")
            case .kicked: coverage.hit("session kicked")
            case .chatroomLeft(_, _, let reason): coverage.hit("chatroom left: \(reason.rawValue)")
            case .offlineStored: coverage.hit("offline inbox")
            case .restarted: coverage.hit("server restart")
            case .incompleteBody(let i):
                report(Self.wireOracle, "server core built an incomplete body: \(i)")
            default: break
            }
        }
        if quotaModel != nil {
            quotaJudgements = quotaModel!.serverEffects(serverEffects.effects, serverMs: world.serverMs) { chatroomWhitelisted(world, $0) }
        }
        for i in onServerApplied.indices where !onServerAppliedKinds[i].isDisjoint(with: kinds) {
            onServerApplied[i].world(world, serverApplied: serverEffects)
        }
    }

    public func world(_ world: World, note: WorldNote) {
        if case .fault(let kind, _, true, _) = note { coverage.hit("fault: \(kind.rawValue)") }
        for o in onNote { o.world(world, note: note) }
    }

    public func worldDidFinish(_ world: World) {
        for o in running { o.finalCheck(world) }
        for o in onDidFinish { o.worldDidFinish(world) }
    }

    // MARK: - Routing (stored last: the fields above keep their places for modules built before)

    /// `running`, per hook: the oracles that take it, in the same order.
    private var onDispatching: [any Oracle] = []
    private var onInput: [any Oracle] = []
    /// `onInput`'s `inputKinds` (all of them with `handEveryFact`).
    private var onInputKinds: [InputKinds] = []
    private var onApplied: [any Oracle] = []
    /// `onApplied`'s `appliedKinds` (all of them with `handEveryFact`).
    private var onAppliedKinds: [AppliedKinds] = []
    private var onServerInput: [any Oracle] = []
    private var onServerApplied: [any Oracle] = []
    /// `onServerApplied`'s `serverAppliedKinds` (all of them with `handEveryFact`).
    private var onServerAppliedKinds: [ServerAppliedKinds] = []
    private var onNote: [any Oracle] = []
    private var onDidFinish: [any Oracle] = []

    /// Hand every fact to every oracle, whatever hooks it declares (the routing tests compare;
    /// set before the run starts).
    var handEveryFact = false {
        didSet { route() }
    }

    private func route() {
        func taking(_ h: OracleHooks) -> [any Oracle] {
            handEveryFact ? running : running.filter { $0.hooks.contains(h) }
        }
        onDispatching = taking(.dispatching)
        onInput = taking(.input)
        onInputKinds = onInput.map { handEveryFact ? InputKinds(rawValue: .max) : $0.inputKinds }
        onApplied = taking(.applied)
        onAppliedKinds = onApplied.map { handEveryFact ? AppliedKinds(rawValue: .max) : $0.appliedKinds }
        onServerInput = taking(.serverInput)
        onServerApplied = taking(.serverApplied)
        onServerAppliedKinds = onServerApplied.map { handEveryFact ? ServerAppliedKinds(rawValue: .max) : $0.serverAppliedKinds }
        onNote = taking(.note)
        onDidFinish = taking(.didFinish)
    }

    /// Per device, its store's reads; remembered only while one of its effect lists is judged
    /// (`readsDevice`: that device, -1 outside `world(_:device:applied:)`).
    private var readers: [StoreReads?] = []
    private var readsDevice = -1
    private var scenarioWhitelists: (types: Set<String>, users: [String: Set<String>])?
}

/// Per-message path steps (send → accept → fan-out → store → notify), kept compact (no strings
/// on the hot path) and rendered only for a violation, focused on the device concerned.
public final class MessagePaths {
    enum Kind: UInt8 { case send, accepted, sendResult, fanOut, pulled, stored, notified, skipped, dropped, absorbed }
    struct Step {
        var time: SimTime
        var kind: Kind
        var device: Int32        // -1 = none
        var a: Int64             // messageId / left / via / reason index …
        var b: Int64
    }
    /// Every step in the order it was added, with its messageUId: appended without hashing the
    /// messageUId (most paths are never rendered), grouped by messageUId only when a violation
    /// asks for one (`steps(of:)`).
    private var log: [(uid: String, step: Step)] = []
    /// Positions in `log` of each messageUId's first `maxSteps` steps, for `log[..<indexed]`.
    private var index: [String: [Int]] = [:]
    private var indexed = 0
    private var sends: [Int64: (device: Int, messageId: Int64, time: SimTime)] = [:]
    private var texts: [String] = []
    private var textIndex: [String: Int64] = [:]
    /// Server facts about each accepted message.
    public private(set) var acceptedMessages: [String: AcceptedMessage] = [:]
    private let maxSteps = 4096

    private func intern(_ s: String) -> Int64 {
        if let i = textIndex[s] { return i }
        texts.append(s)
        textIndex[s] = Int64(texts.count - 1)
        return Int64(texts.count - 1)
    }

    func add(_ uid: String, _ step: Step) {
        log.append((uid, step))
    }

    /// `uid`'s steps, oldest first, at most `maxSteps` (the first ones).
    private func steps(of uid: String) -> [Step] {
        while indexed < log.count {
            Self.append(indexed, to: &index[log[indexed].uid, default: []], max: maxSteps)
            indexed += 1
        }
        return (index[uid] ?? []).map { log[$0].step }
    }

    private static func append(_ position: Int, to list: inout [Int], max: Int) {
        if list.count < max { list.append(position) }
    }

    func sent(device: Int, clientUniqueId: Int64, messageId: Int64, at t: SimTime) {
        sends[clientUniqueId] = (device, messageId, t)
    }

    func accepted(_ m: AcceptedMessage, at t: SimTime, world: World) {
        acceptedMessages[m.messageUId] = m
        if let s = sends.removeValue(forKey: m.clientUniqueId) {
            add(m.messageUId, Step(time: s.time, kind: .send, device: Int32(s.device), a: s.messageId, b: 0))
        }
        add(m.messageUId, Step(time: t, kind: .accepted, device: -1, a: 0, b: 0))
    }

    func sendResult(_ uid: String, device: Int, messageId: Int64, at t: SimTime) {
        add(uid, Step(time: t, kind: .sendResult, device: Int32(device), a: messageId, b: 0))
    }
    func fanOut(_ uid: String, device: Int, via: DeliveryPath, at t: SimTime) {
        add(uid, Step(time: t, kind: .fanOut, device: Int32(device), a: intern(via.rawValue), b: 0))
    }
    func pulled(_ uid: String, device: Int, topic: String, at t: SimTime) {
        add(uid, Step(time: t, kind: .pulled, device: Int32(device), a: intern(topic), b: 0))
    }
    func stored(_ uid: String, device: Int, messageId: Int64, send: Bool, isNew: Bool, at t: SimTime) {
        add(uid, Step(time: t, kind: .stored, device: Int32(device), a: messageId, b: (send ? 1 : 0) | (isNew ? 2 : 0)))
    }
    func notified(_ uid: String, device: Int, left: Int, offline: Bool, hasPackage: Bool, at t: SimTime) {
        add(uid, Step(time: t, kind: .notified, device: Int32(device), a: Int64(left), b: (offline ? 1 : 0) | (hasPackage ? 2 : 0)))
    }
    func skipped(_ uid: String, device: Int, reason: String, at t: SimTime) {
        add(uid, Step(time: t, kind: .skipped, device: Int32(device), a: intern(reason), b: 0))
    }
    func dropped(_ uid: String, user: String?, reason: DropReason, at t: SimTime) {
        add(uid, Step(time: t, kind: .dropped, device: -1, a: intern(user ?? "everyone"), b: intern(reason.rawValue)))
    }
    func absorbed(_ uid: String, at t: SimTime) {
        add(uid, Step(time: t, kind: .absorbed, device: -1, a: 0, b: 0))
    }

    /// The path of `uid`, with every step of the focus device (and the sender) and a count of the
    /// others.
    public func describe(_ uid: String, world: World, focus: Int? = nil) -> [String] {
        let all = steps(of: uid)
        let m = acceptedMessages[uid]
        var out: [String] = []
        var othersFannedOut = 0
        for s in all {
            let dev = s.device >= 0 ? world.deviceId(Int(s.device)) : ""
            let relevant = s.device < 0 || focus == nil || Int(s.device) == focus || s.kind == .send || s.kind == .sendResult
            if !relevant {
                if s.kind == .fanOut { othersFannedOut += 1 }
                continue
            }
            let text: String
            switch s.kind {
            case .send: text = "send on \(dev) (messageId \(s.a))"
            case .accepted:
                if let m {
                    text = "server accepted from \(m.senderDeviceId ?? m.senderUserId): \(m.conversation) \(m.objectName) dataTime \(m.dataTime) → \(m.recipients.count) recipient(s)"
                } else { text = "server accepted" }
            case .sendResult: text = "sendResult ok on \(dev) (messageId \(s.a))"
            case .fanOut: text = "fan-out \(texts[Int(s.a)]) → \(dev)"
            case .pulled: text = "pulled by \(dev) (\(texts[Int(s.a)]))"
            case .stored: text = "stored on \(dev) as messageId \(s.a) \(s.b & 1 != 0 ? "SEND" : "RECEIVE")\(s.b & 2 != 0 ? "" : " (update)")"
            case .notified: text = "onReceived on \(dev) left=\(s.a) offline=\(s.b & 1 != 0) hasPackage=\(s.b & 2 != 0)"
            case .skipped: text = "skipped on \(dev): \(texts[Int(s.a)])"
            case .dropped: text = "dropped for \(texts[Int(s.a)]): \(texts[Int(s.b)])"
            case .absorbed: text = "server absorbed a repeat (idempotent accept)"
            }
            out.append("t=\(s.time)  \(text)")
        }
        if othersFannedOut > 0 { out.append("(fanned out to \(othersFannedOut) other device(s))") }
        return out
    }
}

/// "Sometimes" coverage: how often interesting things happened in a run (or a sweep).
public final class Coverage {
    public private(set) var counts: [String: Int] = [:]
    public init() {}
    public func hit(_ what: String) { counts[what, default: 0] += 1 }
    /// A reason with its numbers (times, cursors, ids) replaced by `N`, so one kind of event is
    /// one counter: "dataTime 1767225679701 older than room cursor 1767225683758" →
    /// "dataTime N older than room cursor N".
    public static func shape(_ reason: String) -> String {
        // ASCII (every reason the cores write): byte by byte — an ASCII byte is a whole
        // Character except in "\r\n", which holds no digit either, so the result is the same as
        // the Character loop below, without grapheme breaking (~10× the instructions).
        if let ascii = reason.utf8.withContiguousStorageIfAvailable({ bytes -> String? in
            guard !bytes.contains(where: { $0 >= 0x80 }) else { return nil }
            var out: [UInt8] = []
            out.reserveCapacity(bytes.count)
            var inNumber = false
            for b in bytes {
                if b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") {
                    if !inNumber { out.append(UInt8(ascii: "N")) }
                    inNumber = true
                } else {
                    out.append(b)
                    inNumber = false
                }
            }
            return String(decoding: out, as: UTF8.self)
        }), let ascii {
            return ascii
        }
        var out = ""
        var inNumber = false
        for ch in reason {
            if ch.isASCII && ch.isNumber {
                if !inNumber { out.append("N") }
                inNumber = true
            } else {
                out.append(ch)
                inNumber = false
            }
        }
        return out
    }
    /// Sorted by name.
    public var sorted: [(String, Int)] { counts.keys.sorted().map { ($0, counts[$0]!) } }
}
