import IMClient
import IMStore
import IMWire
import IMWorld
import SimKernel

/// One broken property found while replaying a capture.
public struct ReplayViolation: Sendable, Codable, Equatable {
    /// The world oracle it corresponds to: `no-duplicate`, `order`, `unread`, `reconnect`, `chatroom`.
    public var oracle: String
    /// Capture line of the input whose handling broke it (0 = at the end of the capture).
    public var line: Int
    /// Device-local ms, and the offset from the capture start (`+41.250s`).
    public var t: Int64
    public var time: String
    public var conversation: String?
    public var messageUId: String?
    public var detail: String
    /// The message's path through the capture and the replayed core (capture lines).
    public var path: [String]

    public var text: String {
        var s = "✘ \(oracle) at line \(line) (t=\(time))"
        if let conversation { s += " conversation \(conversation)" }
        if let messageUId { s += " message \(messageUId)" }
        s += "\n  \(detail)"
        if !path.isEmpty { s += "\n  path:\n" + path.map { "    " + $0 }.joined(separator: "\n") }
        return s
    }
}

/// The per-device IM properties a replay can judge without a world: the device-local rules of
/// `Sources/IMWorld/Oracles/DeviceLocal` that the world's oracles apply (same names, same code),
/// fed from the replayed core's effects and store, with the server's times taken from the
/// captured inbound frames (`FrameTap`):
///
/// - `no-duplicate`: `NoDuplicateRule` (no messageUId in two rows of the store, none notified
///   twice per app run, one conversation per trimmed peer);
/// - `order`: `OrderRule` (stored and own sent messages carry the server's time; a local history
///   page returns what the store's pager returns — the B5 gap; history in server order at the end);
/// - `unread`: `UnreadRule` (each touched conversation's unread count equals its unread counted rows);
/// - `reconnect`: `ReconnectRule`, the world oracle's own device-local rule (attempt times from
///   the link, restarted after foreground / network change; heartbeat; no connection opened
///   after disconnect/logout/fatal error/kick or past the time limit);
/// - `chatroom`: `RejoinRule` (after a reconnect while in a room, a `joinChrmR` within 10 s),
///   `QuitRule` (quit leaves no messages), `AttributeSyncRule`.
///
/// What needs the rest of the world (loss, liveness, cross-device rules) is judged after
/// `imsim replay --lift`, by the world's oracles.
final class ReplayChecks {
    private let config: ClientConfig
    private let startMs: Int64
    private let device: String
    private(set) var violations: [ReplayViolation] = []
    let maxViolations = 50

    // no-duplicate, order, unread: the device-local rules the world's oracles apply
    private var noDuplicate: NoDuplicateRule
    private var order = OrderRule()
    private var unread = UnreadRule()
    // reconnect: the device-local rule the world's reconnect oracle applies (attempt times,
    // heartbeat, stop), fed with the frames read from the captured bytes
    private var reconnect: ReconnectRule
    // chatroom: the rejoin after every reconnect, the device-local rule the world's chatroom
    // oracle applies
    private var rejoin = RejoinRule()
    /// Capture line of the input whose effects began the current session.
    private var sessionLine = 0
    // chatroom attributes: the device-local rule the world's chatroom oracle applies, fed with
    // the frames read from the captured bytes
    private var kv: AttributeSyncRule
    /// Capture line of the input that began the latest debt (a join or rejoin answer).
    private var kvDebtLine = 0
    private var inbound: InboundFrames
    // no-loss (B3): the inbox sync state, and which capture lines brought a direct delivery / a pull page
    private var syncState = SyncState.offline
    private var directLine = -1
    private var pullLine = -1
    private var cursorJumpReported = false
    /// False once the replay diverged: the capture's server frames answer the captured requests,
    /// not the replayed core's, so "no answer within 40 s" means nothing.
    var serverAnswersFollow = true
    /// False when the replayed build differs from the recorded one (`--bugs`): timers fire only
    /// as captured, so an attempt the replayed core scheduled anew never comes — not a late one.
    var timersFollow = true
    /// False for a capture taken on a real clock (the runtime, an import, a production SDK): its
    /// timers fire when the OS schedules them, so the rule's exact deadlines would report jitter.
    /// Only captures recorded in the simulated world have timing judged.
    var virtualClock = true

    init(config: ClientConfig, startMs: Int64, device: String) {
        self.config = config
        self.startMs = startMs
        self.device = device
        noDuplicate = NoDuplicateRule(device: device)
        kv = AttributeSyncRule(requestTimeoutNanoseconds: config.requestTimeout.nanoseconds)
        reconnect = ReconnectRule(config: config)
        inbound = InboundFrames(config: config)
    }

