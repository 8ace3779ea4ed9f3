import IMClient
import IMServer
import IMStore
import IMWire
import SimKernel

/// Every message the server accepted reaches every device that should have it by the end of the
/// liveness phase, unless a recorded drop reason covers it.
///
/// Who should have a stored (persisted) message:
/// - private / group / system: every device of every recipient, and the sender's other devices
///   (multi-device sync), that is expected online at the end of the run;
/// - chatroom (no offline cache): a member device whose app is in the room, that had joined in
///   its current connection before the message was accepted, and whose connection then stayed up
///   for `chatroomGrace` (a connection lost before the pull is the protocol's documented
///   no-offline-cache behaviour, not a loss).
/// Explained drops (server `dropped` events) remove the expectation for that user (or everyone).
/// An `offlineExpired` drop is itself judged against the spec (im-semantics §1: offline messages
/// are kept 7 days, 1–7 configurable — the **scenario's** `offlineRetentionDays`, not the
/// server's config): it explains a message only once its dataTime + retention has passed on the
/// server's clock; an earlier one is reported (`dropped as expired … before the retention`).
/// A message younger than the retention stays owed like any other.
///
/// **Time bound after heal**: a stored private/group/system message owed to a device reaches it
/// within `deliveryBound` of the later of its acceptance and the moment the device's path last
/// became healthy — judged while the device is running, in the foreground, expected online,
/// with its network up, no partition, latency spike or disk fault on it or the server, and the
/// server up. The bound comes from the spec's timers (im-semantics §5, wire-protocol §1.5): a
/// link that died in the fault is found dead within heartbeat + ping timeout (30 s + 6 s), the
/// next attempt comes within the longest backoff (64 s), the CONNACK within its timeout (5 s),
/// and the pull is answered or failed within one request timeout (30 s): 135 s by default.
final class NoLossOracle: Oracle {
    let name = "no-loss"
    let hooks: OracleHooks = [.dispatching, .input, .applied, .serverApplied, .note]
    let appliedKinds: AppliedKinds = [.stored, .connection, .chatroomMembership, .chatroomState]
    let serverAppliedKinds: ServerAppliedKinds = [.messageAccepted, .dropped]
    unowned let suite: OracleSuite
    let chatroomGrace = SimDuration.seconds(10)

    /// messageUId → devices still waiting for it.
    private var pending: [String: [Int]] = [:]
    private var pendingOrder: [String] = []
    /// Per device: messageUIds stored (any time).
    private var have: [Set<String>] = []
    /// Per device: the chatroom the app is in, and whether the client joined it on the current connection.
    private var appRoom: [String?] = []
    private var joinedOnConnection: [Bool] = []
    private var connected: [Bool] = []
    /// Chatroom expectations waiting for their grace period: (deadline, uid, device, connection generation).
    private var chatroomProbation: [(SimTime, String, Int, Int)] = []
    private var generation: [Int] = []
    private var droppedFor: [String: Set<String>] = [:]   // uid → users ("*" = everyone)
    /// Per device: chatroom id → messageUIds promoted to `pending` for it (may include ones
    /// delivered since). `leaveRoom` visits only these instead of every message ever accepted.
    private var roomPending: [[String: [String]]] = []

    /// The time bound after heal (see the type's comment), from the scenario's client config.
    private(set) var deliveryBound = SimDuration.zero
    /// Per device: non-chatroom messages owed, oldest first, with when they were accepted
    /// (entries already delivered are dropped lazily when they reach the front).
    private var owedInOrder: [[(uid: String, at: SimTime)]] = []
    /// Per device: the last time something disturbed its path (a fault started or ended, the
    /// network or the app's lifecycle changed, a connection was refused or timed out); the same
    /// for the server.
    private var disturbed: [SimTime] = []
    private var serverDisturbed = SimTime.zero
    /// (time, device) checks of the bound, sorted by time; stale entries are harmless.
    private var boundChecks: [(SimTime, Int)] = []
    private var lateReported: Set<Int> = []
    /// Per device: the SDK is not trying to be online — the app disconnected or signed out, or
    /// the SDK stopped on its own (a connect error: fatal status, the `timeLimit` 34006; a kick;
    /// a status saying it stopped) or was killed. No lateness is owed then; the app's next
    /// `connect()` (or a session the SDK opens again by itself) restarts the bound from that moment.
    private var sdkStopped: [Bool] = []
    /// An early `offlineExpired` drop was reported (once per run).
    private var expiryReported = false

