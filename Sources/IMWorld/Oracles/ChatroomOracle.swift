import IMClient
import IMServer
import IMStore
import IMWire
import SimKernel

/// Chatroom rules: the join pull returns min(count, 50) of the newest messages (none for -1);
/// the client rejoins (`joinChrmR`) after every reconnect while its app is in a room; local
/// messages are gone after quit; the room's attributes are synced within `kvSyncGrace` of a
/// join (else reads stay 34004); the drop policy never lets low-priority messages into the
/// reserved high slots; and a member kicked by the offline rule is not silently rejoined with
/// messages missing (the B9 hazard). Docs/oracles.md gives each rule exactly.
final class ChatroomOracle: Oracle {
    let name = "chatroom"
    unowned let suite: OracleSuite
    /// Per room: the newest accepted, not dropped, messages (uid, sending device), up to 50.
    private var history: [String: [(uid: String, device: String?)]] = [:]
    private var joinCount: [Int: Int32] = [:]
    /// Per deviceId: the chrmPull requests of the current connection not answered yet, in order
    /// (true = the join pull, sent with the `chatroomJoined` callback). The server answers a
    /// connection's requests in order, so the join pull's answer is not an earlier pull's.
    private var chrmPullsInFlight: [String: [Bool]] = [:]
    /// deviceId of each server connection (a refused chrmPull is answered without a `pulled`).
    private var connectionDevice: [ConnectionID: String] = [:]
    // Rejoin tracking per device.
    private var inRoom: [Int: String] = [:]
    private var connectedOnce: Set<Int> = []
    private var sessionStart: [Int: SimTime] = [:]
    private var rejoinedThisSession: Set<Int> = []
    private let rejoinGrace = SimDuration.seconds(10)
    /// (due, device, session start) of rejoins to check.
    private var rejoinDeadlines: [(SimTime, Int, SimTime)] = []

    // KV sync after a join (B8).
    /// Longer than the request timeout (30 s): a pullKV on a live connection has been answered,
    /// or failed, by then.
    let kvSyncGrace = SimDuration.seconds(40)
    /// Per device, per room: since when the attributes are owed (join or rejoin completed).
    private var kvOwedSince: [Int: [String: SimTime]] = [:]
    private var kvSynced: [Int: Set<String>] = [:]
    /// Deadlines to check: (due, device, room, connection generation).
    private var kvDeadlines: [(SimTime, Int, String, Int)] = []
    private var connectionGeneration: [Int: Int] = [:]

    // Offline kicks and rejoins (B9).
    /// user → room → when the offline rule removed it.
    private var offlineKickedAt: [String: [String: SimTime]] = [:]
    /// Per device, per room: when the app last learnt where it stands (a fresh join, a quit, a kick notice).
    private var appToldAt: [Int: [String: SimTime]] = [:]
    /// Devices whose last join on their current connection was a `joinChrmR`.
    private var lastJoinWasRejoin: Set<Int> = []

    // The drop policy (B13).
    private var quotaWindow: [String: (window: Int64, lowAdmitted: Int)] = [:]
    private var roomWhitelists: [String: Set<String>] = [:]
    private var chatroomConfig: ChatroomConfig?
    /// The offline-kick rule and the KV limits/ownership, re-derived from server events.
    private var rules = ChatroomRuleModel()

    init(suite: OracleSuite) { self.suite = suite }

    func world(_ world: World, device d: Int, input: ClientInput, localMs: Int64) {
        switch input {
        case .api(.joinChatroom(let r, let n)), .api(.joinExistChatroom(let r, let n)):
            joinCount[d] = n
            inRoom[d] = r
        case .api(.quitChatroom(let r)):
            if inRoom[d] == r { inRoom[d] = nil }
        case .api(.setChatroomKV(let r, let key, _, _, let force)), .api(.removeChatroomKV(let r, let key, let force)):
            rules.kvRequest(room: r, key: key, user: world.userId(ofDevice: d), force: force)
        case .transport(.closed):
            chrmPullsInFlight[world.deviceId(d)] = nil
            checkRejoin(world, d)
            sessionStart[d] = nil
            connectionGeneration[d, default: 0] += 1
            kvOwedSince[d] = nil
            lastJoinWasRejoin.remove(d)
        default:
            break
        }
    }

    private func checkRejoin(_ world: World, _ d: Int) {
        guard let start = sessionStart[d], let room = inRoom[d], !rejoinedThisSession.contains(d),
              world.now - start >= rejoinGrace else { return }
        sessionStart[d] = nil
        suite.report(name, device: d, conversation: ConversationKey(.chatroom, room),
                     "connected again at \(start) but never rejoined chatroom \(room) (no joinChrmR in \(world.now - start))")
    }

