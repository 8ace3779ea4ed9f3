import IMClient
import IMServer
import IMStore
import IMWire
import SimKernel

/// Chatroom rules: the join pull returns min(count, 50) of the newest messages (none for -1);
/// the client rejoins (`joinChrmR`) after every reconnect while its app is in a room; local
/// messages are gone after quit; the room's attributes are synced within 40 s of a
/// join (else reads stay 34004); the drop policy never lets low-priority messages into the
/// reserved high slots; and a member kicked by the offline rule is not silently rejoined with
/// messages missing (the B9 hazard). Docs/oracles.md gives each rule exactly.
final class ChatroomOracle: Oracle {
    let name = "chatroom"
    let hooks: OracleHooks = [.dispatching, .input, .applied, .serverApplied, .note]
    unowned let suite: OracleSuite
    /// Per room: the newest accepted, not dropped, messages (uid, sending device), up to the
    /// server's `historySize` (the scenario's knob; im-semantics §6: 50).
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
    /// The rejoin after every reconnect: the device-local rule shared with `imsim replay`.
    private var rejoinRules: [RejoinRule] = []
    /// (due, device) of rejoins to check, in time order (the grace is constant).
    private var rejoinDeadlines: [(SimTime, Int)] = []

    // KV sync after a join (B8): the device-local rule shared with `imsim replay`.
    private var kvRules: [AttributeSyncRule] = []
    /// (due, device) deadlines to look at, in time order.
    private var kvDeadlines: [(SimTime, Int)] = []

    // Offline kicks and rejoins (B9).
    /// user → room → when the offline rule removed it.
    private var offlineKickedAt: [String: [String: SimTime]] = [:]
    /// Per device, per room: when the app last learnt where it stands (a fresh join, a quit, a kick notice).
    private var appToldAt: [Int: [String: SimTime]] = [:]
    /// Devices whose last join on their current connection was a `joinChrmR`.
    private var lastJoinWasRejoin: Set<Int> = []

    private var chatroomConfig: ChatroomConfig?
    /// The offline-kick rule and the KV limits/ownership, re-derived from server events.
    private var rules = ChatroomRuleModel()

    init(suite: OracleSuite) { self.suite = suite }

    /// The chatroom knobs as the scenario sets them (derived from the scenario the way the world
    /// configures its server — never read from the server core it judges), once.
    private func knobs(_ world: World) -> ChatroomConfig {
        if let c = chatroomConfig { return c }
        let c = World.serverConfig(world.scenario).chatroom
        chatroomConfig = c
        rules.maxKeys = c.kvMaxKeys
        rules.maxKeyLength = c.kvMaxKeyLength
        return c
    }

    /// (No copy of the rule is returned: copying it per fact was ~1% of a sweep seed.)
    private func ensureKVRule(_ world: World, _ d: Int) {
        while kvRules.count <= d { kvRules.append(AttributeSyncRule(requestTimeoutNanoseconds: world.clientConfig.requestTimeout.nanoseconds)) }
    }

    /// Feeds one device's KV rule and reports what it finds.
    private func kv(_ world: World, _ d: Int, _ body: (inout AttributeSyncRule) -> [AttributeSyncRule.Finding]) {
        ensureKVRule(world, d)
        // One in-place access: reading `kvRules[d].nextDue` copied the whole rule (twice a fact).
        func step(_ r: inout AttributeSyncRule) -> (Int64?, [AttributeSyncRule.Finding], Int64?) {
            let before = r.nextDue
            let findings = body(&r)
            return (before, findings, r.nextDue)
        }
        let (before, findings, after) = step(&kvRules[d])
        if let due = after, due != before {
            let t = SimTime(nanoseconds: due)
            let at = kvDeadlines.lastIndex { $0.0 <= t }.map { $0 + 1 } ?? 0
            kvDeadlines.insert((t, d), at: at)
        }
        for f in findings {
            suite.report(name, device: d, conversation: ConversationKey(.chatroom, f.room),
                         f.detail(sinceText: SimTime(nanoseconds: f.since).description))
        }
    }

    /// Feeds one device's rejoin rule and reports what it finds.
    private func rejoin(_ world: World, _ d: Int, _ body: (inout RejoinRule) -> [RejoinRule.Finding]) {
        while rejoinRules.count <= d { rejoinRules.append(RejoinRule()) }
        func step(_ r: inout RejoinRule) -> (Int64?, [RejoinRule.Finding], Int64?) {
            let before = r.nextDue
            let findings = body(&r)
            return (before, findings, r.nextDue)
        }
        let (before, findings, after) = step(&rejoinRules[d])
        if let due = after, due != before { rejoinDeadlines.append((SimTime(nanoseconds: due), d)) }
        for f in findings {
            suite.report(name, device: d, conversation: ConversationKey(.chatroom, f.room),
                         f.detail(sinceText: SimTime(nanoseconds: f.since).description))
        }
    }

