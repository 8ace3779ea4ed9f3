import IMClient
import IMServer
import IMStore
import IMWire
import SimKernel

/// No two rows with the same messageUId in a device's store, and no message notified to the app
/// twice. A sync echo completing its own row is an update (`isNew == false`), not a duplicate.
/// Quitting or being removed from a chatroom clears that room's local messages, so a later
/// re-delivery of them is not a duplicate.
///
/// Two more kinds of duplicate that no messageUId shows:
/// - the server accepted two messages for one send — the same (sender, clientUniqueId) — so every
///   recipient sees it twice under two messageUIds (a resend without idempotency, B2);
/// - two conversations in a device's list for the same (type, targetId trimmed of whitespace) —
///   one peer shown twice (B10).
final class NoDuplicateOracle: Oracle {
    let name = "no-duplicate"
    unowned let suite: OracleSuite
    /// Per device: messageUId → (conversation, messageId) of the row holding it.
    private var rows: [[String: (ConversationKey, Int64)]] = []
    /// Per device: messageUId → conversation of every message the app was told about.
    private var notified: [[String: ConversationKey]] = []
    /// sender userId → clientUniqueId → the messageUId the server accepted for it.
    private var acceptedSends: [String: [Int64: String]] = [:]
    /// Per device: conversations seen under a key that is not trimmed, by their trimmed key
    /// (almost always empty, so the common path costs one `isEmpty`).
    private var untrimmed: [[ConversationKey: ConversationKey]] = []
    private var conversationReported: Set<Int> = []

    init(suite: OracleSuite) { self.suite = suite }

    private func ensure(_ d: Int) {
        while rows.count <= d { rows.append([:]); notified.append([:]); untrimmed.append([:]) }
    }

    func world(_ world: World, serverApplied serverEffects: AppliedServerEffects) {
        for case .event(.messageAccepted(let m)) in serverEffects where m.clientUniqueId != 0 && m.senderDeviceId != nil {
            if let first = acceptedSends[m.senderUserId]?[m.clientUniqueId] {
                let d = m.senderDeviceId.flatMap { world.deviceIndex($0) }
                suite.report(name, device: d, conversation: m.conversation, messageUId: m.messageUId,
                             "duplicate: the server accepted \(m.messageUId) and \(first) for one send of \(m.senderUserId) " +
                             "(clientUniqueId \(m.clientUniqueId)): a resend stored twice, every recipient sees it twice")
            } else {
                acceptedSends[m.senderUserId, default: [:]][m.clientUniqueId] = m.messageUId
            }
        }
    }

    /// Trimmed of whitespace at both ends (the SDK's normalisation of a target id).
    static func trimmed(_ key: ConversationKey) -> ConversationKey? {
        let t = key.targetId
        // Fast path (almost every id): both ends ASCII and not whitespace.
        if let f = t.utf8.first, let l = t.utf8.last, f < 0x80, l < 0x80, !asciiSpace(f), !asciiSpace(l) { return nil }
        guard let f = t.first, let l = t.last, f.isWhitespace || l.isWhitespace else { return nil }
        return ConversationKey(key.type, String(t.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed()))
    }

    private static func asciiSpace(_ b: UInt8) -> Bool { b == 0x20 || (0x09...0x0D).contains(b) }

    /// A message landed in `conv` on device `d`: is the same peer now listed twice?
    private func checkConversation(_ world: World, _ d: Int, _ conv: ConversationKey) {
        var pair: (ConversationKey, ConversationKey)?
        if let normal = Self.trimmed(conv) {
            untrimmed[d][normal] = conv
            pair = (normal, conv)
        } else if !untrimmed[d].isEmpty, let other = untrimmed[d][conv] {
            pair = (conv, other)
        }
        guard let (a, b) = pair, !conversationReported.contains(d) else { return }
        let store = world.store(ofDevice: d)
        guard ((try? store.conversation(a)) ?? nil) != nil, ((try? store.conversation(b)) ?? nil) != nil else { return }
        conversationReported.insert(d)
        suite.report(name, device: d, conversation: b,
                     "duplicate conversation: \(world.deviceId(d)) lists \"\(a)\" and \"\(b)\", the same \(a.type) peer twice")
    }

