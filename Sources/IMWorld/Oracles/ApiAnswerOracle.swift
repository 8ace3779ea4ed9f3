import IMClient
import IMWire
import SimKernel

/// api-answer: every SDK call that promises the app a result gets it — `send`/`resend` a
/// `sendResult` for its row, `recall` a `recallResult`, `setChatroomKV`/`removeChatroomKV` a
/// `chatroomKVResult`, `getChatroomKV` a `chatroomKV`, `getHistory` a `history` page and
/// `getRemoteHistory(After)` a `remoteHistory` — success or error, within the request timeout
/// (wire §1.5: "a request with no answer in 30 s fails with a timeout") plus a margin, while the
/// app runs. Judged from the app's calls and the callbacks it was given only (the SDK's API
/// contract); a killed app owes nothing. Typing statuses (STATUS types, skipped silently within
/// 6 s, im-semantics §2) are not judged; nor are sends on a simulated disk (a failed store write
/// may hold a result back until the write commits, issue 28). One report per device.
///
/// And `joinExistChatroom` of a room that never existed is answered 23410 (im-semantics §6: join an
/// existing room only): a room exists once the scenario declares it, the server API creates it or
/// an app calls `joinChatroom` for it (which creates it); told `chatroomJoined` for any other room
/// is a violation. Not judged with a generated population (its rooms are not named in the file).
final class ApiAnswerOracle: Oracle {
    static let oracleName = "api-answer"
    let name = ApiAnswerOracle.oracleName
    let hooks: OracleHooks = [.dispatching, .input, .applied, .note]
    unowned let suite: OracleSuite

    private struct Pending {
        var key: String
        var call: ClientAPICall
        var at: SimTime
    }
    /// Per device: calls awaiting their result, oldest first.
    private var pending: [[Pending]] = []
    /// The call the input being handled made, per device.
    private var calling: [ClientAPICall?] = []
    /// (time, device) re-checks, sorted by time; stale entries are harmless.
    private var checks: [(SimTime, Int)] = []
    private var reported: Set<Int> = []
    private let margin = SimDuration.seconds(10)
    /// Rooms that may exist (declared, created by the server API, or joined by some app's `join`).
    private var mayExist: Set<String>?
    /// Per device: rooms of pending `joinExistChatroom` calls that never existed at the call.
    private var missingJoins: [Set<String>] = []
    /// The scenario has a population (the rooms-that-may-exist check is off).
    private var populated: Bool?

    init(suite: OracleSuite) { self.suite = suite }

    private func ensure(_ d: Int) {
        while pending.count <= d { pending.append([]); calling.append(nil); missingJoins.append([]) }
    }

    private func bound(_ world: World) -> SimDuration { world.scenario.client.requestTimeout.duration + margin }

    private func arm(_ t: SimTime, _ d: Int) {
        var lo = 0, hi = checks.count
        while lo < hi { let mid = (lo + hi) / 2; if checks[mid].0 <= t { lo = mid + 1 } else { hi = mid } }
        checks.insert((t, d), at: lo)
    }

    func world(_ world: World, device d: Int, input: ClientInput, localMs: Int64) {
        ensure(d)
        if case .api(let call) = input { calling[d] = call } else { calling[d] = nil }
        // (Asked once: reading the optional spec per input copied it, ~150 instructions.)
        if populated == nil { populated = world.scenario.population != nil }
        guard populated == false else { return }
        if mayExist == nil {
            var rooms = Set(world.scenario.chatrooms.map(\.id))
            for step in world.scenario.script { if case .server(.createChatroom(let r)) = step.action { rooms.insert(r) } }
            mayExist = rooms
        }
        switch input {
        case .api(.joinChatroom(let room, _)):
            mayExist!.insert(room)
            for i in missingJoins.indices { missingJoins[i].remove(room) }
        case .api(.joinExistChatroom(let room, _)) where !mayExist!.contains(room): missingJoins[d].insert(room)
        default: break
        }
    }

