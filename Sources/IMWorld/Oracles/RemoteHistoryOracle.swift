import IMClient
import IMServer
import IMStore
import IMWire
import SimKernel

/// remote-history: `getRemoteHistory(conversation, beforeTime, count)` answers the newest `count`
/// messages of the conversation sent before `beforeTime` (0 = now), `getRemoteHistoryAfter` the
/// oldest `count` sent after `afterTime` (im-semantics §6: "before/after a ms timestamp"), in
/// ascending sentTime. The conversation's cloud history is derived from the server-accepted facts
/// (messageUId, dataTime, type flags — never from the server's history store): the messages the
/// server accepted in that conversation (private: between the two users, either direction; group
/// and chatroom: by anyone) whose type is persisted (§2 — chatroom) and offline-cached (private,
/// group: not offline-cached types are excluded from cloud history), and not dropped for everyone
/// (sensitive word, quota: "silently not delivered"). A page must be a run of that history with
/// no gap, within the bound, at most `count` long, ending (before) at least at the newest message
/// accepted before the call or (after) starting at the oldest one after the cursor, and a short
/// page must reach the end of the history that way. Not judged: groups whose membership the
/// script changes (members see the history from their join), `allowEqualDataTime` (pages keep
/// runs of equal times whole), runs after a crash that lost the server's state, error answers.
/// One report per device.
final class RemoteHistoryOracle: Oracle {
    static let oracleName = "remote-history"
    let name = RemoteHistoryOracle.oracleName
    let hooks: OracleHooks = [.input, .applied, .serverApplied, .note]
    let inputKinds: InputKinds = [.api]
    let appliedKinds: AppliedKinds = [.remoteHistory]
    let serverAppliedKinds: ServerAppliedKinds = [.messageAccepted, .restarted]
    unowned let suite: OracleSuite

    private struct Entry { var uid: String; var dataTime: Int64 }
    private struct Call { var conv: ConversationKey; var time: Int64; var after: Bool; var count: Int; var serverMs: Int64 }
    /// Cloud history per view key, ascending dataTime (accept order = dataTime order per conversation).
    private var history: [String: [Entry]] = [:]
    private var pending: [[Call]] = []
    private var reported: Set<Int> = []
    private var lostState = false
    private var changedGroups: Set<String>?

    init(suite: OracleSuite) { self.suite = suite }

    private func ensure(_ d: Int) { while pending.count <= d { pending.append([]) } }

    /// The history a user sees for `conv` (private: the pair, in either direction).
    private static func viewKey(user: String, _ conv: ConversationKey) -> String? {
        switch conv.type {
        case .privateChat:
            let a = min(user, conv.targetId), b = max(user, conv.targetId)
            return "p \(a) \(b)"
        case .group: return "g \(conv.targetId)"
        case .chatroom: return "c \(conv.targetId)"
        default: return nil
        }
    }

    private func groupsChanged(_ world: World) -> Set<String> {
        if let changedGroups { return changedGroups }
        var s: Set<String> = []
        for step in world.scenario.script {
            switch step.action {
            case .server(.addGroupMembers(let g, _)), .server(.removeGroupMembers(let g, _)): s.insert(g)
            default: break
            }
        }
        changedGroups = s
        return s
    }

    func world(_ world: World, serverApplied serverEffects: AppliedServerEffects) {
        for case .event(let e) in serverEffects {
            switch e {
            case .messageAccepted(let m):
                guard m.droppedForEveryone == nil, m.flags.isPersisted,
                      m.conversation.type == .chatroom || m.flags.offline,
                      let key = Self.viewKey(user: m.senderUserId, m.conversation) else { continue }
                history[key, default: []].append(Entry(uid: m.messageUId, dataTime: m.dataTime))
            case .restarted(let kept):
                if !kept { lostState = true }
            default:
                break
            }
        }
    }

    func world(_ world: World, device d: Int, input: ClientInput, localMs: Int64) {
        ensure(d)
        switch input {
        case .api(.getRemoteHistory(let conv, let t, let n)):
            pending[d].append(Call(conv: conv, time: t, after: false, count: Int(n), serverMs: world.serverMs))
        case .api(.getRemoteHistoryAfter(let conv, let t, let n)):
            pending[d].append(Call(conv: conv, time: t, after: true, count: Int(n), serverMs: world.serverMs))
        default:
            break
        }
    }

