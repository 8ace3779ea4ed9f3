/// The client's local state of a joined chatroom.
public struct ChatroomState: Sendable, Hashable, Codable {
    public var roomId: String
    /// Local ms time of the (latest) join.
    public var joinedTime: Int64
    /// The post-join KV sync finished (reads before it fail with 34004).
    public var kvSynced: Bool
    /// Server ms time the KV cache was synced up to.
    public var kvSyncTime: Int64

    public init(roomId: String, joinedTime: Int64, kvSynced: Bool = false, kvSyncTime: Int64 = 0) {
        self.roomId = roomId
        self.joinedTime = joinedTime
        self.kvSynced = kvSynced
        self.kvSyncTime = kvSyncTime
    }
}

/// One cached chatroom attribute (im-semantics §6).
public struct ChatroomKVEntry: Sendable, Hashable, Codable {
    public var key: String
    public var value: String
    /// The key's creator (only they may change it without `force`).
    public var userId: String
    public var autoDelete: Bool
    /// Server ms time of the last change.
    public var updateTime: Int64

    public init(key: String, value: String, userId: String, autoDelete: Bool = false, updateTime: Int64) {
        self.key = key
        self.value = value
        self.userId = userId
        self.autoDelete = autoDelete
        self.updateTime = updateTime
    }
}