    private func kvFindings(_ findings: [AttributeSyncRule.Finding], line: Int) {
        for f in findings {
            let since = f.since / 1_000_000
            report("chatroom", line: f.readRefused ? line : kvDebtLine, t: f.readRefused ? f.at / 1_000_000 : since,
                   conversation: ConversationKey(.chatroom, f.room), f.detail(sinceText: relativeTime(since, startMs)))
        }
    }

    func report(_ oracle: String, line: Int, t: Int64, conversation: ConversationKey? = nil, uid: String? = nil, _ detail: String) {
        guard violations.count < maxViolations else { return }
        violations.append(ReplayViolation(oracle: oracle, line: line, t: t, time: relativeTime(t, startMs),
                                          conversation: conversation?.description, messageUId: uid, detail: detail,
                                          path: uid.map { (paths[$0] ?? []).map { $0.text(startMs: startMs) } } ?? []))
    }

    // MARK: - Message paths

    private var paths: [String: [PathStep]] = [:]

    /// One step of a message's path, kept as values: its text is built only when a violation
    /// shows the path (building every step's text was a tenth of a replay's checks).
    struct PathStep {
        enum What {
            case text(() -> String)
            case stored(messageId: Int64, send: Bool, isNew: Bool)
            case sendResult(messageId: Int64, sentTime: Int64)
            case received(messageId: Int64, left: Int, offline: Bool, hasPackage: Bool)
        }
        var line: Int
        var t: Int64
        var what: What

        func text(startMs: Int64) -> String {
            let w = switch what {
            case .text(let s): s()
            case .stored(let id, let send, let isNew): "replayed core stored it as messageId \(id) \(send ? "SEND" : "RECEIVE")\(isNew ? "" : " (update)")"
            case .sendResult(let id, let sentTime): "sendResult ok for messageId \(id), sentTime \(sentTime)"
            case .received(let id, let left, let offline, let hasPackage):
                "onReceived (messageId \(id), left=\(left) offline=\(offline) hasPackage=\(hasPackage))"
            }
            return "line \(line) t=\(relativeTime(t, startMs))  \(w)"
        }
    }

    func step(_ uid: String, line: Int, t: Int64, _ what: PathStep.What) {
        guard paths[uid, default: []].count < 64 else { return }
        paths[uid, default: []].append(PathStep(line: line, t: t, what: what))
    }

    /// A message the server sent (from the captured frames).
    func delivered(_ m: WireMessage) {
        guard let uid = m.messageUId else { return }
        let via = switch m.via {
        case .direct: "s_msg (direct delivery)"
        case .pull: "pullMsg page"
        case .chatroomPull: "chrmPull page"
        case .syncEcho: "sync echo + PUBACK"
        case .history: "cloud history answer"
        }
        if case .direct = m.via { directLine = m.line }
        if case .pull = m.via { pullLine = m.line }
        step(uid, line: m.line, t: m.t, .text({ "server sent it in \(via): \(m.conversation) \(m.objectName) from \(m.senderUserId), dataTime \(m.dataTime)" }))
    }

    // MARK: - Process

    func appStarted() {
        noDuplicate.appStarted()   // a restarted app shows its messages afresh
        reconnect.appRestarted()
        rejoin.appRestarted()   // a new process is in no room
        kv.appRestarted()
    }

    func appKilled(t: Int64, line: Int) {
        rejoinFindings(rejoin.due(at: t * 1_000_000))
        rejoin.appRestarted()
        kv.appRestarted()
        reconnect.appRestarted()
    }

    /// The device's wall clock stepped (a capture's times are wall-clock ms).
    func clockStepped(byMs ms: Int64) {
        reconnect.clockStepped(by: ms * 1_000_000)
    }

    private func rejoinFindings(_ findings: [RejoinRule.Finding]) {
        for f in findings {
            let since = f.since / 1_000_000
            report("chatroom", line: sessionLine, t: since, conversation: ConversationKey(.chatroom, f.room),
                   f.detail(sinceText: relativeTime(since, startMs)))
        }
    }

    private func reconnectFindings(_ findings: [ReconnectRule.Finding], line: Int) {
        // Timing waits for the captured timers and answers: meaningless once the replay diverged.
        for f in findings where f.kind == .stop || (serverAnswersFollow && timersFollow && virtualClock) {
            report("reconnect", line: line, t: f.at / 1_000_000, f.detail { relativeTime($0 / 1_000_000, self.startMs) })
        }
    }

    // MARK: - Inputs