    func world(_ world: World, device d: Int, effects: [ClientEffect]) {
        for e in effects {
            switch e {
            case .send(_, let frames):
                for f in frames where f.topic == Topic.chrmPull.rawValue {
                    let isJoinPull = effects.contains { if case .callback(.chatroomJoined) = $0 { true } else { false } }
                    chrmPullsInFlight[world.deviceId(d), default: []].append(isJoinPull)
                }
                for f in frames where f.topic == Topic.joinChrmR.rawValue || f.topic == Topic.joinChrm.rawValue {
                    rejoinedThisSession.insert(d)
                    // Only a first join pulls the newest `count`; a rejoin pulls from the room cursor.
                    if f.topic == Topic.joinChrm.rawValue {
                        lastJoinWasRejoin.remove(d)
                        if let r = inRoom[d] { appToldAt[d, default: [:]][r] = world.now }
                    } else {
                        lastJoinWasRejoin.insert(d)
                    }
                }
            case .closeConnection:
                // The SDK gave up on its connection (ping or request timeout): a session shorter
                // than the rejoin grace owed no rejoin; a pullKV on it may be lost, and the next
                // connection owes the attributes afresh.
                checkRejoin(world, d)
                sessionStart[d] = nil
                connectionGeneration[d, default: 0] += 1
                kvOwedSince[d] = nil
                chrmPullsInFlight[world.deviceId(d)] = nil
            case .callback(.chatroomJoined(let room)):
                // A (new) join: the attributes are owed afresh.
                kvSynced[d]?.remove(room)
                owe(world, d, room)
            case .note(.chatroomState(let room, true)):
                if kvSynced[d]?.contains(room) != true { owe(world, d, room) }
            case .callback(.chatroomKVSynced(let room)):
                kvSynced[d, default: []].insert(room)
                kvOwedSince[d]?[room] = nil
            case .callback(.chatroomKV(let room, _, let error)) where error == IMErrorCode.chatroomKVNotSynced.rawValue:
                if let since = kvOwedSince[d]?[room], world.now - since >= kvSyncGrace {
                    kvOwedSince[d]?[room] = nil
                    suite.report(name, device: d, conversation: ConversationKey(.chatroom, room),
                                 "getChatroomKV(\(room)) → 34004 (not synced) \(world.now - since) after the join completed at \(since): " +
                                 "the post-join attribute sync never happened")
                }
            case .callback(.connectionStatus(.connected)):
                // Every session start (the `connected` callback comes once per connect call,
                // not on automatic reconnects, which are what needs the rejoin).
                if connectedOnce.contains(d) {
                    sessionStart[d] = world.now
                    rejoinedThisSession.remove(d)
                    rejoinDeadlines.append((world.now + rejoinGrace, d, world.now))
                }
                connectedOnce.insert(d)
            case .callback(.chatroomQuit(let room)):
                let count = (try? world.store(ofDevice: d).messageCount(in: ConversationKey(.chatroom, room))) ?? 0
                if count > 0 {
                    suite.report(name, device: d, conversation: ConversationKey(.chatroom, room),
                                 "quit chatroom \(room) but \(count) of its messages are still in the store")
                }
                if inRoom[d] == room { inRoom[d] = nil }
            case .callback(.chatroomKicked(let room)), .callback(.chatroomDestroyed(let room)),
                 .callback(.chatroomJoinFailed(let room, _)):
                // A refused join (e.g. while not connected) leaves the app in no room.
                if inRoom[d] == room { inRoom[d] = nil }
                appToldAt[d, default: [:]][room] = world.now
            default:
                break
            }
            if case .callback(.chatroomQuit(let room)) = e { appToldAt[d, default: [:]][room] = world.now }
        }
    }

    func world(_ world: World, note: WorldNote) {
        // A killed app is in no room and its next connection is a fresh start, not a reconnect.
        if case .lifecycle(let d, .killed) = note {
            chrmPullsInFlight[world.deviceId(d)] = nil
            inRoom[d] = nil
            connectedOnce.remove(d)
            sessionStart[d] = nil
            kvOwedSince[d] = nil
            lastJoinWasRejoin.remove(d)
            connectionGeneration[d, default: 0] += 1
        }
    }

    // MARK: KV sync (B8)

    private func owe(_ world: World, _ d: Int, _ room: String) {
        kvOwedSince[d, default: [:]][room] = world.now
        kvDeadlines.append((world.now + kvSyncGrace, d, room, connectionGeneration[d, default: 0]))
    }