    func world(_ world: World, device d: Int, applied effects: AppliedClientEffects) {
        ensure(d)
        for e in effects {
            switch e {
            case .callback(.messageInserted(let row)):
                checkConversation(world, d, row.conversation)
            case .note(.stored(_, _, let conv, _, _, _)) where conv.type != .chatroom:
                checkConversation(world, d, conv)
                if case .note(.stored(let id, let uid?, let conv, _, _, true)) = e { storedNew(world, d, id, uid, conv) }
            case .note(.stored(let id, let uid?, let conv, _, _, true)):
                storedNew(world, d, id, uid, conv)
            case .callback(.sendResult(let id, let uid?, _, nil)):
                if let first = rows[d][uid], first.1 != id {
                    suite.report(name, device: d, conversation: first.0, messageUId: uid,
                                 "duplicate: own message \(uid) completed on messageId \(id) but already stored as messageId \(first.1)")
                }
                if let conv = (try? world.store(ofDevice: d).message(id: id))??.conversation {
                    rows[d][uid] = (conv, id)
                }
            case .callback(.received(let m, _, _, _)):
                guard let uid = m.messageUId else { continue }
                if notified[d].updateValue(m.conversation, forKey: uid) != nil {
                    suite.report(name, device: d, conversation: m.conversation, messageUId: uid,
                                 "duplicate: messageUId \(uid) notified to the app twice on \(world.deviceId(d))")
                }
            case .callback(.chatroomQuit(let room)), .callback(.chatroomKicked(let room)), .callback(.chatroomDestroyed(let room)),
                 .callback(.chatroomJoinFailed(let room, _)):
                // (A failed join forgets the room and deletes its local messages, as a quit does.)
                forget(room: room, device: d)
            default:
                break
            }
        }
    }

    private func storedNew(_ world: World, _ d: Int, _ id: Int64, _ uid: String, _ conv: ConversationKey) {
        // The store is the judge: the earlier row may have been deleted since (chatroom
        // quit, a restart clearing a stale room, clear history).
        if let first = rows[d][uid], ((try? world.store(ofDevice: d).countRows(withUId: uid)) ?? 2) > 1 {
            suite.report(name, device: d, conversation: conv, messageUId: uid,
                         "duplicate: messageUId \(uid) stored twice on \(world.deviceId(d)) (messageId \(first.1) and \(id))")
        }
        rows[d][uid] = (conv, id)
    }

    func world(_ world: World, note: WorldNote) {
        // A restarted app shows its messages afresh; what it was told before the kill is gone.
        if case .lifecycle(let d, .started) = note {
            ensure(d)
            notified[d] = [:]
        }
    }

    private func forget(room: String, device d: Int) {
        let key = ConversationKey(.chatroom, room)
        // (Filtering keeps the same entries whatever the dictionaries' order.)
        rows[d] = rows[d].filter { $0.value.0 != key }
        notified[d] = notified[d].filter { $0.value != key }
    }

    func finalCheck(_ world: World) {
        // The conversation lists: one row per (type, trimmed targetId).
        for d in 0..<world.deviceCount where !conversationReported.contains(d) {
            guard let convs = try? world.store(ofDevice: d).conversationList() else { continue }
            var seen: [ConversationKey: ConversationKey] = [:]
            for c in convs {
                let normal = Self.trimmed(c.key) ?? c.key
                if let other = seen[normal] {
                    conversationReported.insert(d)
                    suite.report(name, device: d, conversation: c.key,
                                 "duplicate conversation: \(world.deviceId(d)) lists \"\(other)\" and \"\(c.key)\", the same \(normal.type) peer twice")
                    break
                }
                seen[normal] = c.key
            }
        }
        // The store's own view: any messageUId held by two rows is a duplicate, whatever the notes said.
        for d in 0..<world.deviceCount {
            guard let dups = try? world.store(ofDevice: d).duplicateMessageUIds(), let first = dups.first else { continue }
            if suite.violations.contains(where: { $0.oracle == name && $0.device == world.deviceId(d) }) { continue }
            suite.report(name, device: d, messageUId: first.messageUId,
                         "duplicate: the store of \(world.deviceId(d)) holds \(dups.count) messageUId(s) in several rows, e.g. \(first.messageUId)")
        }
    }
}
