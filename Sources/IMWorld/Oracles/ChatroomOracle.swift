import IMClient
import IMServer
import IMStore
import IMWire
import SimKernel

/// Chatroom rules: the join pull returns min(count, 50) of the newest messages (none for -1);
/// the client rejoins (`joinChrmR`) after every reconnect while its app is in a room; local
/// messages are gone after quit.
final class ChatroomOracle: Oracle {
    let name = "chatroom"
    unowned let suite: OracleSuite
    /// Per room: the newest accepted, not dropped, messages (uid, sending device), up to 50.
    private var history: [String: [(uid: String, device: String?)]] = [:]
    private var joinCount: [Int: Int32] = [:]
    private var awaitingJoinPull: Set<String> = []   // deviceIds
    // Rejoin tracking per device.
    private var inRoom: [Int: String] = [:]
    private var connectedOnce: Set<Int> = []
    private var sessionStart: [Int: SimTime] = [:]
    private var rejoinedThisSession: Set<Int> = []
    private let rejoinGrace = SimDuration.seconds(10)

    init(suite: OracleSuite) { self.suite = suite }

    func world(_ world: World, device d: Int, input: ClientInput, localMs: Int64) {
        switch input {
        case .api(.joinChatroom(let r, let n)), .api(.joinExistChatroom(let r, let n)):
            joinCount[d] = n
            inRoom[d] = r
        case .api(.quitChatroom(let r)):
            if inRoom[d] == r { inRoom[d] = nil }
        case .transport(.closed):
            checkRejoin(world, d)
            sessionStart[d] = nil
        default:
            break
        }
    }

    private func checkRejoin(_ world: World, _ d: Int) {
        guard let start = sessionStart[d], let room = inRoom[d], !rejoinedThisSession.contains(d),
              world.now - start >= rejoinGrace else { return }
        suite.report(name, device: d, conversation: ConversationKey(.chatroom, room),
                     "reconnected at \(start) but never rejoined chatroom \(room) (no joinChrmR in \(world.now - start))")
    }

    func world(_ world: World, device d: Int, effects: [ClientEffect]) {
        for e in effects {
            switch e {
            case .send(_, let frames):
                for f in frames where f.topic == Topic.joinChrmR.rawValue || f.topic == Topic.joinChrm.rawValue {
                    rejoinedThisSession.insert(d)
                    // Only a first join pulls the newest `count`; a rejoin pulls from the room cursor.
                    if f.topic == Topic.joinChrm.rawValue { awaitingJoinPull.insert(world.deviceId(d)) }
                }
            case .callback(.connectionStatus(.connected)):
                // Every session start (the `connected` callback comes once per connect call,
                // not on automatic reconnects, which are what needs the rejoin).
                if connectedOnce.contains(d) {
                    sessionStart[d] = world.now
                    rejoinedThisSession.remove(d)
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
            default:
                break
            }
        }
    }

    func world(_ world: World, note: WorldNote) {
        // A killed app is in no room and its next connection is a fresh start, not a reconnect.
        if case .lifecycle(let d, .killed) = note {
            inRoom[d] = nil
            connectedOnce.remove(d)
            sessionStart[d] = nil
        }
    }

    func world(_ world: World, serverEffects: [ServerEffect]) {
        for case .event(let e) in serverEffects {
            switch e {
            case .messageAccepted(let m) where m.conversation.type == .chatroom && !m.flags.isStatus:
                var h = history[m.conversation.targetId, default: []]
                h.append((m.messageUId, m.senderDeviceId))
                if h.count > 50 { h.removeFirst(h.count - 50) }
                history[m.conversation.targetId] = h
            case .dropped(let uid?, let conv, nil, _) where conv.type == .chatroom:
                history[conv.targetId]?.removeAll { $0.uid == uid }
            case .pulled(_, _, let dev, let topic, let uids, _, _) where topic == Topic.chrmPull.rawValue:
                guard awaitingJoinPull.remove(dev) != nil, let d = world.deviceIndex(dev), let room = inRoom[d] else { continue }
                let n = joinCount[d] ?? 10
                let want = n < 0 ? 0 : n == 0 ? 10 : min(Int(n), 50)
                // A device's own messages are already in its store; the pull leaves them out.
                let h = history[room, default: []].filter { $0.device != dev }.map(\.uid)
                let expected = Array(h.suffix(want))
                // Messages accepted after the pull was answered cannot be in it; compare as sets.
                if Set(uids) != Set(expected) && uids.count != min(want, h.count) {
                    suite.report(name, device: d, conversation: ConversationKey(.chatroom, room),
                                 "join pull with count \(n) returned \(uids.count) message(s); the newest \(expected.count) were expected")
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
