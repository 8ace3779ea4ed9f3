import IMWire

/// An authenticated session: one device of one user on one connection.
struct Session: Sendable, Hashable {
    let userId: String
    let deviceId: String
    let platform: Platform
    let sessionId: String
    /// The device's index in the user's device list (`UserRecord.devices`).
    let deviceIndex: Int32
    let openedAt: Int64

    /// Whether a message from (user, device) is this session's own: never served back to it by a
    /// chatroom pull, never reported lost to it. Both ids: a device id names a device of one user.
    func sent(by senderUserId: String, _ senderDeviceId: String?) -> Bool {
        senderUserId == userId && senderDeviceId == deviceId
    }
}

/// Server-side state of one transport connection.
struct Connection: Sendable {
    let id: ConnectionID
    var decoder: StreamDecoder
    /// nil until CONNECT is accepted.
    var session: Session?
    /// `session != nil` as a tag test (`==` on `Session?` copies both sides into a tuple).
    var hasSession: Bool { if case .some = session { true } else { false } }
    /// Server ms of the last bytes received (the idle timer is re-armed lazily from it).
    var lastActivity: Int64
    var idleTimerArmed = false
    var connectDeadlineArmed = false
    /// Message ids of server PUBLISHes on this connection.
    var messageIds = MessageIdCounter()
    var sendRate = SendRateWindow()
    /// QUERYACKs with qos 1 not yet confirmed by QUERYCON, by message id.
    var pendingQueryAcks: [UInt16: Frame.QueryAck] = [:]
    /// Chatrooms this session joined (sorted).
    var rooms: [String] = []

    init(id: ConnectionID, decoder: StreamDecoder, now: Int64) {
        self.id = id
        self.decoder = decoder
        self.lastActivity = now
    }
}

/// The per-connection send limit (im-semantics §2: 5 messages per second → 20604): a sliding
/// window over the times of the last `limit` sends that passed the check.
struct SendRateWindow: Sendable {
    private var times: [Int64] = []
    private var head = 0

    /// Records a send at `now` and returns true, or returns false when `limit` sends already
    /// happened in the last 1000 ms.
    mutating func allow(now: Int64, limit: Int) -> Bool {
        guard limit > 0 else { return true }
        if times.count < limit {
            times.append(now)
            return true
        }
        if now - times[head] < 1000 { return false }
        times[head] = now
        head = (head + 1) % limit
        return true
    }
}

/// The sessions a user has online: at most one per platform class (mobile, desktop, web).
struct OnlineUser: Sendable {
    var slots: [ConnectionID?] = [nil, nil, nil]
    var isEmpty: Bool { slots.allSatisfy { $0 == nil } }
    /// Connections in platform order (mobile, desktop, web).
    var connections: [ConnectionID] { slots.compactMap { $0 } }
}

extension Platform {
    /// Fan-out order and platform class: mobile (iOS, Android), desktop, web.
    var rank: Int {
        switch self {
        case .mobile, .ios, .android: 0
        case .desktop: 1
        case .web: 2
        }
    }
}

/// A device the server has seen for a user (persistent: decides what a *new* device gets).
struct DeviceRecord: Sendable {
    let deviceId: String
    /// Pulls never return messages older than this (the new-device history window); `.min` = all.
    let historyFloor: Int64
}

/// Per-user persistent state.
struct UserRecord: Sendable {
    var inbox = Mailbox()
    var sendbox = Mailbox()
    var devices: [DeviceRecord] = []
    /// updRRTime: the latest read time per conversation (as the user sees it).
    var readTimes: [ConversationKey: Int64] = [:]

    func deviceIndex(_ deviceId: String) -> Int? { devices.firstIndex { $0.deviceId == deviceId } }
}
