/// The client's in-memory state of one chatroom (im-semantics §6). The cursor, the join pull's
/// id cache and the KV sync bookkeeping are memory only — an app kill loses them, as in the SDK.
struct ChatroomRoom: Sendable, Hashable {
    enum Phase: Sendable, Hashable {
        /// joinChrm / joinChrmR sent, not answered yet.
        case joining(messageId: UInt16, kind: JoinKind)
        case joined
    }

    /// Size of the join pull's messageUId cache (the only dedup the public client has).
    static let joinCacheSize = 10

    let roomId: String
    var phase: Phase
    /// `messageCount` of the app's join (after -1/0/clamp handling).
    var joinCount: Int32
    /// Room pull cursor (server ms): response syncTime of the last chrmPull.
    var cursor: Int64 = 0
    /// messageUIds most recently shown from this room, newest last, at most `joinCacheSize`.
    var joinCache: [String] = []
    /// chrmPull in flight.
    var pullInFlight: UInt16?
    /// Newest `s_ntf` type 2 time seen while a pull was in flight.
    var queuedNotify: Int64?
    /// The connection dropped since the last (re)join: rejoin with joinChrmR on the next CONNACK.
    var needsRejoin = false
    /// Bug B6: a ping timeout during connect made the SDK forget that the room needs a rejoin.
    var rejoinForgotten = false
    /// The app's joins of this room sent while it was already joined, not answered yet (the
    /// room stays `.joined` meanwhile).
    var reJoinsInFlight = 0

    // KV (chatroom attributes)
    /// Incremented by every join: answers of an older join's pullKV are ignored.
    var kvGeneration = 0
    /// The post-join KV sync finished (mirrors `ChatroomState.kvSynced` in the store).
    var kvSynced = false
    var kvSyncTime: Int64 = 0
    var kvPullInFlight: UInt16?
    /// The pullKV in flight is the post-join sync (its answer marks the room synced).
    var kvPostJoinPending = false
    /// A KV change notice arrived while a pullKV was in flight.
    var kvNotifyQueued = false
    /// Bug B8: "the KV sync was requested" — set by the first join and never cleared, so a
    /// second join believes its sync is under way and never pulls.
    var kvSyncRequestedOnce = false

    init(roomId: String, joinCount: Int32, messageId: UInt16, kind: JoinKind) {
        self.roomId = roomId
        self.joinCount = joinCount
        phase = .joining(messageId: messageId, kind: kind)
    }

    var isJoined: Bool { phase == .joined }
    /// A join or joinExisting the app asked for is in flight (not an automatic rejoin).
    var isPendingNewJoin: Bool {
        if case .joining(_, let kind) = phase { return kind != .rejoin }
        return reJoinsInFlight > 0
    }

    /// Records a shown id (ring of `joinCacheSize`).
    mutating func remember(_ uid: String) {
        joinCache.append(uid)
        if joinCache.count > Self.joinCacheSize { joinCache.removeFirst(joinCache.count - Self.joinCacheSize) }
    }

    /// Whether `uid` is in the cache `cache` would be after `remember`ing each of `shown`: the
    /// newest `joinCacheSize` ids of the two, without building that cache.
    static func ringContains(_ uid: String, cache: [String], then shown: [String]) -> Bool {
        let fromShown = min(shown.count, joinCacheSize)
        if shown.suffix(fromShown).contains(uid) { return true }
        return cache.suffix(joinCacheSize - fromShown).contains(uid)
    }
}

/// The joined (and joining) chatrooms, sorted by roomId. Usually one: the SDK's default is one
/// room at a time.
struct ChatroomTable: Sendable {
    private(set) var rooms: [ChatroomRoom] = []

    func index(of roomId: String) -> Int? { rooms.firstIndex { $0.roomId == roomId } }

    subscript(roomId: String) -> ChatroomRoom? {
        get { index(of: roomId).map { rooms[$0] } }
    }

    mutating func update(_ roomId: String, _ body: (inout ChatroomRoom) -> Void) {
        guard let i = index(of: roomId) else { return }
        update(at: i, body)
    }

    /// Updates the room at `i` (from `index(of:)`, no change to the table since) in place.
    mutating func update<R>(at i: Int, _ body: (inout ChatroomRoom) -> R) -> R {
        body(&rooms[i])
    }

    mutating func insert(_ room: ChatroomRoom) {
        if let i = index(of: room.roomId) {
            rooms[i] = room
        } else {
            rooms.append(room)
            rooms.sort { $0.roomId < $1.roomId }
        }
    }

    @discardableResult
    mutating func remove(_ roomId: String) -> ChatroomRoom? {
        guard let i = index(of: roomId) else { return nil }
        return rooms.remove(at: i)
    }

    mutating func removeAll() -> [ChatroomRoom] {
        defer { rooms.removeAll() }
        return rooms
    }

    var roomIds: [String] { rooms.map(\.roomId) }
}
