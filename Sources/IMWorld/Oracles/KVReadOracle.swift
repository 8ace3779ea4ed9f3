import IMClient
import IMWire
import SimKernel

/// kv-read: a room's attributes are readable while the app is in the room — `getChatroomKV`
/// answers "not in the chatroom" (23406, im-semantics §6) only when the app is in no such room:
/// it never got `chatroomJoined` for it, or has been told since that it left (quit, kicked,
/// destroyed, a failed join) or was killed. (Before the post-join sync the answer is 34004, the
/// attribute-sync rule's business.) Judged during a re-entry too (a second join of a room the app
/// is in, everyday's "re-entering the room screen"): the user stays in the room while that join is
/// pending (§6), so its attributes stay readable. Judged from the app's calls and callbacks only;
/// not on a simulated disk
/// (a quit whose row deletion failed is told to the app only once it commits, issue 28). One
/// report per device.
final class KVReadOracle: Oracle {
    static let oracleName = "kv-read"
    let name = KVReadOracle.oracleName
    let hooks: OracleHooks = [.applied, .note]
    let appliedKinds: AppliedKinds = [.chatroomMembership, .chatroomKVAnswer]
    unowned let suite: OracleSuite
    /// Per device: the rooms the app was told it is in.
    private var inRoom: [Set<String>] = []
    private var reported: Set<Int> = []

    init(suite: OracleSuite) { self.suite = suite }

    private func ensure(_ d: Int) { while inRoom.count <= d { inRoom.append([]) } }

    func world(_ world: World, device d: Int, applied: AppliedClientEffects) {
        let effects = applied.effects
        ensure(d)
        for case .callback(let c) in effects {
            switch c {
            case .chatroomJoined(let room):
                inRoom[d].insert(room)
            case .chatroomQuit(let room), .chatroomKicked(let room), .chatroomDestroyed(let room), .chatroomJoinFailed(let room, _):
                inRoom[d].remove(room)
            case .chatroomKV(let room, _, let error?) where error == IMErrorCode.notInChatroom.rawValue && inRoom[d].contains(room)
                && world.devices[d].disk == nil:
                guard reported.insert(d).inserted else { continue }
                suite.report(name, device: d, conversation: ConversationKey(.chatroom, room),
                             "getChatroomKV(\(room)) answered 23406 (not in the chatroom) but the app was told it joined "
                             + "\(room) and never that it left")
            default:
                break
            }
        }
    }

    func world(_ world: World, note: WorldNote) {
        if case .lifecycle(let d, .killed) = note {
            ensure(d)
            inRoom[d] = []
        }
    }

    func finalCheck(_ world: World) {}
}