    init(suite: OracleSuite) { self.suite = suite }

    /// From the scenario's client knobs and the documented reconnect schedule (§5), never the
    /// core's configuration.
    static func deliveryBound(_ c: ClientSettings) -> SimDuration {
        c.heartbeatInterval.duration + c.pingTimeout.duration + (ReconnectRule.documentedSchedule.max() ?? .zero)
            + c.connackTimeout.duration + c.requestTimeout.duration
    }

    private func armBound(_ t: SimTime, _ d: Int) {
        var lo = 0, hi = boundChecks.count
        while lo < hi { let mid = (lo + hi) / 2; if boundChecks[mid].0 <= t { lo = mid + 1 } else { hi = mid } }
        boundChecks.insert((t, d), at: lo)
    }

    /// When the device's path last became healthy (a future time while a partition or spike lasts).
    private func healthyFrom(_ world: World, _ d: Int) -> SimTime {
        max(disturbed[d], serverDisturbed, world.network.partitionedUntil(device: d), world.network.serverPartitionedUntil, world.network.spikeUntil(device: d))
    }

    /// Conditions without an end time of their own: re-judged at the note that ends them.
    private func healthyNow(_ world: World, _ d: Int) -> Bool {
        world.isRunning(device: d) && !sdkStopped[d] && world.hasConnected(device: d) && world.devices[d].isForeground
            && world.network.isInterfaceUp(device: d) && world.server.up
            && world.devices[d].disk.map { !$0.faults.writeError && !$0.faults.full } ?? true
    }

    private func checkBound(_ world: World, _ d: Int, at t: SimTime) {
        guard !lateReported.contains(d) else { return }
        while let f = owedInOrder[d].first, pending[f.uid]?.contains(d) != true { owedInOrder[d].removeFirst() }
        guard let f = owedInOrder[d].first, healthyNow(world, d) else { return }
        let healthy = healthyFrom(world, d)
        let due = max(f.at, healthy) + deliveryBound
        guard t > due else { armBound(due, d); return }
        let dropped = droppedFor[f.uid].map { $0.contains("*") || $0.contains(world.userId(ofDevice: d)) } ?? false
        guard !dropped, let m = suite.paths.acceptedMessages[f.uid] else { owedInOrder[d].removeFirst(); armBound(t, d); return }
        lateReported.insert(d)
        let conv = m.conversation.type == .privateChat && world.userId(ofDevice: d) != m.senderUserId
            ? ConversationKey(.privateChat, m.senderUserId) : m.conversation
        let since = healthy > f.at ? "\(healthy) (its path healthy again, or the app connected)" : "it was accepted"
        suite.report(name, device: d, conversation: conv, messageUId: f.uid,
                     "late: \(f.uid) (\(m.objectName) from \(m.senderUserId), accepted at \(f.at)) has not reached " +
                     "\(world.deviceId(d)) \(deliveryBound) after \(since), with the device online, in the foreground and " +
                     "no fault on its path since (bound: heartbeat + ping timeout + longest backoff + CONNACK + request timeout)")
    }

    /// Something touched the device's path: judge its oldest owed message again once it is healthy.
    private func disturb(_ world: World, _ d: Int) {
        ensure(d)
        disturbed[d] = world.now
        if !owedInOrder[d].isEmpty { armBound(max(world.now, healthyFrom(world, d)) + deliveryBound, d) }
    }

    /// Nothing is owed to a device that is expected online (the liveness phase waits for this).
    /// The first message still owed to a device expected online, said for the liveness report;
    /// nil when nothing is.
    func undelivered(_ world: World) -> String? {
        if let p = chatroomProbation.first {
            return "no-loss waits for chatroom message \(p.1) on \(world.deviceId(p.2)) (grace until \(p.0))"
        }
        for uid in pendingOrder {
            if let list = pending[uid], let d = list.first(where: { world.expectedOnline($0) && world.hasConnected(device: $0) }) {
                return "no-loss waits for \(uid) on \(world.deviceId(d))"
            }
        }
        return nil
    }

    private func ensure(_ d: Int) {
        while have.count <= d {
            have.append([]); appRoom.append(nil); joinedOnConnection.append(false); connected.append(false); generation.append(0)
            roomPending.append([:]); owedInOrder.append([]); disturbed.append(.zero); sdkStopped.append(false)
        }
    }

