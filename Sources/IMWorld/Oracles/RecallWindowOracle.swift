import IMClient
import IMServer
import IMWire
import SimKernel

/// recall-window: the server answers a recall as im-semantics §7 says — "only the sender, only a
/// successfully sent message, within 120 s (configurable)". Judged on the link: the `recallMsg`
/// PUBLISH a device writes for the app's `recall(messageId)` and the PUBACK it reads back.
///
/// - **refused**: a recall of a message this user sent from a device (the app was told
///   `sendResult` success with its messageUId and sentTime), the first recall of it asked by any of
///   the user's devices, answered with a non-zero status although the server's clock when the
///   PUBACK was read is still within the window of the message's sentTime (the server received
///   the recall no later than that) — a valid recall refused;
/// - **accepted late**: a recall answered with status 0 although the server's clock was already
///   past the window when the device wrote it (the server received it no sooner) — or a second
///   recall of a message already recalled accepted.
///
/// A recall travels as a message (`RC:RcCmd`), so §2's send rate applies to it: a refusal with
/// 20604 is judged against the device's own accepted PUBLISHes on the connection. The server
/// counts sends by the time it received them; a send written before the recall that the server
/// counted within the recall's last second had its PUBACK read no earlier than 1000 ms before the
/// recall was written. So 20604 is a valid answer only if at least `rateLimitPerSecond` such
/// PUBLISHes exist (sound: never reports a refusal the limit explains).
///
/// The window is the scenario's `server.recallWindow`; a message's sentTime is the dataTime the
/// PUBACK of its send carried on the link (not the row's, which B4 keeps local); server time is the world's server clock. Chatrooms are not judged (a
/// room may be gone); neither are recalls after a server restart that lost its state.
final class RecallWindowOracle: Oracle {
    static let oracleName = "recall-window"
    let name = RecallWindowOracle.oracleName
    let hooks: OracleHooks = [.input, .applied, .serverApplied, .note]
    let appliedKinds: AppliedKinds = [.messageInserted, .sendResult, .received, .send]
    let serverAppliedKinds: ServerAppliedKinds = [.restarted]
    unowned let suite: OracleSuite

    private struct Ask {
        var uid: String
        var messageId: Int64
        var sentTime: Int64
        var askedServerMs: Int64
        var first: Bool
        var writtenServerMs: Int64 = 0
    }
    /// Per device, on its current connection: PUBLISHes written and not yet answered (wire
    /// messageId → server time written), and those answered with status 0 (written, answer read).
    private var unanswered: [[UInt16: Int64]] = []
    private var acceptedSends: [[(written: Int64, answered: Int64)]] = []
    /// userId → messageUId → sentTime of every non-chatroom message the user's devices sent.
    private var sent: [String: [String: Int64]] = [:]
    /// Per device: local messageId → messageUId of own sent messages (sends and sync echoes).
    private var localUid: [[Int64: String]] = []
    /// Per device: messageIds of rows the app created in chatrooms.
    private var roomRows: [Set<Int64>] = []
    /// Per device: recall PUBLISHes awaiting their PUBACK, by wire messageId.
    private var inFlight: [[UInt16: Ask]] = []
    /// The recall the input being handled asked for (its PUBLISH is in this input's effects).
    private var asking: (device: Int, ask: Ask)?
    private var asked: Set<String> = []
    private var recalledOK: Set<String> = []
    private var judging = true
    private var reported: Set<Int> = []

    init(suite: OracleSuite) { self.suite = suite }

    private func ensure(_ d: Int) {
        while localUid.count <= d {
            localUid.append([:]); roomRows.append([]); inFlight.append([:]); unanswered.append([:]); acceptedSends.append([])
        }
    }

    func world(_ world: World, device d: Int, input: ClientInput, localMs: Int64) {
        ensure(d)
        if asking != nil { asking = nil }
        switch input {
        case .api(.recall(let id)):
            let user = world.userId(ofDevice: d)
            guard let uid = localUid[d][id], let t = sent[user]?[uid] else { return }
            asking = (d, Ask(uid: uid, messageId: id, sentTime: t, askedServerMs: world.serverMs, first: !asked.contains(uid)))
        case .transport(.closed), .transport(.opened):
            // A PUBACK answers a PUBLISH of the same connection only.
            inFlight[d] = [:]
            unanswered[d] = [:]
            acceptedSends[d] = []
        case .transport(.bytes):
            for case .puback(let p) in suite.inboundFrames {
                // Every accepted send's PUBACK names its messageUId and dataTime (wire §3).
                if p.status == 0, !p.messageUId.isEmpty { sent[world.userId(ofDevice: d), default: [:]][p.messageUId] = p.sentTime }
                if let w = unanswered[d].removeValue(forKey: p.messageId), p.status == 0 {
                    acceptedSends[d].append((w, world.serverMs))
                    // Only the newest can count (answers come in write order): keep a bounded tail.
                    let keep = max(256, 2 * world.scenario.server.rateLimitPerSecond)
                    if acceptedSends[d].count > 2 * keep { acceptedSends[d].removeFirst(keep) }
                }
                guard let ask = inFlight[d].removeValue(forKey: p.messageId) else { continue }
                answered(world, d, ask, status: p.status)
            }
        default:
            break
        }
    }