    private func report(_ d: Int, _ conv: ConversationKey, _ detail: String) {
        guard reported.insert(d).inserted else { return }
        suite.report(name, device: d, conversation: conv, detail)
    }

    func world(_ world: World, device d: Int, applied: AppliedClientEffects) {
        ensure(d)
        for case .callback(.remoteHistory(let conv, let msgs, let error)) in applied.effects {
            guard let i = pending[d].firstIndex(where: { $0.conv == conv }) else { continue }
            let call = pending[d].remove(at: i)
            guard error == nil, !lostState, !world.scenario.server.allowEqualDataTime,
                  !(conv.type == .group && groupsChanged(world).contains(conv.targetId)),
                  let key = Self.viewKey(user: world.userId(ofDevice: d), conv) else { continue }
            judge(d, call, msgs, history[key] ?? [])
        }
    }

    private func judge(_ d: Int, _ call: Call, _ msgs: [StoredMessage], _ log: [Entry]) {
        let what = "\(call.after ? "getRemoteHistoryAfter" : "getRemoteHistory")(\(call.conv), \(call.time), \(call.count)) at server ms \(call.serverMs)"
        // The eligible part of the history: within the bound.
        let inBound: [Entry] = log.filter { e in
            call.after ? e.dataTime > call.time : (call.time <= 0 || e.dataTime < call.time)
        }
        var index: [String: Int] = [:]
        for (k, e) in inBound.enumerated() { index[e.uid] = k }
        if msgs.count > call.count {
            return report(d, call.conv, "\(what) answered \(msgs.count) messages, more than the \(call.count) asked")
        }
        var positions: [Int] = []
        for m in msgs {
            guard let uid = m.messageUId, let k = index[uid] else {
                let inLog = log.contains { $0.uid == m.messageUId }
                return report(d, call.conv, "\(what) answered \(m.messageUId ?? "a message without messageUId") (sentTime \(m.sentTime)), "
                              + (inLog ? "which is outside the requested bound" : "which is not in the conversation's cloud history "
                                 + "(no accepted, persisted, delivered message of it)"))
            }
            if m.sentTime != inBound[k].dataTime {
                return report(d, call.conv, "\(what) answered \(uid) with sentTime \(m.sentTime), accepted at \(inBound[k].dataTime)")
            }
            positions.append(k)
        }
        for (a, b) in zip(positions, positions.dropFirst()) where b != a + 1 {
            let why = b <= a ? "out of ascending order" : "skipping \(inBound[a + 1].uid)"
            return report(d, call.conv, "\(what) answered a page \(why)")
        }
        // Accepted no later than the call: the server had them when it answered.
        let known = inBound.lastIndex { $0.dataTime <= call.serverMs }
        if call.after {
            if let known, positions.first != 0 {
                return report(d, call.conv, "\(what) did not start at the oldest message after the cursor, \(inBound[0].uid)"
                              + " (\(inBound.count) after it; \(known + 1) accepted before the call)")
            }
            if msgs.count < call.count, let known, (positions.last ?? -1) < known {
                return report(d, call.conv, "\(what) answered a short page (\(msgs.count)) that stops before \(inBound[known].uid), "
                              + "accepted before the call")
            }
        } else {
            if let known, (positions.last ?? -1) < known {
                return report(d, call.conv, "\(what) did not reach the newest message before the cursor, \(inBound[known].uid), "
                              + "accepted before the call")
            }
            if msgs.count < call.count, let first = positions.first, first > 0 {
                return report(d, call.conv, "\(what) answered a short page (\(msgs.count)) although \(first) older messages remain, "
                              + "e.g. \(inBound[first - 1].uid)")
            }
        }
    }

    func world(_ world: World, note: WorldNote) {
        if case .lifecycle(let d, .killed) = note { ensure(d); pending[d] = [] }
    }

    func finalCheck(_ world: World) {}
}
