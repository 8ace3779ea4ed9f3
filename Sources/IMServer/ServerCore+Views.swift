import IMWire

/// Read-only views of the server for tests and oracles (never used by the model itself).
extension ServerCore {
    /// An online session.
    public struct SessionView: Sendable, Hashable {
        public var connection: ConnectionID
        public var userId: String
        public var deviceId: String
        public var platform: Platform
        public var sessionId: String
    }

    /// Online sessions of a user (mobile, desktop, web).
    public func onlineSessions(of userId: String) -> [SessionView] {
        onlineConnections(userId).compactMap { session(on: $0) }
    }

    /// The session on a connection, nil before CONNECT or after close.
    public func session(on connection: ConnectionID) -> SessionView? {
        guard let s = session(of: connection) else { return nil }
        return SessionView(connection: connection, userId: s.userId, deviceId: s.deviceId, platform: s.platform, sessionId: s.sessionId)
    }

    /// Open connections (authenticated or not), sorted.
    public var openConnections: [ConnectionID] { connections.keys.sorted() }

    /// The chatroom message-type whitelist in force (the config's, or the last server-API set).
    public var chatroomWhitelistTypes: Set<String> { admin.chatroomWhitelistTypes }

    /// Users with at least one online session, sorted.
    public var onlineUsers: [String] { online.keys.sorted() }

    /// messageUIds in a user's inbox, in pull order (expired entries not yet swept included).
    public func inboxMessageUIds(of userId: String) -> [String] {
        guard let u = store.users[userId] else { return [] }
        return (0..<u.inbox.count).map { u.inbox[$0].message.uid }
    }

    /// messageUIds in a user's sendbox, in pull order.
    public func sendboxMessageUIds(of userId: String) -> [String] {
        guard let u = store.users[userId] else { return [] }
        return (0..<u.sendbox.count).map { u.sendbox[$0].message.uid }
    }

    public func inboxCount(of userId: String) -> Int { store.users[userId]?.inbox.count ?? 0 }

    /// The latest updRRTime of a conversation (as the user sees it).
    public func readTime(of userId: String, conversation: ConversationKey) -> Int64? {
        store.users[userId]?.readTimes[conversation]
    }

    /// dataTime of an accepted message still indexed (within retention).
    public func dataTime(ofMessage uid: String) -> Int64? { store.message(uid: uid)?.dataTime }

    public func isRecalled(_ uid: String) -> Bool { store.recalled[uid] != nil }

    /// Messages accepted since the last restart that lost the store (the uid counter).
    public var acceptedMessageCount: UInt64 { store.uidCounter }

    // MARK: Chatrooms

    public var chatroomIds: [String] { store.rooms.keys.sorted() }

    public func chatroomExists(_ roomId: String) -> Bool { store.rooms[roomId] != nil }

    /// Members (online and offline), sorted.
    public func chatroomMembers(_ roomId: String) -> [String] { store.rooms[roomId]?.memberIds ?? [] }

    /// Members with no joined session, sorted, with the time they went offline.
    public func chatroomOfflineMembers(_ roomId: String) -> [(userId: String, since: Int64)] {
        guard let r = store.rooms[roomId] else { return [] }
        return r.offlineIds.map { ($0, r.member($0)!.offlineSince!) }
    }

    /// The history ring (what chrmPull serves), oldest first.
    public func chatroomHistory(_ roomId: String) -> [String] { store.rooms[roomId]?.history.map(\.uid) ?? [] }

    /// Live KV entries, sorted by key.
    public func chatroomKV(_ roomId: String) -> [(key: String, value: String, creator: String)] { store.rooms[roomId]?.kv.live ?? [] }

    /// Rooms a user is a member of, sorted.
    public func chatrooms(of userId: String) -> [String] { store.userRooms[userId] ?? [] }

    public func groupMembers(_ groupId: String) -> [String] { groups[groupId]?.members ?? [] }
}
