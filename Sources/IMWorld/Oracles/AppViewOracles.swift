import IMClient
import IMServer
import IMStore
import IMWire
import SimKernel

// Oracles that build their expectation from what the app was told (callbacks), what it asked
// (API calls) and what the server did — never from the client's notes or from re-counting the
// store they judge (issue 21). Each answers one question an app developer would ask.

/// unread-model: the unread count the app is shown equals a model fed only by the app's view —
/// `onReceived` of a received, counted message (+1), `clearUnread(upTo:)` and a multi-device read
/// sync (`syncReadStatus`) (every modelled message with sentTime ≤ the time becomes read), and
/// `onMessageRecalled` (a recalled unread message no longer counts, im-semantics §7). Also: every
/// local history page the app reads shows each received counted message read or unread exactly as
/// the model says ("reading up to a time marks exactly the messages up to it").
/// Chatrooms are not counted (no unread in rooms). One report per device.
final class UnreadModelOracle: Oracle {
    static let oracleName = "unread-model"
    let name = UnreadModelOracle.oracleName
    let hooks: OracleHooks = [.input, .applied, .note]
    let inputKinds: InputKinds = [.api]
    unowned let suite: OracleSuite
    /// Per device: conversation → (messageId → sentTime) of messages the model holds unread.
    private var unread: [[ConversationKey: [Int64: Int64]]] = []
    /// Per device: messageIds of received counted messages the model knows, → read?
    private var known: [[Int64: Bool]] = []
    /// Per device: recalled messageIds (not judged on a history page: the row is RC:RcNtf).
    private var recalled: [Set<Int64>] = []
    /// Per device: messageIds of received counted messages that mention the user (the mention
    /// flag the app was given): the conversation's `hasUnreadMentioned` holds while one is unread.
    private var mentions: [Set<Int64>] = []
    private var reported: Set<Int> = []
    /// The conversation a `clearUnread` of the input being handled cleared.
    private var clearedNow: (Int, ConversationKey)?
    /// Devices whose model restarts from the store at the next app start (after a power loss).
    private var restartOnStore: Set<Int> = []

    init(suite: OracleSuite) { self.suite = suite }

    private func ensure(_ d: Int) {
        while unread.count <= d { unread.append([:]); known.append([:]); recalled.append([]); mentions.append([]) }
    }

    private func markRead(_ d: Int, _ conv: ConversationKey, upTo t: Int64) {
        guard let rows = unread[d][conv] else { return }
        for (id, sent) in rows where sent <= t {
            unread[d][conv]![id] = nil
            known[d][id] = true
        }
    }

    func world(_ world: World, device d: Int, input: ClientInput, localMs: Int64) {
        ensure(d)
        // The model follows the app's own request; the count is compared once the core has
        // handled the call (with the effects of this input).
        if case .api(.clearUnread(let conv, let t)) = input {
            markRead(d, conv, upTo: t)
            if conv.type != .chatroom { clearedNow = (d, conv) }
        }
    }

    func world(_ world: World, device d: Int, applied effects: AppliedClientEffects) {
        ensure(d)
        var touched: [ConversationKey] = []
        // Judged at once, whether or not the store took the clear: the SDK answers an owed clear
        // as done (issue 28; before, a clear whose write failed was judged at the next touch,
        // told apart by the core's storeError note).
        if let (cd, conv) = clearedNow, cd == d { touched.append(conv) }
        clearedNow = nil
        func touch(_ c: ConversationKey) { if c.type != .chatroom, !touched.contains(c) { touched.append(c) } }
        // Only callbacks are followed below (most lists have none).
        for e in effects.callbackCount > 0 ? effects.effects : [] {
            switch e {
            case .callback(.received(let m, _, _, _)) where m.conversation.type != .chatroom:
                if m.isUnreadCounted, m.messageId > 0 {
                    unread[d][m.conversation, default: [:]][m.messageId] = m.sentTime
                    known[d][m.messageId] = false
                    if m.flags.contains(.mentioned) { mentions[d].insert(m.messageId) }
                }
                touch(m.conversation)
            case .callback(.recalled(let id, let conv)):
                unread[d][conv]?[id] = nil
                recalled[d].insert(id)
                touch(conv)
            case .callback(.syncReadStatus(let conv, let t)):
                markRead(d, conv, upTo: t)
                touch(conv)
            case .callback(.history(let conv, let rows)) where conv.type != .chatroom:
                historyShown(d, conv, rows)
            default:
                break
            }
        }
        guard !touched.isEmpty else { return }
        let reads = suite.storeReads(world, d)
        for c in touched { check(world, d, c, reads) }
    }

