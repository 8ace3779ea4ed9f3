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
final class NoLossOracle: Oracle {
    let name = "no-loss"
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

    init(suite: OracleSuite) { self.suite = suite }

    /// Nothing is owed to a device that is expected online (the liveness phase waits for this).
    func allDelivered(_ world: World) -> Bool {
        if !chatroomProbation.isEmpty { return false }
        for uid in pendingOrder {
            if let list = pending[uid], list.contains(where: { world.expectedOnline($0) && world.hasConnected(device: $0) }) {
                return false
            }
        }
        return true
    }

    private func ensure(_ d: Int) {
        while have.count <= d {
            have.append([]); appRoom.append(nil); joinedOnConnection.append(false); connected.append(false); generation.append(0)
            roomPending.append([:])
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
        case .transport(.closed), .transport(.opened):
            connected[d] = false
            joinedOnConnection[d] = false
            generation[d] += 1
        default:
            break
        }
    }

    func world(_ world: World, device d: Int, effects: [ClientEffect]) {
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
        // A killed app is no longer in its room (a restarted SDK starts with none).
        if case .lifecycle(let d, .killed) = note {
            ensure(d)
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

    func world(_ world: World, serverEffects: [ServerEffect]) {
        for case .event(let e) in serverEffects {
            switch e {
            case .messageAccepted(let m):
                accepted(m, world)
            case .dropped(let uid?, _, let user, _):
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
