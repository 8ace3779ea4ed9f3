import IMClient
import IMServer
import IMStore
import IMWire
import SimKernel

/// No two rows with the same messageUId in a device's store, and no message notified to the app
/// twice. A sync echo completing its own row is an update (`isNew == false`), not a duplicate.
/// Quitting or being removed from a chatroom clears that room's local messages, so a later
/// re-delivery of them is not a duplicate.
final class NoDuplicateOracle: Oracle {
    let name = "no-duplicate"
    unowned let suite: OracleSuite
    /// Per device: messageUId → (conversation, messageId) of the row holding it.
    private var rows: [[String: (ConversationKey, Int64)]] = []
    private var notified: [Set<String>] = []

    init(suite: OracleSuite) { self.suite = suite }

    private func ensure(_ d: Int) {
        while rows.count <= d { rows.append([:]); notified.append([]) }
    }

    func world(_ world: World, device d: Int, effects: [ClientEffect]) {
        ensure(d)
        for e in effects {
            switch e {
            case .note(.stored(let id, let uid?, let conv, _, _, true)):
                // The store is the judge: the earlier row may have been deleted since (chatroom
                // quit, a restart clearing a stale room, clear history).
                if let first = rows[d][uid], ((try? world.store(ofDevice: d).countRows(withUId: uid)) ?? 2) > 1 {
                    suite.report(name, device: d, conversation: conv, messageUId: uid,
                                 "duplicate: messageUId \(uid) stored twice on \(world.deviceId(d)) (messageId \(first.1) and \(id))")
                }
                rows[d][uid] = (conv, id)
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
                if !notified[d].insert(uid).inserted {
                    suite.report(name, device: d, conversation: m.conversation, messageUId: uid,
                                 "duplicate: messageUId \(uid) notified to the app twice on \(world.deviceId(d))")
                }
            case .callback(.chatroomQuit(let room)), .callback(.chatroomKicked(let room)), .callback(.chatroomDestroyed(let room)):
                forget(room: room, device: d)
            default:
                break
            }
        }
    }

    func world(_ world: World, note: WorldNote) {
        // A restarted app shows its messages afresh; what it was told before the kill is gone.
        if case .lifecycle(let d, .started) = note {
            ensure(d)
            notified[d] = []
        }
    }

    private func forget(room: String, device d: Int) {
        let key = ConversationKey(.chatroom, room)
        for uid in rows[d].keys.sorted() where rows[d][uid]!.0 == key {
            rows[d][uid] = nil
            notified[d].remove(uid)
        }
    }

    func finalCheck(_ world: World) {
        // The store's own view: any messageUId held by two rows is a duplicate, whatever the notes said.
        for d in 0..<world.deviceCount {
            guard let dups = try? world.store(ofDevice: d).duplicateMessageUIds(), let first = dups.first else { continue }
            if suite.violations.contains(where: { $0.oracle == name && $0.device == world.deviceId(d) }) { continue }
            suite.report(name, device: d, messageUId: first.messageUId,
                         "duplicate: the store of \(world.deviceId(d)) holds \(dups.count) messageUId(s) in several rows, e.g. \(first.messageUId)")
        }
    }
}
