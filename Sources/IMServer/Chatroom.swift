import IMWire

/// One chatroom (im-semantics §6). Members are kept by userId with a sorted id list for
/// deterministic fan-out, and a sorted list of the offline ones for the kick rule.
struct Chatroom: Sendable {
    let id: String
    var createdAt: Int64
    /// Last accepted message or join (auto-destroy).
    var lastActivity: Int64
    private(set) var members: [String: ChatroomMember] = [:]
    /// Member ids, sorted.
    private(set) var memberIds: [String] = []
    /// Offline member ids, sorted.
    private(set) var offlineIds: [String] = []
    /// The newest `historySize` messages, oldest first (what `chrmPull` serves).
    var history: [MessageRecord] = []
    /// Messages that fell out of `history` (newest last, at most `evictedLimit`): a pull whose
    /// cursor is older than them has missed them for good — reported as ring-overflow drops.
    private(set) var evicted: [(uid: String, dataTime: Int64, senderUserId: String, senderDeviceId: String?)] = []
    static let evictedLimit = 1000
    var quota = ChatroomQuota()
    var kv = ChatroomKV()
    var autoDestroyArmed = false
    /// When the offline rule last removed each user, and when each device last got in (join or
    /// rejoin): a device's `joinChrmR` from before the kick is refused with 23406 so its app
    /// learns of it (B9 on: rejoined silently). Lookups only; never iterated.
    var offlineKickedAt: [String: Int64] = [:]
    var deviceJoinedAt: [String: Int64] = [:]

    init(id: String, now: Int64) {
        self.id = id
        createdAt = now
        lastActivity = now
    }

    func member(_ userId: String) -> ChatroomMember? { members[userId] }
    func isMember(_ userId: String) -> Bool { members[userId] != nil }

    /// Adds (or re-joins) `userId` with one session.
    mutating func join(_ userId: String, session: JoinedSession, now: Int64) {
        if members[userId] == nil {
            members[userId] = ChatroomMember(joinedAt: now)
            SortedStrings.insert(userId, into: &memberIds)
        }
        members[userId]!.add(session)
        SortedStrings.remove(userId, from: &offlineIds)
    }

    /// Removes a member entirely.
    @discardableResult
    mutating func remove(_ userId: String) -> ChatroomMember? {
        guard let m = members.removeValue(forKey: userId) else { return nil }
        SortedStrings.remove(userId, from: &memberIds)
        SortedStrings.remove(userId, from: &offlineIds)
        return m
    }

    /// A joined session ended; returns true when the member went offline.
    mutating func detach(_ userId: String, connection: ConnectionID, now: Int64) -> Bool {
        guard members[userId] != nil else { return false }
        let wentOffline = members[userId]!.remove(connection, now: now)
        if wentOffline { SortedStrings.insert(userId, into: &offlineIds) }
        return wentOffline
    }

    /// Every member offline since `now` (a server restart). Returns who had sessions.
    mutating func allOffline(now: Int64) -> [String] {
        var changed: [String] = []
        for id in memberIds where !(members[id]!.isOffline) {
            members[id]!.goOffline(now: now)
            SortedStrings.insert(id, into: &offlineIds)
            changed.append(id)
        }
        return changed
    }

    /// The offline auto-kick rule for a new message at `now` (whitelisted users exempt); returns
    /// the members to remove, sorted.
    mutating func evaluateOfflineKicks(now: Int64, config: ChatroomConfig, whitelist: Set<String>) -> [String] {
        var kicked: [String] = []
        for id in offlineIds where !whitelist.contains(id) {
            if members[id]!.kickedByMessage(now: now, config: config) { kicked.append(id) }
        }
        return kicked
    }

    mutating func appendHistory(_ m: MessageRecord, limit: Int) {
        history.append(m)
        let excess = history.count - max(0, limit)
        if excess > 0 {
            for old in history.prefix(excess) { evicted.append((old.uid, old.dataTime, old.senderUserId, old.senderDeviceId)) }
            history.removeFirst(excess)
            if evicted.count > Self.evictedLimit { evicted.removeFirst(evicted.count - Self.evictedLimit) }
        }
    }
}

/// Sorted string arrays (membership lists that fan-out iterates in order).
enum SortedStrings {
    static func index(_ s: String, in a: [String]) -> (found: Bool, at: Int) {
        var lo = 0, hi = a.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if a[mid] < s { lo = mid + 1 } else { hi = mid }
        }
        return (lo < a.count && a[lo] == s, lo)
    }

    static func insert(_ s: String, into a: inout [String]) {
        let (found, at) = index(s, in: a)
        if !found { a.insert(s, at: at) }
    }

    static func remove(_ s: String, from a: inout [String]) {
        let (found, at) = index(s, in: a)
        if found { a.remove(at: at) }
    }

    static func contains(_ s: String, in a: [String]) -> Bool { index(s, in: a).found }
}
