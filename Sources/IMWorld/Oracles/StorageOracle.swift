import IMClient
import IMServer
import IMStore
import IMWire
import SimKernel

/// What the platform promises about a device's database under storage faults (issue 28),
/// judged from the app's callbacks, the server's accepted messages and the world's fault events
/// — never from the store's notes or the simulated disk's sync state:
///
/// - **app kill**: every message the app was told is stored (a `received` callback with a row,
///   a successful `sendResult`) is in the store after the kill, with its messageUId;
/// - **power loss**: such a message may be gone (its commit was not synced yet), but then it is
///   owed: the next syncs must bring it back (the server accepted it) by the end of the run, and
///   once, not twice;
/// - after every recovery (the store reopened after a kill or a power loss):
///   `PRAGMA integrity_check` is clean and every conversation's unread count equals its
///   counted unread rows (`IMStore+Invariants`; skipped under B14, whose drift is the unread
///   oracle's).
///
/// Chatroom messages are not promised (the SDK clears its rooms at every start). Only devices on
/// a simulated disk (`client.store: "device"`) are watched.
final class StorageOracle: Oracle {
    static let oracleName = "storage"
    let name = StorageOracle.oracleName
    let hooks: OracleHooks = [.applied, .note]
    let appliedKinds: AppliedKinds = [.received, .sendResult]
    unowned let suite: OracleSuite

    /// Per device: messageUId → messageId of every row the app was told about.
    private var told: [[String: Int64]] = []
    /// Per device: messages a power loss took back, owed by the next syncs (uid → conversation).
    private var owed: [[String: ConversationKey]] = []
    /// Per device: a power loss happened and its store was not checked since.
    private var powerLost: [Bool] = []
    private var reported: Set<Int> = []

    init(suite: OracleSuite) { self.suite = suite }

    private func ensure(_ d: Int) {
        while told.count <= d { told.append([:]); owed.append([:]); powerLost.append(false) }
    }

    private func watched(_ world: World, _ d: Int) -> Bool { world.devices[d].disk != nil }

    /// Nothing owed to a device expected online (the liveness phase waits for this): each message
    /// a power loss took back is in one row again — brought back by a sync, or by SQLite itself
    /// (`finalCheck`'s criterion). Says the first device still waiting, for the liveness report.
    ///
    /// SQLite can bring one back: a torn power loss ends the log at a torn frame but leaves later
    /// frames of the same generation behind; when the restarted app then commits exactly what it
    /// committed after the previous start (the same start-up step on the same database, so the
    /// same frames under the same salt and checksum chain), the next recovery reads on into those
    /// frames and their commits return (quickstart-storage seed 23861; Docs/store.md).
    func unrecovered(_ world: World) -> String? {
        for d in owed.indices where !owed[d].isEmpty && world.expectedOnline(d) && world.hasConnected(device: d) {
            let store = world.store(ofDevice: d)
            let missing = owed[d].keys.sorted().filter { ((try? store.countRows(withUId: $0)) ?? 0) != 1 }
            guard let first = missing.first else { continue }
            return "storage waits for \(missing.count) message(s) a power loss took back on \(world.deviceId(d)), first \(first)"
        }
        return nil
    }

    func world(_ world: World, device d: Int, applied effects: AppliedClientEffects) {
        guard watched(world, d) else { return }
        ensure(d)
        for e in effects {
            switch e {
            case .callback(.received(let m, _, _, _)) where m.messageId != 0 && m.conversation.type != .chatroom:
                guard let uid = m.messageUId else { continue }
                told[d][uid] = m.messageId
                owed[d][uid] = nil
            case .callback(.sendResult(let id, let uid?, _, nil)) where id != 0:
                guard let conv = suite.paths.acceptedMessages[uid]?.conversation, conv.type != .chatroom else { continue }
                told[d][uid] = id
                owed[d][uid] = nil
            default:
                break
            }
        }
    }

    func world(_ world: World, note: WorldNote) {
        switch note {
        case .lifecycle(let d, .killed):
            // The store was reopened after the crash; a power loss, if any, comes after this.
            guard watched(world, d) else { return }
            ensure(d)
            check(world, d, afterPowerLoss: false)
        case .fault(.powerLoss, let d?, true, _), .fault(.powerLossTorn, let d?, true, _):
            ensure(d)
            powerLost[d] = true
        case .lifecycle(let d, .started):
            guard watched(world, d) else { return }
            ensure(d)
            if powerLost[d] { check(world, d, afterPowerLoss: true) }
        default:
            break
        }
    }

    /// The store after a recovery: told messages present (or owed after a power loss), sound.
    private func check(_ world: World, _ d: Int, afterPowerLoss: Bool) {
        let store = world.store(ofDevice: d)
        guard store.isOpen, !reported.contains(d) else { return }   // an open that failed: the next start checks
        powerLost[d] = false
        let what = afterPowerLoss ? "a power loss" : "an app kill"
        if let problems = try? store.integrityProblems(), let first = problems.first {
            return report(d, nil, nil, "store of \(world.deviceId(d)) corrupt after \(what): integrity_check says \(first)" +
                          (problems.count > 1 ? " (+\(problems.count - 1) more)" : ""))
        }
        for uid in told[d].keys.sorted() {
            let id = told[d][uid]!
            let row = (try? store.message(id: id)) ?? nil
            if let row, row.messageUId == uid { continue }
            let rows = (try? store.messages(withUId: uid)) ?? []
            if let other = rows.first {
                told[d][uid] = other.messageId
                continue
            }
            let conv = suite.paths.acceptedMessages[uid]?.conversation ?? row?.conversation
            if afterPowerLoss {
                told[d][uid] = nil
                owed[d][uid] = conv ?? ConversationKey(.privateChat, "")
                continue
            }
            let state = row.map { "the row says \($0.sentStatus) with messageUId \($0.messageUId ?? "none") and sentTime \($0.sentTime)" }
                ?? "no row holds it"
            return report(d, conv, uid, "lost by \(what): the app was told \(uid) is stored (messageId \(id)) on \(world.deviceId(d)), " +
                          "but after the restart \(state)")
        }
        guard !world.clientConfig.bugs.contains(.b14), let convs = try? store.conversationList(types: ConversationType.allCases) else { return }
        for c in convs {
            guard let expected = try? store.countUnreadCandidates(in: c.key), c.unreadCount != expected else { continue }
            return report(d, c.key, nil, "after \(what) the unread count of \(c.key) is \(c.unreadCount) but \(expected) " +
                          "received counted messages are unread and not recalled")
        }
    }

    private func report(_ d: Int, _ conv: ConversationKey?, _ uid: String?, _ detail: String) {
        reported.insert(d)
        suite.report(name, device: d, conversation: conv, messageUId: uid, detail)
    }

    func finalCheck(_ world: World) {
        for d in owed.indices where watched(world, d) && !reported.contains(d) {
            guard world.expectedOnline(d), world.hasConnected(device: d), world.store(ofDevice: d).isOpen else { continue }
            let store = world.store(ofDevice: d)
            for uid in owed[d].keys.sorted() {
                let n = (try? store.countRows(withUId: uid)) ?? 0
                if n == 1 { continue }
                let conv = owed[d][uid]!
                report(d, conv, uid, n == 0
                       ? "lost for good: \(uid) was taken back by a power loss on \(world.deviceId(d)) and no sync brought it back"
                       : "duplicate after recovery: \(uid) is in \(n) rows on \(world.deviceId(d)) after a power loss")
                break
            }
        }
    }
}