    func world(_ world: World, dispatching event: SimEvent<WorldEvent>) {
        while let first = rejoinDeadlines.first, first.0 <= event.time {
            rejoinDeadlines.removeFirst()
            if sessionStart[first.1] == first.2 { checkRejoin(world, first.1) }
        }
        // Deadlines are appended in time order (the grace is constant).
        while let first = kvDeadlines.first, first.0 <= event.time {
            kvDeadlines.removeFirst()
            let (_, d, room, gen) = first
            guard connectionGeneration[d, default: 0] == gen, let since = kvOwedSince[d]?[room],
                  since + kvSyncGrace <= event.time, inRoom[d] == room, world.isRunning(device: d) else { continue }
            kvOwedSince[d]?[room] = nil
            suite.report(name, device: d, conversation: ConversationKey(.chatroom, room),
                         "chatroom \(room): attributes still not synced \(event.time - since) after the join completed at \(since) " +
                         "on a connection that stayed up (reads answer 34004)")
        }
    }

    // MARK: The drop policy (B13)

    /// Recomputes the im-semantics §6 quota from server facts: in one window, low-priority
    /// messages may take only the shared slots, so a high-priority drop in a window where more
    /// low-priority messages than shared slots got in means low took reserved slots.
    private func quota(_ world: World, accepted m: AcceptedMessage, dropped: Bool) {
        if chatroomConfig == nil { chatroomConfig = world.serverCore.config.chatroom }
        let config = chatroomConfig!
        let room = m.conversation.targetId
        if roomWhitelists[room] == nil { roomWhitelists[room] = Set(world.serverCore.directory.chatroomWhitelists[room] ?? []) }
        if config.whitelistTypes.contains(m.objectName) || roomWhitelists[room]!.contains(m.senderUserId) { return }
        let low = m.flags.chatroomPriority == .low || config.lowPriorityTypes.contains(m.objectName)
        let ms = world.serverMs
        let window = config.quotaWindowMs > 0 ? (ms >= 0 ? ms / config.quotaWindowMs : (ms + 1) / config.quotaWindowMs - 1) : ms
        var w = quotaWindow[room] ?? (window, 0)
        if w.window != window { w = (window, 0) }
        if low && !dropped { w.lowAdmitted += 1 }
        quotaWindow[room] = w
        let shared = max(0, config.quotaCapacity - max(0, min(config.quotaReservedHigh, config.quotaCapacity)))
        if !low && dropped && w.lowAdmitted > shared {
            suite.report(name, device: m.senderDeviceId.flatMap { world.deviceIndex($0) }, conversation: m.conversation,
                         messageUId: m.messageUId, "chatroom \(room): high-priority \(m.objectName) from \(m.senderUserId) dropped by the quota while " +
                         "\(w.lowAdmitted) low-priority messages got into the same \(config.quotaWindowMs) ms window " +
                         "(window \(window); only \(shared) shared slots): low took reserved high slots")
        }
    }

    // MARK: The offline-kick rule and the attribute rules

    private func checkRules(_ world: World, _ e: ServerEvent, next: ArraySlice<ServerEffect>) {
        switch e {
        case .sessionOpened(let c, _, let dev, _, _): rules.sessionOpened(c, device: dev)
        case .sessionClosed(let c, let user, _, _): rules.sessionClosed(c, user: user, now: world.serverMs)
        case .chatroomJoined(let room, let user, let dev): rules.joined(room: room, user: user, device: dev)
        case .chatroomLeft(let room, let user, let reason): rules.left(room: room, user: user, reason: reason)
        case .chatroomDestroyed(let room, _): rules.destroyed(room: room)
        case .restarted: rules.restarted()
        case .messageAccepted(let m) where m.conversation.type == .chatroom && !m.flags.isStatus:
            // A quota drop (messageAccepted + dropped) never reaches the room: no kick evaluation.
            let quotaDropped = next.prefix(3).contains {
                if case .event(.dropped(m.messageUId, _, nil, .chatroomQuota)) = $0 { return true }
                return false
            }
            guard !quotaDropped else { return }
            if chatroomConfig == nil { chatroomConfig = world.serverCore.config.chatroom }
            let room = m.conversation.targetId
            let whitelist = Set(world.serverCore.directory.chatroomWhitelists[room] ?? [])
            for p in rules.messageProduced(room: room, now: world.serverMs, config: chatroomConfig!, whitelist: whitelist) {
                suite.report(name, device: m.senderDeviceId.flatMap { world.deviceIndex($0) }, conversation: m.conversation,
                             messageUId: m.messageUId, "offline-kick rule: \(p)")
            }
        case .chatroomKVChanged(let room, let key, let user, let deleted):
            for p in rules.kvChanged(room: room, key: key, user: user, deleted: deleted) {
                suite.report(name, device: nil, conversation: ConversationKey(.chatroom, room), "attributes of \(room): \(p)")
            }
        default:
            break
        }
    }