    private func historyShown(_ d: Int, _ conv: ConversationKey, _ rows: [StoredMessage]) {
        guard !reported.contains(d) else { return }
        for r in rows where r.direction == .receive && !r.isRecalled && !recalled[d].contains(r.messageId) {
            guard let read = known[d][r.messageId] else { continue }
            let shown = r.receivedStatus.contains(.read)
            if shown != read {
                reported.insert(d)
                suite.report(name, device: d, conversation: conv, messageUId: r.messageUId,
                             "history shows messageId \(r.messageId) (sentTime \(r.sentTime)) as \(shown ? "read" : "unread") but the app "
                             + (read ? "read up to a time ≥ it" : "never read up to it (last read-up-to times did not cover it)"))
                return
            }
        }
    }

    /// A power loss (issue 28) takes back unsynced rows, which the next syncs store again under
    /// new messageIds: the app restarts on what the store holds, and so does the model (whether
    /// the lost messages come back is the storage oracle's judgement).
    func world(_ world: World, note: WorldNote) {
        switch note {
        case .fault(.powerLoss, let d?, true, _), .fault(.powerLossTorn, let d?, true, _):
            ensure(d)
            restartOnStore.insert(d)
        case .lifecycle(let d, .started) where restartOnStore.contains(d):
            let store = world.store(ofDevice: d)
            guard store.isOpen, let convs = try? store.conversationList() else { return }
            restartOnStore.remove(d)
            unread[d] = [:]
            known[d] = [:]
            mentions[d] = []
            for c in convs where c.key.type != .chatroom {
                for r in (try? store.snapshot(of: c.key)) ?? [] where r.direction == .receive && r.flags.contains(.counted) {
                    known[d][r.messageId] = !r.isUnreadCounted
                    if r.flags.contains(.mentioned) { mentions[d].insert(r.messageId) }
                    if r.isUnreadCounted && !r.isRecalled { unread[d][c.key, default: [:]][r.messageId] = r.sentTime }
                }
            }
        default:
            break
        }
    }

    /// What the app is shown: the conversation's `unreadCount` and mention flag as the SDK
    /// answers the app (`World.appConversation`: a clearUnread whose store write is owed after a
    /// storage fault answers as done, everyday-storage --swarm seed 6831). With shared reads (a
    /// store no fault touches, so nothing is ever owed and the SDK answers the stored row) the
    /// same columns through `StoreReads`.
    private func check(_ world: World, _ d: Int, _ conv: ConversationKey, _ reads: StoreReads? = nil) {
        guard !reported.contains(d), conv.type != .chatroom else { return }
        let expected = unread[d][conv]?.count ?? 0
        let row = reads != nil ? StoreReads.shownUnread(conv, world.store(ofDevice: d), reads)
            : world.appConversation(ofDevice: d, conv).map { ($0.unreadCount, $0.hasUnreadMentioned) }
        let shown = row?.unreadCount ?? 0
        let mentionExpected = unread[d][conv]?.keys.contains { mentions[d].contains($0) } ?? false
        if shown == expected, (row?.hasUnreadMentioned ?? false) != mentionExpected {
            reported.insert(d)
            suite.report(name, device: d, conversation: conv,
                         "hasUnreadMentioned shown is \(!mentionExpected) but the app was told of "
                         + (mentionExpected ? "an unread message that mentions the user" : "no unread message that mentions the user"))
            return
        }
        if shown != expected {
            reported.insert(d)
            suite.report(name, device: d, conversation: conv,
                         "unread count shown is \(shown) but the app was told of \(expected) unread counted message(s) "
                         + "(received, not read up to, not recalled)")
        }
    }

    func finalCheck(_ world: World) {
        for d in 0..<min(world.deviceCount, unread.count) {
            for conv in unread[d].keys.sorted(by: { $0.description < $1.description }) { check(world, d, conv) }
        }
    }
}