    func input(_ input: ClientInput, t: Int64, line: Int) {
        checkKVDeadlines(t: t)
        rejoinFindings(rejoin.due(at: t * 1_000_000))
        rejoinFindings(rejoin.input(input, at: t * 1_000_000))
        // Reconnect deadlines passed before this input (a missing attempt, heartbeat, ping timeout).
        reconnectFindings(reconnect.due(at: t * 1_000_000), line: line)
        let frames = inbound.frames(device: 0, input: input)
        reconnect.input(input, inbound: frames, at: t * 1_000_000)
        let kvOwedBefore = kv.nextDue
        kv.input(input, inbound: frames, at: t * 1_000_000)
        if let due = kv.nextDue, due != kvOwedBefore { kvDebtLine = line }
        order.input(input)
    }

    /// B8: a join completed on a connection that stayed up must have its attributes within 40 s
    /// (longer than the 30 s request timeout).
    private func checkKVDeadlines(t: Int64) {
        let found = kv.due(at: t * 1_000_000)
        // Once the replay diverged the captured answers are not the replayed core's.
        if serverAnswersFollow { kvFindings(found, line: 0) }
    }

    // MARK: - Effects

    func effects(_ effects: [ClientEffect], store: IMStore, serverTimes: [String: Int64], t: Int64, line: Int) {
        let kvOwedBefore = kv.nextDue
        let kvFound = kv.effects(effects, at: t * 1_000_000)
        if serverAnswersFollow { kvFindings(kvFound, line: line) }
        if let due = kv.nextDue, due != kvOwedBefore { kvDebtLine = line }
        reconnectFindings(reconnect.effects(effects, at: t * 1_000_000), line: line)
        let sessionBefore = rejoin.nextDue
        rejoinFindings(rejoin.effects(effects, at: t * 1_000_000))
        if let due = rejoin.nextDue, due != sessionBefore { sessionLine = line }
        for f in noDuplicate.effects(effects, store: store) { report("no-duplicate", f, line: line, t: t) }
        for f in order.effects(effects, store: store, serverTime: { serverTimes[$0] }) { report("order", f, line: line, t: t) }
        for f in unread.effects(effects, store: store) { report("unread", f, line: line, t: t) }
        for f in QuitRule.effects(effects, store: store) { report("chatroom", f, line: line, t: t) }
        for e in effects {
            switch e {
            // message paths
            case .note(.stored(let id, let uid?, _, _, let dir, let isNew)):
                step(uid, line: line, t: t, .stored(messageId: id, send: dir == .send, isNew: isNew))
            case .callback(.sendResult(let id, let uid?, let sentTime, nil)):
                step(uid, line: line, t: t, .sendResult(messageId: id, sentTime: sentTime))
            case .note(.skipped(let uid?, _, let reason)):
                step(uid, line: line, t: t, .text({ "replayed core skipped it: \(reason)" }))
            case .callback(.received(let m, let left, let offline, let hasPackage)):
                guard let uid = m.messageUId else { continue }
                step(uid, line: line, t: t, .received(messageId: m.messageId, left: left, offline: offline, hasPackage: hasPackage))
            case .note(.syncState(_, let to, _)):
                syncState = to
            case .note(.cursor(let cursorName, let value)) where cursorName == SyncCursor.inbox.name:
                // B3: a direct delivery moved the inbox cursor before this connection's sync
                // completed — the pull that follows starts there, and what is older never arrives.
                if syncState != .inSync, directLine == line, pullLine != line, !cursorJumpReported {
                    cursorJumpReported = true
                    report("no-loss", line: line, t: t,
                           "inbox cursor moved to \(value) by a direct delivery while the sync was \(syncState): older " +
                           "messages not yet pulled will never be (the next pull starts at \(value))")
                }
            default:
                break
            }
        }
    }

    private func report(_ oracle: String, _ f: DeviceFinding, line: Int, t: Int64) {
        report(oracle, line: line, t: t, conversation: f.conversation, uid: f.messageUId, f.detail)
    }

    /// End of the capture: rejoin deadline, the store's own duplicates, history order.
    func finish(store: IMStore, serverTimes: [String: Int64], t: Int64, line: Int) {
        rejoinFindings(rejoin.finish(at: t * 1_000_000))
        checkKVDeadlines(t: t)
        reconnectFindings(reconnect.due(at: t * 1_000_000), line: 0)
        let reported = violations.contains { $0.oracle == "no-duplicate" }
        for f in noDuplicate.finish(store: store, reportedBefore: reported) { report("no-duplicate", f, line: 0, t: t) }
        for f in order.finish(store: store, device: device, serverTime: { serverTimes[$0] }) { report("order", f, line: 0, t: t) }
        for f in unread.finish(store: store) { report("unread", f, line: 0, t: t) }
    }
}

/// `+41.250s` from the capture start.
func relativeTime(_ t: Int64, _ startMs: Int64) -> String {
    let d = t - startMs
    let sign = d < 0 ? "-" : "+"
    let a = abs(d)
    var ms = String(a % 1000)
    while ms.count < 3 { ms = "0" + ms }
    return "\(sign)\(a / 1000).\(ms)s"
}
