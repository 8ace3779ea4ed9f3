import IMClient
import IMServer
import IMWire
import IMWorld
import SimKernel

/// Who took part in a failing run, for the shrinker's focused cut: when each user last acted
/// (an app call of one of its devices, a fault on one of them) and which users the violation
/// names. In a large world most users did nothing near the failure: keeping only the recent
/// actors removes hundreds of users in one candidate run, where ddmin would need many full-size
/// runs (chatroom-storm: 1,000 users, ~500 of them active).
public struct Involvement: Sendable, Codable, Equatable {
    /// User id → the latest time (ns) one of its devices made an app call or a fault began on it.
    public var lastActive: [String: Int64]
    /// Users the violation names: its device's user and the sender of its message.
    public var named: [String]
    /// The heal (ns): a verdict given after it (no-loss, liveness) was caused before it.
    public var healNanoseconds: Int64

    /// The named users and those that acted at or after `since` (ns).
    func users(activeSince since: Int64) -> Set<String> {
        var out = Set(named)
        for (user, t) in lastActive where t >= since { out.insert(user) }
        return out
    }
}

/// Records an `Involvement` while a candidate runs (it only reads the world).
final class InvolvementRecorder: WorldObserver {
    private var lastActive: [Int: Int64] = [:]
    private var senders: [String: String] = [:]

    func world(_ world: World, device: Int, input: ClientInput, localMs: Int64) {
        if case .api = input { lastActive[device] = world.now.nanoseconds }
    }

    func world(_ world: World, note: WorldNote) {
        if case .fault(_, let d?, true, _) = note { lastActive[d] = world.now.nanoseconds }
    }

    func world(_ world: World, serverApplied: AppliedServerEffects) {
        let serverEffects = serverApplied.effects
        for case .event(.messageAccepted(let m)) in serverEffects { senders[m.messageUId] = m.senderUserId }
    }

    func involvement(_ world: World, violation v: Violation) -> Involvement {
        var last: [String: Int64] = [:]
        for (d, t) in lastActive {
            let u = world.userId(ofDevice: d)
            last[u] = max(last[u] ?? .min, t)
        }
        var named: [String] = []
        if let id = v.device, let d = world.deviceIndex(id) { named.append(world.userId(ofDevice: d)) }
        if let uid = v.messageUId, let sender = senders[uid], !named.contains(sender) { named.append(sender) }
        return Involvement(lastActive: last, named: named.sorted(), healNanoseconds: world.healTime.nanoseconds)
    }
}
