import IMClient
import IMWire
import SimKernel

/// one-room: a user is in **one** chatroom at a time by default; "joining another quits the first
/// after the new join has succeeded", and "a failed join leaves the user in the room they were
/// in, still receiving it" (im-semantics §6). Judged from the app's calls and callbacks alone:
///
/// - the rooms the app is in: told `chatroomJoined`, not told since that it left (`chatroomQuit`,
///   `chatroomKicked`, `chatroomDestroyed`), nor that a join of it failed with a code that says
///   the user is not in it (23406 not in the room, 23409 kicked and banned, 23410 gone). Any
///   other failed join — a second join of the room it is in, cut by the network (issue 21, sixth
///   round) — leaves it there;
/// - when the app is told `chatroomJoined(B)`, the same input tells it `chatroomQuit(A)` for
///   every other room A it is in, unless a join of A the app asked for is still unanswered (that
///   join, once it succeeds, quits B in turn).
///
/// Not judged with `allowMultipleChatrooms`. Judged on simulated disks too: a quit whose rows
/// could not be deleted is told to the app at once (issue 28, session 38). A killed app is in no
/// room. One report per device.
final class OneRoomOracle: Oracle {
    static let oracleName = "one-room"
    let name = OneRoomOracle.oracleName
    let hooks: OracleHooks = [.input, .applied, .note]
    let inputKinds: InputKinds = [.api]
    let appliedKinds: AppliedKinds = [.chatroomMembership]
    unowned let suite: OracleSuite

    private struct Device {
        /// Room → when the app was told it joined it (sorted iteration: see `rooms.keys.sorted()`).
        var rooms: [String: SimTime] = [:]
        /// The app's join calls of a room not answered yet (joined or failed).
        var pendingJoins: [String: Int] = [:]
    }
    private var devices: [Device] = []
    private var reported: Set<Int> = []

    /// Join failures that mean the user is not in the room (§6).
    static let leavingCodes: Set<Int32> = [IMErrorCode.notInChatroom.rawValue, IMErrorCode.kickedAndBannedFromChatroom.rawValue,
                                           IMErrorCode.chatroomNotExist.rawValue]

    init(suite: OracleSuite) { self.suite = suite }

    private func ensure(_ d: Int) { while devices.count <= d { devices.append(Device()) } }

    func world(_ world: World, device d: Int, input: ClientInput, localMs: Int64) {
        ensure(d)
        switch input {
        case .api(.joinChatroom(let r, _)), .api(.joinExistChatroom(let r, _)):
            devices[d].pendingJoins[r, default: 0] += 1
        default:
            break
        }
    }

    private func answered(_ d: Int, _ room: String) {
        if let n = devices[d].pendingJoins[room] { devices[d].pendingJoins[room] = n > 1 ? n - 1 : nil }
    }

    func world(_ world: World, device d: Int, applied: AppliedClientEffects) {
        ensure(d)
        var joined: [String] = []
        var quit: Set<String> = []
        for case .callback(let c) in applied.effects {
            switch c {
            case .chatroomJoined(let room):
                answered(d, room)
                if devices[d].rooms[room] == nil { devices[d].rooms[room] = world.now }
                joined.append(room)
            case .chatroomQuit(let room), .chatroomKicked(let room), .chatroomDestroyed(let room):
                devices[d].rooms[room] = nil
                quit.insert(room)
            case .chatroomJoinFailed(let room, let code):
                answered(d, room)
                if Self.leavingCodes.contains(code) { devices[d].rooms[room] = nil }
            default:
                break
            }
        }
        guard !joined.isEmpty, !world.clientConfig.allowMultipleChatrooms, !reported.contains(d) else { return }
        for room in joined {
            for other in devices[d].rooms.keys.sorted() where other != room && !quit.contains(other) {
                guard devices[d].pendingJoins[other] == nil, let since = devices[d].rooms[other] else { continue }
                reported.insert(d)
                suite.report(name, device: d, conversation: ConversationKey(.chatroom, other),
                             "told chatroomJoined(\(room)) while in chatroom \(other) (joined at \(since), never told it left), "
                             + "but not chatroomQuit(\(other)): one room at a time, joining another quits the first (§6)")
                return
            }
        }
    }

    func world(_ world: World, note: WorldNote) {
        if case .lifecycle(let d, let change) = note, change == .killed || change == .started {
            ensure(d)
            devices[d] = Device()
        }
    }

    func finalCheck(_ world: World) {}
}