/// delivery-order: within a conversation, each device's app is told of received messages in
/// server order — `onReceived` sentTimes (the server's dataTime) never go back, per direction
/// (inbox / sync echoes of one's own sends: separate cursors, wire §4). Every offline-cached
/// message is kept only past its direction's cursor, and direct deliveries are accepted only in
/// sync, so a step back means the app showed a message after a newer one. Online-only and STATUS
/// types (no cursor, wire §4) and chatrooms (a new join pull starts again) are not judged.
/// A restarted app (new core) starts again (it may be told about its messages afresh).
final class DeliveryOrderOracle: Oracle {
    static let oracleName = "delivery-order"
    let name = DeliveryOrderOracle.oracleName
    let hooks: OracleHooks = [.applied, .note]
    let appliedKinds: AppliedKinds = [.received]
    unowned let suite: OracleSuite
    private struct Key: Hashable { var conversation: ConversationKey; var send: Bool }
    /// Per device: (conversation, direction) → (newest sentTime told, its messageUId).
    private var last: [[Key: (Int64, String)]] = []
    private var reported: Set<Int> = []

    init(suite: OracleSuite) { self.suite = suite }

    private func ensure(_ d: Int) { while last.count <= d { last.append([:]) } }

    func world(_ world: World, note: WorldNote) {
        if case .lifecycle(let d, .started) = note, d < last.count { last[d] = [:] }
    }

    func world(_ world: World, device d: Int, applied effects: AppliedClientEffects) {
        ensure(d)
        guard !reported.contains(d) else { return }
        for case .callback(.received(let m, _, _, _)) in effects {
            guard m.conversation.type != .chatroom, let uid = m.messageUId,
                  world.clientConfig.registry.flags(for: m.objectName)?.offline ?? true else { continue }
            let key = Key(conversation: m.conversation, send: m.direction == .send)
            if let (t, prev) = last[d][key], m.sentTime < t {
                reported.insert(d)
                return suite.report(name, device: d, conversation: m.conversation, messageUId: uid,
                                    "told of \(uid) (sentTime \(m.sentTime)) after \(prev) (sentTime \(t)): out of server order")
            }
            last[d][key] = (m.sentTime, uid)
        }
    }

    func finalCheck(_ world: World) {}
}

/// recall: every copy of a recalled message becomes a recall notice — each device that was shown
/// the original (`onReceived` or its own successful send) is told of the recall (`onMessageRecalled`
/// for that row, or, on the device that recalled it, a successful `recallResult`) by the end of a
/// converged run. Judged only for devices expected online at the end (the RC:RcCmd is delivered
/// offline, im-semantics §7), in a converged run; the device that called `recall` is judged by its
/// own `recallResult` only. Chatrooms are not judged (leaving a room clears its messages).
final class RecallCopiesOracle: Oracle {
    static let oracleName = "recall"
    let name = RecallCopiesOracle.oracleName
    let hooks: OracleHooks = [.input, .applied, .serverApplied]
    let inputKinds: InputKinds = [.api]
    let appliedKinds: AppliedKinds = [.received, .messageInserted, .sendResult, .recalled, .recallResult]
    let serverAppliedKinds: ServerAppliedKinds = [.recalled]
    unowned let suite: OracleSuite
    /// messageUId → per device the local messageIds that showed it.
    private var shown: [String: [Int: Set<Int64>]] = [:]
    /// Per device: messageId → messageUId of the rows shown (for the recall callbacks).
    private var uidOf: [[Int64: String]] = []
    private var toldRecalled: [Set<Int64>] = []
    /// Per device: rows the app created in chatrooms (not judged).
    private var roomRows: [Set<Int64>] = []
    /// Per device: messageIds the app asked to recall, → failed?
    private var recallAsked: [[Int64: Bool]] = []
    /// Recalled messageUIds in the order the server recalled them.
    private var recalls: [String] = []

    init(suite: OracleSuite) { self.suite = suite }

    private func ensure(_ d: Int) {
        while uidOf.count <= d { uidOf.append([:]); toldRecalled.append([]); recallAsked.append([:]); roomRows.append([]) }
    }

    private func show(_ d: Int, _ id: Int64, _ uid: String) {
        shown[uid, default: [:]][d, default: []].insert(id)
        uidOf[d][id] = uid
    }

    func world(_ world: World, device d: Int, input: ClientInput, localMs: Int64) {
        ensure(d)
        if case .api(.recall(let id)) = input { recallAsked[d][id] = false }
    }