    func world(_ world: World, device d: Int, input: ClientInput, localMs: Int64) {
        ensure(d)
        switch input {
        case .api(.joinChatroom(let room, _)), .api(.joinExistChatroom(let room, _)):
            appRoom[d] = room
        case .api(.quitChatroom(let room)):
            if appRoom[d] == room { appRoom[d] = nil }
            leaveRoom(room, device: d)
        case .api(.connect):
            // The app chose to come online: the bound starts again from here.
            sdkStopped[d] = false
            disturb(world, d)
        case .api(.disconnect), .api(.logout):
            sdkStopped[d] = true
            disturb(world, d)
        case .transport(.closed), .transport(.opened):
            connected[d] = false
            joinedOnConnection[d] = false
            generation[d] += 1
        default:
            break
        }
    }

    func world(_ world: World, device d: Int, applied effects: AppliedClientEffects) {
        ensure(d)
        for e in effects {
            switch e {
            case .note(.stored(_, let uid?, _, _, _, _)):
                have[d].insert(uid)
                if var list = pending[uid], let i = list.firstIndex(of: d) {
                    list.remove(at: i)
                    pending[uid] = list
                }
            case .callback(.connectionStatus(.connected)):
                connected[d] = true
                if sdkStopped[d] {
                    // Online again without the app's connect (the SDK resumed by itself).
                    sdkStopped[d] = false
                    disturb(world, d)
                }
            case .callback(.connectionStatus(.connecting)), .callback(.connectionStatus(.networkUnavailable)):
                break
            case .callback(.connectionStatus), .callback(.connectError):
                // Kicked, signed out, token or time limit, suspended: the SDK stopped trying.
                sdkStopped[d] = true
            case .callback(.chatroomJoined(let room)):
                if appRoom[d] == room { joinedOnConnection[d] = true }
            case .note(.chatroomState(let room, let joined)):
                if appRoom[d] == room { joinedOnConnection[d] = joined }
            case .callback(.chatroomKicked(let room)), .callback(.chatroomDestroyed(let room)), .callback(.chatroomQuit(let room)),
                 .callback(.chatroomJoinFailed(let room, _)):
                // (A failed join — e.g. a re-entry whose connection died — tells the app it is in
                // no room: the SDK will not rejoin it, and says so.)
                if appRoom[d] == room { appRoom[d] = nil }
                leaveRoom(room, device: d)
            default:
                break
            }
        }
    }

    func world(_ world: World, note: WorldNote) {
        switch note {
        case .fault(_, let d?, _, _):
            disturb(world, d)
        case .network(let d, _), .lifecycle(let d, _), .connectionRefused(_, let d), .connectTimedOut(_, let d),
             .clockStep(let d, _):
            disturb(world, d)
        case .fault(_, nil, _, _), .serverDown, .serverUp:
            serverDisturbed = world.now
            for d in owedInOrder.indices where !owedInOrder[d].isEmpty { armBound(world.now + deliveryBound, d) }
        default:
            break
        }
        // A killed app is no longer in its room (a restarted SDK starts with none).
        if case .lifecycle(let d, .killed) = note {
            ensure(d)
            sdkStopped[d] = true
            if let room = appRoom[d] { leaveRoom(room, device: d) }
            appRoom[d] = nil
            joinedOnConnection[d] = false
            generation[d] += 1
        }
    }

    private func leaveRoom(_ room: String, device d: Int) {
        // Messages of a room the device left are no longer owed to it.
        let key = ConversationKey(.chatroom, room)
        for (i, p) in chatroomProbation.enumerated().reversed() where p.2 == d {
            if suite.paths.acceptedMessages[p.1]?.conversation == key {
                chatroomProbation.remove(at: i)
            }
        }
        guard d < roomPending.count, let uids = roomPending[d].removeValue(forKey: room) else { return }
        for uid in uids {
            guard var list = pending[uid], let i = list.firstIndex(of: d) else { continue }
            list.remove(at: i)
            pending[uid] = list
        }
    }