    func world(_ world: World, device d: Int, input: ClientInput, localMs: Int64) {
        let frames = suite.inboundFrames
        // Only the inputs the rules read (stepping both through closures on every input was ~1% of a sweep seed).
        if RejoinRule.takes(input) { rejoin(world, d) { $0.input(input, at: world.now.nanoseconds) } }
        if AttributeSyncRule.takes(input, inbound: frames) {
            kv(world, d) { $0.input(input, inbound: frames, at: world.now.nanoseconds); return [] }
        }
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
            lastJoinWasRejoin.remove(d)
        default:
            break
        }
    }

    /// Index (among the chrmPull frames of `bytes`) of the join pull: the last `chrmPull{syncTime
    /// = 0}` (wire-protocol §4: `joinChrm` then `chrmPull{0, N}`). When the automatic rejoin and
    /// the app's join are answered in one input, the rejoin's pull (from the room cursor) was
    /// written first: the app's join can only be sent after the CONNACK that sent the rejoin, and
    /// a connection's answers come in order.
    static func joinPullIndex(_ bytes: [UInt8], obfuscated: Bool) -> Int? {
        var dec = StreamDecoder(direction: .clientToServer, obfuscated: obfuscated)
        guard let frames = try? dec.feed(bytes) else { return nil }
        var found: Int?
        var i = 0
        for case .query(let q) in frames where q.topic == Topic.chrmPull.rawValue {
            if let m = try? q.decodeBody(RMTPChrmPullMsg.self), m.syncTime == 0 { found = i }
            i += 1
        }
        return found
    }

    func world(_ world: World, device d: Int, applied: AppliedClientEffects) {
        let effects = applied.effects
        if AttributeSyncRule.takes(effects) { kv(world, d) { $0.effects(effects, at: world.now.nanoseconds) } }
        if RejoinRule.takes(effects) { rejoin(world, d) { $0.effects(effects, at: world.now.nanoseconds) } }
        // Local messages are deleted on quit: the device-local rule shared with `imsim replay`.
        for f in QuitRule.effects(effects, shown: { world.appMessageCount(ofDevice: d, $0) }) {
            suite.report(name, device: d, conversation: f.conversation, messageUId: f.messageUId, f.detail)
        }
        let joined = effects.contains { if case .callback(.chatroomJoined) = $0 { true } else { false } }
        for e in effects {
            switch e {
            case .send(let bytes, let frames):
                let joinPull = joined ? Self.joinPullIndex(bytes, obfuscated: world.clientConfig.obfuscatedStream) : nil
                for (i, f) in frames.lazy.filter({ $0.topic == Topic.chrmPull.rawValue }).enumerated() {
                    _ = f
                    chrmPullsInFlight[world.deviceId(d), default: []].append(i == joinPull)
                }
                for f in frames where f.topic == Topic.joinChrmR.rawValue || f.topic == Topic.joinChrm.rawValue {
                    // Only a first join pulls the newest `count`; a rejoin pulls from the room cursor.
                    if f.topic == Topic.joinChrm.rawValue {
                        lastJoinWasRejoin.remove(d)
                        if let r = inRoom[d] { appToldAt[d, default: [:]][r] = world.now }
                    } else {
                        lastJoinWasRejoin.insert(d)
                    }
                }
            case .closeConnection:
                // The SDK gave up on its connection (ping or request timeout): the pulls on it
                // are not answered (the rejoin rule judges the session itself).
                chrmPullsInFlight[world.deviceId(d)] = nil
            case .callback(.chatroomQuit(let room)):
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
            rejoin(world, d) { $0.appRestarted(); return [] }
            lastJoinWasRejoin.remove(d)
            kv(world, d) { $0.appRestarted(); return [] }
        }
    }

    func world(_ world: World, dispatching event: SimEvent<WorldEvent>) {
        while let first = rejoinDeadlines.first, first.0 <= event.time {
            rejoinDeadlines.removeFirst()
            rejoin(world, first.1) { $0.due(at: event.time.nanoseconds) }
        }
        // Deadlines are appended in time order (the grace is constant).
        while let first = kvDeadlines.first, first.0 <= event.time {
            kvDeadlines.removeFirst()
            guard world.isRunning(device: first.1) else { continue }
            kv(world, first.1) { $0.due(at: event.time.nanoseconds) }
        }
    }

    // MARK: The drop policy (B13)

    /// Judges the quota drops of one server effect list by the shared window model: a quota drop
    /// while the window still had a slot for the message's priority is a drop the quota does not
    /// explain (judged only while no client has sent a chatroom STATUS message, which takes a slot
    /// without a `messageAccepted`); a high-priority drop in a window where more low-priority
    /// messages got in than there are shared slots means low took reserved high slots (B13).
    private func quota(_ world: World) {
        // Most lists drop nothing: the model (read as a copy) only then.
        guard suite.quotaJudgements.contains(where: \.dropped), let model = suite.quotaModel else { return }
        let k = model.knobs
        for j in suite.quotaJudgements where j.dropped {
            let m = j.message, w = j.window
            let device = m.senderDeviceId.flatMap { world.deviceIndex($0) }
            if j.hadSlot && !model.uncountedSlots {
                suite.report(name, device: device, conversation: m.conversation,
                             messageUId: m.messageUId, "chatroom \(m.conversation.targetId): \(j.priority.rawValue)-priority " +
                             "\(m.objectName) from \(m.senderUserId) dropped by the quota while its \(k.windowMs) ms window " +
                             "(window \(w.index)) had room: \(w.reservedUsed)/\(k.reserved) reserved and \(w.sharedUsed)/\(k.shared) shared slots used")
            } else if j.priority == .high && w.lowAdmitted > k.shared {
                suite.report(name, device: device, conversation: m.conversation,
                             messageUId: m.messageUId, "chatroom \(m.conversation.targetId): high-priority \(m.objectName) from \(m.senderUserId) dropped by the quota while " +
                             "\(w.lowAdmitted) low-priority messages got into the same \(k.windowMs) ms window " +
                             "(window \(w.index); only \(k.shared) shared slots): low took reserved high slots")
            }
        }
    }

    // MARK: The offline-kick rule and the attribute rules

    private func checkRules(_ world: World, _ e: ServerEvent) {
        switch e {
        case .sessionOpened(let c, _, let dev, _, _): rules.sessionOpened(c, device: dev)
        case .sessionClosed(let c, let user, _, _): rules.sessionClosed(c, user: user, now: world.serverMs)
        case .chatroomJoined(let room, let user, let dev): rules.joined(room: room, user: user, device: dev)
        case .chatroomLeft(let room, let user, let reason): rules.left(room: room, user: user, reason: reason)
        case .chatroomDestroyed(let room, _): rules.destroyed(room: room)
        case .restarted: rules.restarted()
        case .messageAccepted(let m) where m.conversation.type == .chatroom && !m.flags.isStatus:
            // A message dropped for everyone (quota, sensitive word) never reaches the room: the
            // server evaluates no kick for it.
            guard m.droppedForEveryone == nil else { return }
            let room = m.conversation.targetId
            let whitelist = suite.chatroomUserWhitelist(world, room: room)
            for p in rules.messageProduced(room: room, now: world.serverMs, config: knobs(world), whitelist: whitelist) {
                suite.report(name, device: m.senderDeviceId.flatMap { world.deviceIndex($0) }, conversation: m.conversation,
                             messageUId: m.messageUId, "offline-kick rule: \(p)")
            }
        case .chatroomKVChanged(let room, let key, let user, let deleted):
            _ = knobs(world)
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

    func world(_ world: World, serverApplied: AppliedServerEffects) {
        let serverEffects = serverApplied.effects
        quota(world)
        var overflow: [(user: String, room: String, uid: String)] = []
        for effect in serverEffects {
            guard case .event(let e) = effect else { continue }
            checkRules(world, e)
            switch e {
            case .messageAccepted(let m) where m.conversation.type == .chatroom:
                // A message dropped for everyone never enters the server's ring (§6), so it
                // must not push the oldest entry out of the model either.
                guard !m.flags.isStatus, m.droppedForEveryone == nil else { continue }
                // In place: a copy of the room's ring per message was ~0.5% of a sweep seed.
                let ring = max(0, knobs(world).historySize)
                history[m.conversation.targetId, default: []].append((m.messageUId, m.senderDeviceId))
                if let n = history[m.conversation.targetId]?.count, n > ring {
                    history[m.conversation.targetId]!.removeFirst(n - ring)
                }
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
                // im-semantics §6: -1 none, 0 the default 10, else that many up to the SDK's
                // maximum (50; the client knob `chatroomJoinMaxCount`); the ring bounds it too.
                let want = n < 0 ? 0 : n == 0 ? 10 : min(Int(n), Int(world.clientConfig.chatroomJoinMaxCount))
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
            rejoin(world, d) { $0.finish(at: world.now.nanoseconds) }
        }
    }
}