    /// The result key a call waits for (nil: no result promised, or not judged).
    private func key(_ world: World, _ d: Int, _ call: ClientAPICall, _ effects: [ClientEffect]) -> String? {
        switch call {
        case .send(_, let objectName, _, _, _):
            if world.clientConfig.registry.flags(for: objectName)?.isStatus == true || world.devices[d].disk != nil { return nil }
            for case .callback(.messageInserted(let row)) in effects { return "send \(row.messageId)" }
            return "send 0"
        case .resend(let id):
            return world.devices[d].disk != nil ? nil : "send \(id)"
        case .recall(let id): return "recall \(id)"
        case .setChatroomKV(let room, let k, _, _, _), .removeChatroomKV(let room, let k, _): return "kv \(room) \(k)"
        case .getChatroomKV(let room): return "getKV \(room)"
        case .getHistory(let conv, _, _): return "history \(conv)"
        case .getRemoteHistory(let conv, _, _), .getRemoteHistoryAfter(let conv, _, _): return "remote \(conv)"
        default: return nil
        }
    }

    func world(_ world: World, device d: Int, applied: AppliedClientEffects) {
        let effects = applied.effects
        ensure(d)
        if let call = calling[d] {
            calling[d] = nil
            if let k = key(world, d, call, effects) {
                if pending[d].isEmpty { arm(world.now + bound(world), d) }
                pending[d].append(Pending(key: k, call: call, at: world.now))
            }
        }
        guard applied.callbackCount > 0 else { return }
        for case .callback(let c) in effects {
            let answered: String
            switch c {
            case .chatroomJoined(let room) where missingJoins[d].contains(room):
                missingJoins[d].remove(room)
                if reported.insert(d).inserted {
                    suite.report(name, device: d, conversation: ConversationKey(.chatroom, room),
                                 "joinExistChatroom(\(room)) was told chatroomJoined, but no room \(room) ever existed "
                                 + "(not declared, not created, never joined with joinChatroom): the answer is 23410")
                }
                continue
            case .chatroomJoinFailed(let room, _):
                missingJoins[d].remove(room)
                continue
            case .sendResult(let id, _, _, _): answered = "send \(id)"
            case .recallResult(let id, _): answered = "recall \(id)"
            case .chatroomKVResult(let room, let k, _): answered = "kv \(room) \(k)"
            case .chatroomKV(let room, _, _): answered = "getKV \(room)"
            case .history(let conv, _): answered = "history \(conv)"
            case .remoteHistory(let conv, _, _): answered = "remote \(conv)"
            default: continue
            }
            if let i = pending[d].firstIndex(where: { $0.key == answered }) { pending[d].remove(at: i) }
        }
    }

    private func check(_ world: World, _ d: Int, at t: SimTime) {
        guard d < pending.count, !reported.contains(d), let oldest = pending[d].first else { return }
        let due = oldest.at + bound(world)
        guard t > due else { return arm(due, d) }
        reported.insert(d)
        var call = "\(oldest.call)"
        if call.count > 120 { call = String(call.prefix(117)) + "…" }
        suite.report(name, device: d,
                     "the app called \(call) at \(oldest.at) and was never given its result (still none \(t - oldest.at) later; "
                     + "a request fails with a timeout after \(world.scenario.client.requestTimeout.duration))")
    }

    func world(_ world: World, dispatching event: SimEvent<WorldEvent>) {
        while let first = checks.first, first.0 < event.time {
            checks.removeFirst()
            check(world, first.1, at: event.time)
        }
    }

    func world(_ world: World, note: WorldNote) {
        // A killed app is owed nothing (a restarted SDK starts with no calls).
        if case .lifecycle(let d, .killed) = note {
            ensure(d)
            pending[d] = []
            missingJoins[d] = []
        }
    }

    func finalCheck(_ world: World) {
        for d in pending.indices { check(world, d, at: world.now) }
    }
}