    func world(_ world: World, dispatching event: SimEvent<WorldEvent>) {
        while let first = boundChecks.first, first.0 < event.time {
            boundChecks.removeFirst()
            checkBound(world, first.1, at: event.time)
        }
        // Promote chatroom expectations whose connection survived the grace period.
        while let first = chatroomProbation.first, first.0 <= event.time {
            chatroomProbation.removeFirst()
            let (_, uid, d, gen) = first
            let dropped = droppedFor[uid].map { $0.contains("*") || $0.contains(world.userId(ofDevice: d)) } ?? false
            if generation[d] == gen && !have[d].contains(uid) && !dropped {
                pending[uid, default: []].append(d)
                if let c = suite.paths.acceptedMessages[uid]?.conversation, c.type == .chatroom {
                    roomPending[d][c.targetId, default: []].append(uid)
                }
            }
        }
    }

    func world(_ world: World, serverApplied serverEffects: AppliedServerEffects) {
        for case .event(let e) in serverEffects {
            switch e {
            case .messageAccepted(let m):
                accepted(m, world)
                if m.droppedForEveryone != nil {
                    droppedFor[m.messageUId, default: []].insert("*")
                    pending[m.messageUId] = []
                }
            case .dropped(let uid?, let conv, let user, let reason):
                if reason == .offlineExpired, !expiryReported, let m = suite.paths.acceptedMessages[uid] {
                    let retentionMs = Int64(world.scenario.server.offlineRetentionDays) * 86_400_000
                    if world.serverMs < m.dataTime + retentionMs {
                        expiryReported = true
                        let d = user.flatMap { world.devicesOfUser($0).first }
                        suite.report(name, device: d, conversation: conv, messageUId: uid,
                                     "dropped as expired: \(uid) (dataTime \(m.dataTime)) for \(user ?? "everyone") at server time "
                                     + "\(world.serverMs), \(SimDuration.milliseconds(m.dataTime + retentionMs - world.serverMs)) before "
                                     + "its \(world.scenario.server.offlineRetentionDays)-day offline retention ends (im-semantics §1)")
                    }
                }
                droppedFor[uid, default: []].insert(user ?? "*")
                if user == nil {
                    pending[uid] = []
                } else if var list = pending[uid] {
                    list.removeAll { world.userId(ofDevice: $0) == user }
                    pending[uid] = list
                }
            default:
                break
            }
        }
    }

    private func accepted(_ m: AcceptedMessage, _ world: World) {
        guard m.flags.persistent.isStored else { return }
        var devices: [Int] = []
        if m.conversation.type == .chatroom {
            for u in m.recipients {
                for d in world.devicesOfUser(u) {
                    ensure(d)
                    if appRoom[d] == m.conversation.targetId && joinedOnConnection[d] && connected[d] && !have[d].contains(m.messageUId) {
                        chatroomProbation.append((world.now + chatroomGrace, m.messageUId, d, generation[d]))
                    }
                }
            }
        } else {
            for u in m.recipients { devices += world.devicesOfUser(u) }
            if world.scenario.server.multiDeviceSync {
                devices += world.devicesOfUser(m.senderUserId).filter { world.deviceId($0) != m.senderDeviceId }
            }
            for d in devices { ensure(d) }
            devices = devices.filter { !have[$0].contains(m.messageUId) }
            if deliveryBound == .zero { deliveryBound = Self.deliveryBound(world.scenario.client) }
            for d in devices {
                if owedInOrder[d].isEmpty { armBound(max(world.now, healthyFrom(world, d)) + deliveryBound, d) }
                owedInOrder[d].append((m.messageUId, world.now))
            }
        }
        if pending[m.messageUId] == nil { pendingOrder.append(m.messageUId) }
        pending[m.messageUId, default: []] += devices
    }

    func finalCheck(_ world: World) {
        for uid in pendingOrder {
            guard let list = pending[uid], !list.isEmpty, let m = suite.paths.acceptedMessages[uid] else { continue }
            let owed = list.filter { world.expectedOnline($0) && world.hasConnected(device: $0) }
            guard let d = owed.first else { continue }
            // The conversation as the owed device keys it: a private message sits under its sender.
            let conv = m.conversation.type == .privateChat && world.userId(ofDevice: d) != m.senderUserId
                ? ConversationKey(.privateChat, m.senderUserId) : m.conversation
            suite.report(name, device: d, conversation: conv, messageUId: uid,
                         "lost: \(uid) (\(m.objectName) from \(m.senderUserId), dataTime \(m.dataTime)) never reached " +
                         owed.map { world.deviceId($0) }.joined(separator: ", ") + " and no drop explains it")
            return
        }
    }
}