    func world(_ world: World, device d: Int, applied: AppliedClientEffects) {
        let effects = applied.effects
        ensure(d)
        let user = world.userId(ofDevice: d)
        for e in effects {
            switch e {
            case .callback(.messageInserted(let row)):
                newRow(d, row.messageId, inRoom: row.conversation.type == .chatroom)
            case .callback(.sendResult(let id, let uid?, _, nil)) where !roomRows[d].contains(id):
                localUid[d][id] = uid
            case .callback(.received(let m, _, _, _)) where m.messageId > 0:
                newRow(d, m.messageId, inRoom: m.conversation.type == .chatroom)
                // A sync echo of a message sent from another device of this user.
                if m.direction == .send, m.conversation.type != .chatroom, let uid = m.messageUId, sent[user]?[uid] != nil {
                    localUid[d][m.messageId] = uid
                }
            case .send(_, let frames):
                for f in frames where f.type == .publish { unanswered[d][f.messageId] = world.serverMs }
                guard let (ad, ask) = asking, ad == d else { continue }
                for f in frames where f.type == .publish && f.topic == Topic.recallMsg.rawValue {
                    var ask = ask
                    ask.writtenServerMs = world.serverMs
                    inFlight[d][f.messageId] = ask
                    asked.insert(ask.uid)
                    asking = nil
                }
            default:
                break
            }
        }
    }

    /// A row the app is told of now: whatever its messageId named before is gone. SQLite gives a
    /// new row the largest rowid + 1, so after a power loss took back the newest rows their
    /// messageIds name new messages (everyday-storage --swarm seed 792: the recall of a new
    /// message 22 was judged against the sentTime of the lost one).
    private func newRow(_ d: Int, _ messageId: Int64, inRoom: Bool) {
        localUid[d][messageId] = nil
        if inRoom { roomRows[d].insert(messageId) } else { roomRows[d].remove(messageId) }
    }

    private func answered(_ world: World, _ d: Int, _ ask: Ask, status: UInt16) {
        guard !reported.contains(d) else { return }
        let window = world.scenario.server.recallWindow.duration.milliseconds
        let now = world.serverMs
        if status == 0 {
            if ask.askedServerMs - ask.sentTime > window {
                reported.insert(d)
                suite.report(name, device: d, messageUId: ask.uid,
                             "the server accepted the recall of \(ask.uid) (messageId \(ask.messageId)) written at server time "
                             + "\(ask.askedServerMs), \(ask.askedServerMs - ask.sentTime) ms after its sentTime \(ask.sentTime): "
                             + "outside the \(window) ms recall window (im-semantics §7)")
            } else if recalledOK.contains(ask.uid) {
                reported.insert(d)
                suite.report(name, device: d, messageUId: ask.uid,
                             "the server accepted a second recall of \(ask.uid) (messageId \(ask.messageId)), already recalled")
            }
            recalledOK.insert(ask.uid)
        } else if judging, ask.first, !recalledOK.contains(ask.uid), now - ask.sentTime <= window,
                  !(status == 20604 && rateLimitExplains(world, d, ask)) {
            reported.insert(d)
            suite.report(name, device: d, messageUId: ask.uid,
                         "the server refused (status \(status)) the recall of \(ask.uid) (messageId \(ask.messageId)), a message "
                         + "this user sent (sentTime \(ask.sentTime)), answered at server time \(now), \(now - ask.sentTime) ms "
                         + "after it: within the \(window) ms recall window, by its sender (im-semantics §7)")
        }
    }

    /// At least `rateLimitPerSecond` accepted PUBLISHes written before the recall whose answers were
    /// read within the 1000 ms before it was written (im-semantics §2: 5 messages per second → 20604).
    private func rateLimitExplains(_ world: World, _ d: Int, _ ask: Ask) -> Bool {
        let limit = world.scenario.server.rateLimitPerSecond
        let recent = acceptedSends[d].reduce(0) { n, s in
            n + (s.written <= ask.writtenServerMs && s.answered > ask.writtenServerMs - 1000 ? 1 : 0)
        }
        return recent >= limit
    }

    func world(_ world: World, serverApplied: AppliedServerEffects) {
        let serverEffects = serverApplied.effects
        for case .event(.restarted(let kept)) in serverEffects where !kept { judging = false }
    }

    func world(_ world: World, note: WorldNote) {
        if case .lifecycle(let d, let change) = note {
            ensure(d)
            switch change {
            case .killed, .started: inFlight[d] = [:]
            default: break
            }
        }
    }

    func finalCheck(_ world: World) {}
}