    // MARK: Offline kick + silent rejoin (B9)

    private func ringOverflow(_ world: World, device dev: String, user: String, room: String, lost: [String]) {
        guard let d = world.deviceIndex(dev), lastJoinWasRejoin.contains(d),
              let kickedAt = offlineKickedAt[user]?[room], (appToldAt[d]?[room] ?? .zero) < kickedAt else { return }
        let stored = lost.filter { suite.paths.acceptedMessages[$0]?.flags.persistent.isStored ?? false }
        guard let first = stored.first else { return }
        suite.report(name, device: d, conversation: ConversationKey(.chatroom, room), messageUId: first,
                     "silent loss: \(user) was kicked from \(room) by the offline rule at \(kickedAt); \(dev) rejoined without " +
                     "its app being told and the rejoin pull (at most \(world.scenario.server.chatroom.historySize)) " +
                     "left out \(stored.count) stored message(s), e.g. \(first)")
    }

    func world(_ world: World, serverEffects: [ServerEffect]) {
        var overflow: [(user: String, room: String, uid: String)] = []
        for (i, effect) in serverEffects.enumerated() {
            guard case .event(let e) = effect else { continue }
            checkRules(world, e, next: serverEffects[(i + 1)...])
            switch e {
            case .messageAccepted(let m) where m.conversation.type == .chatroom:
                // A silent quota drop follows its messageAccepted in the same effects.
                let dropped = serverEffects[(i + 1)...].prefix(3).contains {
                    if case .event(.dropped(m.messageUId, _, nil, .chatroomQuota)) = $0 { return true }
                    return false
                }
                if m.senderDeviceId != nil { quota(world, accepted: m, dropped: dropped) }
                guard !m.flags.isStatus else { continue }
                var h = history[m.conversation.targetId, default: []]
                h.append((m.messageUId, m.senderDeviceId))
                if h.count > 50 { h.removeFirst(h.count - 50) }
                history[m.conversation.targetId] = h
            case .dropped(let uid?, let conv, nil, _) where conv.type == .chatroom:
                history[conv.targetId]?.removeAll { $0.uid == uid }
            case .dropped(let uid?, let conv, let user?, .chatroomRingOverflow):
                overflow.append((user, conv.targetId, uid))
            case .chatroomLeft(let room, let user, .offlineKick):
                offlineKickedAt[user, default: [:]][room] = world.now
            case .sessionOpened(let c, _, let dev, _, _):
                connectionDevice[c] = dev
            case .queryRejected(let c, _, Topic.chrmPull.rawValue, _, _):
                if let dev = connectionDevice[c], chrmPullsInFlight[dev]?.isEmpty == false { chrmPullsInFlight[dev]!.removeFirst() }
            case .pulled(_, let user, let dev, let topic, let uids, _, _) where topic == Topic.chrmPull.rawValue:
                if !overflow.isEmpty {
                    for room in Set(overflow.map(\.room)).sorted() {
                        ringOverflow(world, device: dev, user: user, room: room, lost: overflow.filter { $0.user == user && $0.room == room }.map(\.uid))
                    }
                    overflow.removeAll()
                }
                guard chrmPullsInFlight[dev]?.isEmpty == false, chrmPullsInFlight[dev]!.removeFirst(),
                      let d = world.deviceIndex(dev), let room = inRoom[d] else { continue }
                let n = joinCount[d] ?? 10
                let want = n < 0 ? 0 : n == 0 ? 10 : min(Int(n), 50)
                // A device's own messages are already in its store; the pull leaves them out.
                let h = history[room, default: []].filter { $0.device != dev }.map(\.uid)
                let expected = Array(h.suffix(want))
                // Messages accepted after the pull was answered cannot be in it; compare as sets.
                // A room message outside the newest `want` is wrong even when the count is right.
                let older = uids.first { u in !expected.contains(u) && h.contains(u) }
                if Set(uids) != Set(expected) && (uids.count != min(want, h.count) || older != nil) {
                    suite.report(name, device: d, conversation: ConversationKey(.chatroom, room),
                                 "join pull with count \(n) returned \(uids.count) message(s); the newest \(expected.count) were expected" +
                                 (older.map { " (\($0) is not among them)" } ?? ""))
                }
            default:
                break
            }
        }
    }

    func finalCheck(_ world: World) {
        for d in (0..<world.deviceCount) where world.isRunning(device: d) {
            checkRejoin(world, d)
        }
    }
}