    func world(_ world: World, device d: Int, applied effects: AppliedClientEffects) {
        ensure(d)
        for e in effects {
            switch e {
            case .callback(.received(let m, _, _, _)) where m.conversation.type != .chatroom:
                if let uid = m.messageUId, m.messageId > 0 { show(d, m.messageId, uid) }
            case .callback(.messageInserted(let row)) where row.conversation.type == .chatroom:
                roomRows[d].insert(row.messageId)
            case .callback(.sendResult(let id, let uid?, _, nil)) where !roomRows[d].contains(id):
                show(d, id, uid)
            case .callback(.recalled(let id, _)):
                toldRecalled[d].insert(id)
            case .callback(.recallResult(let id, let error)):
                if error == nil { toldRecalled[d].insert(id) } else { recallAsked[d][id] = true }
            default:
                break
            }
        }
    }

    func world(_ world: World, serverApplied serverEffects: AppliedServerEffects) {
        for case .event(.recalled(let uid, _)) in serverEffects { recalls.append(uid) }
    }

    /// A recall notice still owed keeps the world from converging (like no-loss), so the
    /// liveness phase waits for a dead link to be noticed and the RC:RcCmd pulled. Says the first
    /// recall a device has not been told of (for the liveness report), or nil.
    func untold(_ world: World) -> String? {
        firstUntold(world).map { "recall waits for the notice of \($0.0) on \(world.deviceId($0.1)) (messageId \($0.2))" }
    }

    private func firstUntold(_ world: World) -> (String, Int, Int64)? {
        for uid in recalls {
            guard let devices = shown[uid] else { continue }
            for d in devices.keys.sorted() where world.expectedOnline(d) && world.hasConnected(device: d) {
                for id in devices[d]!.sorted() where !toldRecalled[d].contains(id) && recallAsked[d][id] == nil {
                    // A row no longer holding the message (a power loss took it back; the next
                    // sync stored it again under a new messageId, shown and judged as such)
                    // shows nothing: no notice is owed for it (issue 28).
                    if world.devices[d].disk != nil, ((try? world.store(ofDevice: d).message(id: id))??.messageUId) != uid { continue }
                    return (uid, d, id)
                }
            }
        }
        return nil
    }

    func finalCheck(_ world: World) {
        // The RC:RcCmd is not owed by no-loss: only a converged world has delivered it.
        guard world.convergedAt != nil else { return }
        if let (uid, d, id) = firstUntold(world) {
            return suite.report(name, device: d, messageUId: uid,
                                "\(uid) was recalled but \(world.deviceId(d)) still shows it as messageId \(id) (no recall notice)")
        }
    }
}

/// resend: a resent message never becomes a second message end to end — per device, conversation
/// and type, the server accepts no more messages from the device than the app created with `send`
/// (`messageInserted`), whatever id a resend carries. Not judged after a server restart that lost
/// its state (the idempotency memory is gone: a resend then is a new message, a protocol hazard).
final class ResendIdentityOracle: Oracle {
    static let oracleName = "resend"
    let name = ResendIdentityOracle.oracleName
    let hooks: OracleHooks = [.applied, .serverApplied]
    let appliedKinds: AppliedKinds = [.messageInserted]
    let serverAppliedKinds: ServerAppliedKinds = [.restarted, .messageAccepted]
    unowned let suite: OracleSuite
    private struct Key: Hashable { var device: Int; var conversation: ConversationKey; var objectName: String }
    private var created: [Key: Int] = [:]
    private var accepted: [Key: Int] = [:]
    private var judging = true
    private var reported: Set<Int> = []

    init(suite: OracleSuite) { self.suite = suite }

    func world(_ world: World, device d: Int, applied effects: AppliedClientEffects) {
        for case .callback(.messageInserted(let row)) in effects {
            created[Key(device: d, conversation: row.conversation, objectName: row.objectName), default: 0] += 1
        }
    }

    func world(_ world: World, serverApplied serverEffects: AppliedServerEffects) {
        for case .event(let e) in serverEffects {
            switch e {
            case .restarted(let kept) where !kept:
                judging = false
            case .messageAccepted(let m):
                guard judging, let dev = m.senderDeviceId, let d = world.deviceIndex(dev), !reported.contains(d) else { continue }
                let key = Key(device: d, conversation: m.conversation, objectName: m.objectName)
                guard let made = created[key] else { continue }      // not a type the app sends (commands)
                accepted[key, default: 0] += 1
                if accepted[key]! > made {
                    reported.insert(d)
                    suite.report(name, device: d, conversation: m.conversation, messageUId: m.messageUId,
                                 "the server accepted \(accepted[key]!) \(m.objectName) messages from \(dev) in \(m.conversation) "
                                 + "but the app created only \(made): a resend became a second message")
                }
            default:
                break
            }
        }
    }

    func finalCheck(_ world: World) {}
}
