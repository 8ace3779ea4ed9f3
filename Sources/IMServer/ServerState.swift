import IMWire

/// A group as the router sees it: sorted members, a set for membership checks, join times (members
/// see only messages after they joined) and mutes.
struct GroupState: Sendable {
    private(set) var members: [String] = []
    private(set) var memberSet: Set<String> = []
    private(set) var joinedAt: [String: Int64] = [:]

    mutating func add(_ userId: String, at time: Int64) {
        guard memberSet.insert(userId).inserted else { return }
        SortedStrings.insert(userId, into: &members)
        joinedAt[userId] = time
    }

    mutating func remove(_ userId: String) {
        guard memberSet.remove(userId) != nil else { return }
        SortedStrings.remove(userId, from: &members)
        joinedAt[userId] = nil
    }
}

/// (user, clientUniqueId): the idempotent-accept key.
struct IdempotencyKey: Hashable, Sendable {
    let userId: String
    let clientUniqueId: Int64
}

/// (room, user): chatroom bans and mutes.
struct RoomUserKey: Hashable, Sendable {
    let roomId: String
    let userId: String
}

/// Server-API state that is configuration, not message data: it survives every crash
/// (Docs/server.md §9).
struct AdminState: Sendable {
    var keptAlive: Set<String> = []
    /// (room, user) → ban end (server ms).
    var chatroomBans: [RoomUserKey: Int64] = [:]
    var chatroomMutes: [RoomUserKey: Int64] = [:]
    var chatroomWhitelists: [String: Set<String>] = [:]
    /// The chatroom message-type whitelist (app-wide; set through the server API at run time).
    var chatroomWhitelistTypes: Set<String> = []

    func banned(_ room: String, _ user: String, now: Int64) -> Bool {
        (chatroomBans[RoomUserKey(roomId: room, userId: user)] ?? .min) > now
    }

    func muted(_ room: String, _ user: String, now: Int64) -> Bool {
        (chatroomMutes[RoomUserKey(roomId: room, userId: user)] ?? .min) > now
    }

    func whitelist(_ room: String) -> Set<String> { chatroomWhitelists[room] ?? [] }
}

/// What survives a crash when `persistAcrossCrash` (offline inboxes, message stores, chatrooms
/// with history/KV/membership, the uid counter, conversation clocks).
struct PersistentStore: Sendable {
    var uidCounter: UInt64 = 0
    var users: [String: UserRecord] = [:]
    var conversations: [ConversationClockKey: ConversationLog] = [:]
    var idempotency: [IdempotencyKey: MessageRecord] = [:]
    /// Every message within retention, in accept (= sequence) order: the messageUId index (a
    /// binary search on the sequence number a uid encodes — no string hashing per message) and the
    /// pruning order of `idempotency`.
    var acceptLog: [MessageRecord] = []
    var acceptLogHead = 0

    /// The message a messageUId names, if it is still within retention.
    func message(uid: String) -> MessageRecord? {
        guard let seq = MessageUId.parse(uid) else { return nil }
        var lo = acceptLogHead, hi = acceptLog.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if acceptLog[mid].seq < seq { lo = mid + 1 } else { hi = mid }
        }
        return lo < acceptLog.count && acceptLog[lo].seq == seq ? acceptLog[lo] : nil
    }
    /// messageUId → recall time.
    var recalled: [String: Int64] = [:]
    var rooms: [String: Chatroom] = [:]
    /// user → rooms it is a member of (sorted).
    var userRooms: [String: [String]] = [:]
}

/// Derived, read-only lookups built from the config once.
struct RoutingRules: Sendable {
    let blacklists: [String: Set<String>]
    let whitelists: [String: Set<String>]
    let sensitiveWords: [[UInt8]]
    let lowPriorityTypes: Set<String>
    let whitelistTypes: Set<String>
    let retentionMs: Int64
    let newDeviceHistoryDays: Int64
    let utcOffsetMs: Int64
    let idleTimeoutMs: Int64

    init(_ c: ServerConfig) {
        blacklists = c.blacklists.mapValues { Set($0) }
        whitelists = c.whitelists.mapValues { Set($0) }
        sensitiveWords = c.sensitiveWords.filter { !$0.isEmpty }.map { Array($0.utf8) }
        lowPriorityTypes = Set(c.chatroom.lowPriorityTypes)
        whitelistTypes = Set(c.chatroom.whitelistTypes)
        retentionMs = Int64(max(0, c.offlineRetentionDays)) * 86_400_000
        newDeviceHistoryDays = Int64(min(7, max(1, c.newDeviceHistoryDays)))
        utcOffsetMs = Int64(c.serverUtcOffsetMinutes) * 60_000
        idleTimeoutMs = c.sessionIdleTimeout.nanoseconds / 1_000_000
    }

    /// The oldest dataTime a new device gets: 00:00 of the current calendar day in the server's
    /// time zone, `newDeviceHistoryDays - 1` days further back (im-semantics §5: "今天(当天 0 点)").
    func newDeviceHistoryFloor(now: Int64) -> Int64 {
        let day: Int64 = 86_400_000
        let local = now + utcOffsetMs
        let startOfDay = local - ((local % day) + day) % day
        return startOfDay - utcOffsetMs - (newDeviceHistoryDays - 1) * day
    }

    /// Byte-level substring match on the content (the JSON text as sent).
    func containsSensitiveWord(_ content: [UInt8]) -> Bool {
        guard !sensitiveWords.isEmpty else { return false }
        return content.withUnsafeBufferPointer { buf in
            for w in sensitiveWords where w.count <= buf.count {
                let first = w[0]
                var i = 0
                let last = buf.count - w.count
                while i <= last {
                    if buf[i] == first {
                        var j = 1
                        while j < w.count, buf[i + j] == w[j] { j += 1 }
                        if j == w.count { return true }
                    }
                    i += 1
                }
            }
            return false
        }
    }
}
