import IMClient
import IMServer
import IMStore
import IMWire
import SimKernel

/// An IM property checked as the run goes. Oracles are world observers that report violations
/// through the suite.
public protocol Oracle: WorldObserver {
    var name: String { get }
    /// Called once when the run has ended (after the liveness phase).
    func finalCheck(_ world: World)
}

/// Which oracles run, and what happens at the first violation.
public struct OracleOptions: Sendable {
    public var enabled: Set<String>
    public var stopAtFirstViolation: Bool
    /// Scenario argument for the repro line (a path or a built-in name).
    public var scenarioArgument: String

    public static let allNames = ["no-duplicate", "order", "no-loss", "unread", "reconnect", "chatroom", "liveness"]

    public init(enabled: Set<String> = Set(OracleOptions.allNames), stopAtFirstViolation: Bool = true,
                scenarioArgument: String) {
        self.enabled = enabled
        self.stopAtFirstViolation = stopAtFirstViolation
        self.scenarioArgument = scenarioArgument
    }
}

/// Runs the oracles, keeps the message paths they report with, and counts "sometimes" coverage.
public final class OracleSuite: WorldObserver {
    public let options: OracleOptions
    public private(set) var violations: [Violation] = []
    public private(set) var oracles: [any Oracle] = []
    public let paths = MessagePaths()
    public let coverage = Coverage()
    weak var world: World?
    /// Kernel index of the event being dispatched.
    public private(set) var eventIndex: UInt64 = 0
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
        ]
        oracles = all.filter { options.enabled.contains($0.name) }
        world.addObserver(self)
        for o in oracles { world.addObserver(o) }
        if let noLoss = oracles.first(where: { $0 is NoLossOracle }) as? NoLossOracle {
            world.convergenceChecks.append { noLoss.allDelivered($0) }
        }
    }

    public func report(_ oracle: String, device: Int? = nil, conversation: ConversationKey? = nil,
                       messageUId: String? = nil, _ detail: String) {
        guard let world else { return }
        let t = world.now
        let v = Violation(
            oracle: oracle, eventIndex: eventIndex, time: t.description, timeNanoseconds: t.nanoseconds,
            device: device.map { world.deviceId($0) }, conversation: conversation?.description, messageUId: messageUId,
            detail: detail, path: messageUId.map { paths.describe($0, world: world) } ?? [],
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

    // MARK: - Observer (path bookkeeping and coverage)

    public func world(_ world: World, dispatching event: SimEvent<WorldEvent>) {
        eventIndex = event.index
    }

    public func world(_ world: World, device: Int, input: ClientInput, localMs: Int64) {
        switch input {
        case .api(.resend): coverage.hit("resend")
        case .api(.recall): coverage.hit("recall")
        case .lifecycle(.foreground): coverage.hit("foreground")
        case .networkChanged: coverage.hit("network change")
        case .transport(.closed(let r)): coverage.hit("connection closed: \(r.rawValue)")
        default: break
        }
    }

    public func world(_ world: World, device: Int, effects: [ClientEffect]) {
        for e in effects {
            switch e {
            case .callback(.messageInserted(let row)):
                if let cuid = row.clientUniqueId { paths.sent(device: device, clientUniqueId: cuid, messageId: row.messageId, at: world.now) }
            case .callback(.sendResult(let id, let uid, _, let error)):
                if let uid, error == nil { paths.step(uid, at: world.now, "sendResult ok on \(world.deviceId(device)) (messageId \(id))") }
                if error != nil { coverage.hit("send failed") }
            case .note(.stored(let id, let uid, _, _, let dir, let isNew)):
                if let uid {
                    paths.step(uid, at: world.now, "stored on \(world.deviceId(device)) messageId \(id) \(dir == .send ? "SEND" : "RECEIVE")\(isNew ? "" : " (update)")")
                }
            case .callback(.received(let m, let left, let offline, let hasPackage)):
                if let uid = m.messageUId {
                    paths.step(uid, at: world.now, "onReceived on \(world.deviceId(device)) left=\(left) offline=\(offline) hasPackage=\(hasPackage)")
                }
                if offline { coverage.hit("offline message") }
            case .note(.skipped(let uid, _, let reason)):
                if let uid { paths.step(uid, at: world.now, "skipped on \(world.deviceId(device)): \(reason)") }
                coverage.hit("skipped: \(reason)")
            case .note(.reconnectScheduled): coverage.hit("reconnect scheduled")
            case .note(.requestTimedOut): coverage.hit("request timeout")
            case .callback(.chatroomKicked): coverage.hit("chatroom kicked")
            default: break
            }
        }
    }

    public func world(_ world: World, serverEffects: [ServerEffect]) {
        for case .event(let e) in serverEffects {
            switch e {
            case .messageAccepted(let m):
                paths.accepted(m, at: world.now, world: world)
                if m.conversation.type == .chatroom { coverage.hit("chatroom message") }
            case .duplicateSendAbsorbed(let uid, _, _):
                paths.step(uid, at: world.now, "server absorbed a repeat (idempotent accept)")
                coverage.hit("idempotent accept")
            case .fannedOut(let uid, _, let dev, _, let via):
                paths.step(uid, at: world.now, "fan-out \(via.rawValue) → \(dev)")
                if via == .syncEcho { coverage.hit("sync echo") }
            case .pulled(_, _, let dev, let topic, let uids, _, let finished):
                for u in uids { paths.step(u, at: world.now, "pulled by \(dev) (\(topic))") }
                if !finished { coverage.hit("pull page not finished") }
            case .dropped(let uid, _, let user, let reason):
                if let uid { paths.step(uid, at: world.now, "dropped for \(user ?? "everyone"): \(reason.rawValue)") }
                coverage.hit("drop: \(reason.rawValue)")
            case .kicked: coverage.hit("session kicked")
            case .chatroomLeft(_, _, let reason): coverage.hit("chatroom left: \(reason.rawValue)")
            case .offlineStored: coverage.hit("offline inbox")
            case .restarted: coverage.hit("server restart")
            default: break
            }
        }
    }

    public func world(_ world: World, note: WorldNote) {
        if case .fault(let kind, _, true, _) = note { coverage.hit("fault: \(kind.rawValue)") }
    }

    public func worldDidFinish(_ world: World) {
        for o in oracles { o.finalCheck(world) }
    }
}

/// Per-message path steps (send → accept → fan-out → store → notify), for violation reports.
public final class MessagePaths {
    struct Step { var time: SimTime; var text: String }
    private var steps: [String: [Step]] = [:]
    private var sends: [Int64: (device: Int, messageId: Int64, time: SimTime)] = [:]
    /// Server facts about each accepted message.
    public private(set) var acceptedMessages: [String: AcceptedMessage] = [:]
    private let maxSteps = 64

    func sent(device: Int, clientUniqueId: Int64, messageId: Int64, at t: SimTime) {
        sends[clientUniqueId] = (device, messageId, t)
    }

    func accepted(_ m: AcceptedMessage, at t: SimTime, world: World) {
        acceptedMessages[m.messageUId] = m
        if let s = sends[m.clientUniqueId] {
            step(m.messageUId, at: s.time, "send on \(world.deviceId(s.device)) (messageId \(s.messageId), clientUniqueId \(m.clientUniqueId))")
        }
        step(m.messageUId, at: t, "server accepted from \(m.senderDeviceId ?? m.senderUserId): \(m.conversation) dataTime \(m.dataTime) → \(m.recipients.count) recipient(s)")
    }

    func step(_ uid: String, at t: SimTime, _ text: String) {
        if steps[uid, default: []].count < maxSteps { steps[uid, default: []].append(Step(time: t, text: text)) }
    }

    public func describe(_ uid: String, world: World) -> [String] {
        (steps[uid] ?? []).map { "t=\($0.time)  \($0.text)" }
    }
}

/// "Sometimes" coverage: how often interesting things happened in a run (or a sweep).
public final class Coverage {
    public private(set) var counts: [String: Int] = [:]
    public init() {}
    public func hit(_ what: String) { counts[what, default: 0] += 1 }
    /// Sorted by name.
    public var sorted: [(String, Int)] { counts.keys.sorted().map { ($0, counts[$0]!) } }
}
