import IMWire
import SimKernel

/// One timed action of a scenario script. Flat JSON:
/// `{"at": "5s", "device": "alice-phone", "action": "send", "to": "private:bob", "text": "hi"}`.
public struct ScriptStep: Codable, Sendable, Equatable {
    public var at: DurationValue
    /// The acting device (required by device actions; omitted for server/world actions).
    public var device: String?
    public var action: ScriptAction

    public init(at: SimDuration, device: String?, action: ScriptAction) {
        self.at = DurationValue(at)
        self.device = device
        self.action = action
    }

    enum CodingKeys: String, CodingKey {
        case at, device, action
        case to, type, text, content, count, interval, timeLimit, conversation, room, key, value, autoDelete, force
        case state, by, target, factor, downFor, user, pushText, mention, pages, message
        case group, users, blocked, enabled, types, before, after
        case torn
        case `for` = "for"
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        at = try c.decode(DurationValue.self, forKey: .at)
        device = try c.decodeIfPresent(String.self, forKey: .device)
        let name = try c.decode(String.self, forKey: .action)
        guard let kind = ScriptAction.Kind(rawValue: name) else {
            throw DecodingError.dataCorruptedError(forKey: .action, in: c, debugDescription:
                "unknown action \"\(name)\" (known: \(ScriptAction.Kind.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        try decoder.rejectUnknownKeys(allowed: ["at", "device", "action"] + kind.parameters)
        if kind.needsDevice && device == nil {
            throw ScenarioError(path: ScenarioError.path(c.codingPath + [CodingKeys.device]), message: "action \"\(name)\" needs a \"device\"")
        }
        func conversation(_ key: CodingKeys) throws -> ConversationKey {
            let text = try c.decode(String.self, forKey: key)
            guard let conv = ConversationKey(parsing: text) else {
                throw DecodingError.dataCorruptedError(forKey: key, in: c, debugDescription:
                    "expected TYPE:TARGET, e.g. \"private:bob\", \"group:g1\", \"chatroom:room1\", got \"\(text)\"")
            }
            return conv
        }
        func nth(_ n: Int) throws -> Int {
            guard (1...10_000).contains(n) else {
                throw DecodingError.dataCorruptedError(forKey: .message, in: c, debugDescription:
                    "message must be 1…10000 (1 = the newest message of the conversation on the device)")
            }
            return n
        }
        func duration(_ key: CodingKeys) throws -> SimDuration { try c.decode(DurationValue.self, forKey: key).duration }
        switch kind {
        case .connect:
            action = .connect(timeLimitSeconds: try c.decodeIfPresent(Int32.self, forKey: .timeLimit) ?? 0)
        case .disconnect: action = .disconnect
        case .logout: action = .logout
        case .send:
            let count = try c.decodeIfPresent(Int.self, forKey: .count) ?? 1
            guard (1...100_000).contains(count) else {
                throw DecodingError.dataCorruptedError(forKey: .count, in: c, debugDescription: "count must be 1…100000")
            }
            action = .send(SendSpec(
                to: try conversation(.to),
                objectName: try c.decodeIfPresent(String.self, forKey: .type) ?? "RC:TxtMsg",
                text: try c.decodeIfPresent(String.self, forKey: .text),
                content: try c.decodeIfPresent(String.self, forKey: .content),
                count: count,
                interval: try c.decodeIfPresent(DurationValue.self, forKey: .interval)?.duration ?? .zero,
                mentionAll: try c.decodeIfPresent(Bool.self, forKey: .mention) ?? false))
        case .resend: action = .resendLastFailed
        case .recall:
            if let n = try c.decodeIfPresent(Int.self, forKey: .message) {
                action = .recallMessage(try conversation(.conversation), nth: try nth(n))
            } else {
                action = .recallLastSent
            }
        case .read, .clearUnread:
            let conv = try conversation(.conversation)
            if let n = try c.decodeIfPresent(Int.self, forKey: .message) {
                action = .readUpTo(conv, nth: try nth(n), receipt: kind == .read)
            } else {
                action = kind == .read ? .read(conv) : .clearUnread(conv)
            }
        case .join, .joinExist:
            let room = try c.decode(String.self, forKey: .room)
            let count = try c.decodeIfPresent(Int32.self, forKey: .count) ?? 10
            action = kind == .join ? .joinChatroom(room, count: count) : .joinExistChatroom(room, count: count)
        case .quit: action = .quitChatroom(try c.decode(String.self, forKey: .room))
        case .setKV:
            action = .setKV(room: try c.decode(String.self, forKey: .room), key: try c.decode(String.self, forKey: .key),
                            value: try c.decode(String.self, forKey: .value),
                            autoDelete: try c.decodeIfPresent(Bool.self, forKey: .autoDelete) ?? false,
                            force: try c.decodeIfPresent(Bool.self, forKey: .force) ?? false)
        case .removeKV:
            action = .removeKV(room: try c.decode(String.self, forKey: .room), key: try c.decode(String.self, forKey: .key),
                               force: try c.decodeIfPresent(Bool.self, forKey: .force) ?? false)
        case .history:
            let pages = try c.decodeIfPresent(Int.self, forKey: .pages) ?? 1
            guard (1...10_000).contains(pages) else {
                throw DecodingError.dataCorruptedError(forKey: .pages, in: c, debugDescription: "pages must be 1…10000")
            }
            action = .history(try conversation(.conversation), count: try c.decodeIfPresent(Int32.self, forKey: .count) ?? 20,
                              pages: pages, interval: try c.decodeIfPresent(DurationValue.self, forKey: .interval)?.duration ?? .seconds(1))
        case .getKV:
            action = .getKV(room: try c.decode(String.self, forKey: .room))
        case .remoteHistory:
            let count = try c.decodeIfPresent(Int32.self, forKey: .count) ?? 20
            guard (1...200).contains(count) else {
                throw DecodingError.dataCorruptedError(forKey: .count, in: c, debugDescription: "count must be 1…200 (a cloud history page)")
            }
            // `"before": "previous"`: the app scrolling back from its last page.
            let previous = (try? c.decodeIfPresent(String.self, forKey: .before)) == "previous"
            let before = previous ? nil : try c.decodeIfPresent(DurationValue.self, forKey: .before)?.duration
            let after = try c.decodeIfPresent(DurationValue.self, forKey: .after)?.duration
            let cursor: RemoteHistoryCursor
            switch (before, after) {
            case (nil, nil) where previous: cursor = .previous
            case (nil, _?) where previous:
                throw DecodingError.dataCorruptedError(forKey: .after, in: c, debugDescription: "give \"before\" or \"after\", not both")
            case (nil, nil): cursor = .newest
            case (let b?, nil): cursor = .before(b)
            case (nil, let a?): cursor = .after(a)
            case (_?, _?):
                throw DecodingError.dataCorruptedError(forKey: .after, in: c, debugDescription: "give \"before\" or \"after\", not both")
            }
            action = .remoteHistory(try conversation(.conversation), count: count, cursor)
        case .background: action = .background
        case .foreground: action = .foreground
        case .kill: action = .kill
        case .restart: action = .restart
        case .network:
            let s = try c.decode(String.self, forKey: .state)
            guard let state = NetworkState(rawValue: s) else {
                throw DecodingError.dataCorruptedError(forKey: .state, in: c, debugDescription: "network state must be wifi, cellular, none or noneNotified")
            }
            action = .network(state)
        case .clockStep:
            // A wall-clock step may go back ("-3s"): parsed without DurationValue's sign check.
            let text = try c.decode(String.self, forKey: .by)
            guard let by = try? SimDuration(parsing: text) else {
                throw DecodingError.dataCorruptedError(forKey: .by, in: c, debugDescription: "invalid duration \"\(text)\" (e.g. \"-3s\", \"500ms\")")
            }
            action = .clockStep(by)
        case .partition:
            let target = try c.decodeIfPresent(String.self, forKey: .target) ?? device ?? "server"
            action = .partition(target: target, for: try duration(.for))
        case .reset: action = .resetConnection
        case .halfOpen: action = .halfOpenConnection
        case .latencySpike:
            let factor = try c.decodeIfPresent(Int64.self, forKey: .factor) ?? 10
            guard (1...1000).contains(factor) else {
                throw DecodingError.dataCorruptedError(forKey: .factor, in: c, debugDescription: "factor must be 1…1000")
            }
            action = .latencySpike(factor: factor, for: try duration(.for))
        case .serverCrash: action = .serverCrash(downFor: try duration(.downFor))
        case .powerLoss:
            action = .powerLoss(torn: try c.decodeIfPresent(Bool.self, forKey: .torn) ?? false,
                                downFor: try c.decodeIfPresent(DurationValue.self, forKey: .downFor)?.duration ?? .seconds(10))
        case .ioError: action = .storageFault(.ioError, for: try duration(.for))
        case .diskFull: action = .storageFault(.diskFull, for: try duration(.for))
        case .banChatroomUser:
            action = .server(.banChatroomUser(room: try c.decode(String.self, forKey: .room), user: try c.decode(String.self, forKey: .user), for: try duration(.for)))
        case .muteChatroomUser:
            action = .server(.muteChatroomUser(room: try c.decode(String.self, forKey: .room), user: try c.decode(String.self, forKey: .user), for: try duration(.for)))
        case .destroyChatroom:
            action = .server(.destroyChatroom(room: try c.decode(String.self, forKey: .room)))
        case .systemMessage:
            action = .server(.systemMessage(to: try c.decode(String.self, forKey: .user), text: try c.decode(String.self, forKey: .text)))
        case .broadcast:
            action = .server(.broadcast(text: try c.decode(String.self, forKey: .text)))
        case .typing:
            action = .typing(try conversation(.to))
        case .addGroupMembers, .removeGroupMembers:
            let group = try c.decode(String.self, forKey: .group)
            let users = try c.decode([String].self, forKey: .users)
            action = .server(kind == .addGroupMembers ? .addGroupMembers(group: group, users: users)
                                                      : .removeGroupMembers(group: group, users: users))
        case .blockUser:
            action = .server(.blockUser(user: try c.decode(String.self, forKey: .user),
                                        blocked: try c.decodeIfPresent(Bool.self, forKey: .blocked) ?? true))
        case .createChatroom:
            action = .server(.createChatroom(room: try c.decode(String.self, forKey: .room)))
        case .keepAliveChatroom:
            action = .server(.keepAliveChatroom(room: try c.decode(String.self, forKey: .room),
                                                enabled: try c.decodeIfPresent(Bool.self, forKey: .enabled) ?? true))
        case .setChatroomWhitelist:
            action = .server(.setChatroomWhitelist(room: try c.decode(String.self, forKey: .room),
                                                   users: try c.decode([String].self, forKey: .users)))
        case .setChatroomMessageWhitelist:
            action = .server(.setChatroomMessageWhitelist(types: try c.decode([String].self, forKey: .types)))
        }
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(at, forKey: .at)
        try c.encodeIfPresent(device, forKey: .device)
        try c.encode(action.kind.rawValue, forKey: .action)
        switch action {
        case .connect(let t): if t != 0 { try c.encode(t, forKey: .timeLimit) }
        case .send(let s):
            try c.encode(s.to.description, forKey: .to)
            if s.objectName != "RC:TxtMsg" { try c.encode(s.objectName, forKey: .type) }
            try c.encodeIfPresent(s.text, forKey: .text)
            try c.encodeIfPresent(s.content, forKey: .content)
            if s.count != 1 { try c.encode(s.count, forKey: .count) }
            if s.interval != .zero { try c.encode(DurationValue(s.interval), forKey: .interval) }
            if s.mentionAll { try c.encode(true, forKey: .mention) }
        case .read(let conv), .clearUnread(let conv): try c.encode(conv.description, forKey: .conversation)
        case .readUpTo(let conv, let n, _), .recallMessage(let conv, let n):
            try c.encode(conv.description, forKey: .conversation); try c.encode(n, forKey: .message)
        case .joinChatroom(let r, let n), .joinExistChatroom(let r, let n):
            try c.encode(r, forKey: .room); try c.encode(n, forKey: .count)
        case .quitChatroom(let r): try c.encode(r, forKey: .room)
        case .setKV(let r, let k, let v, let a, let f):
            try c.encode(r, forKey: .room); try c.encode(k, forKey: .key); try c.encode(v, forKey: .value)
            if a { try c.encode(a, forKey: .autoDelete) }
            if f { try c.encode(f, forKey: .force) }
        case .removeKV(let r, let k, let f):
            try c.encode(r, forKey: .room); try c.encode(k, forKey: .key)
            if f { try c.encode(f, forKey: .force) }
        case .history(let conv, let n, let pages, let interval):
            try c.encode(conv.description, forKey: .conversation); try c.encode(n, forKey: .count)
            if pages != 1 { try c.encode(pages, forKey: .pages); try c.encode(DurationValue(interval), forKey: .interval) }
        case .getKV(let r): try c.encode(r, forKey: .room)
        case .remoteHistory(let conv, let count, let cursor):
            try c.encode(conv.description, forKey: .conversation); try c.encode(count, forKey: .count)
            switch cursor {
            case .newest: break
            case .previous: try c.encode("previous", forKey: .before)
            case .before(let t): try c.encode(DurationValue(t), forKey: .before)
            case .after(let t): try c.encode(DurationValue(t), forKey: .after)
            }
        case .network(let s): try c.encode(s.rawValue, forKey: .state)
        case .clockStep(let d): try c.encode(DurationValue(d), forKey: .by)
        case .partition(let t, let d): try c.encode(t, forKey: .target); try c.encode(DurationValue(d), forKey: .for)
        case .latencySpike(let f, let d): try c.encode(f, forKey: .factor); try c.encode(DurationValue(d), forKey: .for)
        case .serverCrash(let d): try c.encode(DurationValue(d), forKey: .downFor)
        case .powerLoss(let torn, let d):
            if torn { try c.encode(torn, forKey: .torn) }
            try c.encode(DurationValue(d), forKey: .downFor)
        case .storageFault(_, let d): try c.encode(DurationValue(d), forKey: .for)
        case .server(let call):
            switch call {
            case .banChatroomUser(let r, let u, let d), .muteChatroomUser(let r, let u, let d):
                try c.encode(r, forKey: .room); try c.encode(u, forKey: .user); try c.encode(DurationValue(d), forKey: .for)
            case .destroyChatroom(let r): try c.encode(r, forKey: .room)
            case .systemMessage(let u, let t): try c.encode(u, forKey: .user); try c.encode(t, forKey: .text)
            case .broadcast(let t): try c.encode(t, forKey: .text)
            case .addGroupMembers(let g, let u), .removeGroupMembers(let g, let u):
                try c.encode(g, forKey: .group); try c.encode(u, forKey: .users)
            case .blockUser(let u, let b): try c.encode(u, forKey: .user); if !b { try c.encode(b, forKey: .blocked) }
            case .createChatroom(let r): try c.encode(r, forKey: .room)
            case .keepAliveChatroom(let r, let e): try c.encode(r, forKey: .room); if !e { try c.encode(e, forKey: .enabled) }
            case .setChatroomWhitelist(let r, let u): try c.encode(r, forKey: .room); try c.encode(u, forKey: .users)
            case .setChatroomMessageWhitelist(let t): try c.encode(t, forKey: .types)
            }
        case .typing(let conv): try c.encode(conv.description, forKey: .to)
        case .disconnect, .logout, .resendLastFailed, .recallLastSent, .background, .foreground, .kill, .restart,
             .resetConnection, .halfOpenConnection:
            break
        }
    }
}

/// Where a cloud history page starts: the newest messages, the newest before the server's time at
/// a simulated instant (`"before": "30s"`), or the oldest after it (`"after": "30s"`).
public enum RemoteHistoryCursor: Sendable, Equatable {
    case newest
    /// `"before": "previous"`: before the oldest message of the device's last successful page of
    /// the conversation (its sentTime: the app scrolling back; the step is skipped without one).
    case previous
    case before(SimDuration)
    case after(SimDuration)
}

public enum NetworkState: String, Codable, Sendable, Equatable {
    case wifi, cellular, none
    /// No network, the app told first: the OS's notice (a path monitor) comes while the SDK's
    /// socket has not failed yet, so the SDK hears "no network" on a live connection and closes it
    /// itself; the socket's own error is never read. (`none`: the socket fails first, then the
    /// notice.)
    case noneNotified

    /// The interface is up (wifi or cellular).
    public var isUp: Bool { self == .wifi || self == .cellular }
}

public struct SendSpec: Sendable, Equatable {
    public var to: ConversationKey
    public var objectName: String
    public var text: String?
    /// Raw JSON content for non-text types.
    public var content: String?
    public var count: Int
    public var interval: SimDuration
    public var mentionAll: Bool

    /// For scenarios built in code (the file form is `{"action": "send", "to": …}`).
    public init(to: ConversationKey, objectName: String = "RC:TxtMsg", text: String? = nil, content: String? = nil,
                count: Int = 1, interval: SimDuration = .zero, mentionAll: Bool = false) {
        self.to = to
        self.objectName = objectName
        self.text = text
        self.content = content
        self.count = count
        self.interval = interval
        self.mentionAll = mentionAll
    }
}

/// Server-API calls a scenario can make (im-semantics: server API only).
public enum ServerScriptCall: Sendable, Equatable {
    case banChatroomUser(room: String, user: String, for: SimDuration)
    case muteChatroomUser(room: String, user: String, for: SimDuration)
    case destroyChatroom(room: String)
    case systemMessage(to: String, text: String)
    case broadcast(text: String)
    case addGroupMembers(group: String, users: [String])
    case removeGroupMembers(group: String, users: [String])
    /// Block (or, `blocked: false`, unblock) a user: sessions closed, connects refused.
    case blockUser(user: String, blocked: Bool)
    case createChatroom(room: String)
    /// Keep the room alive (not auto-destroyed), or stop keeping it.
    case keepAliveChatroom(room: String, enabled: Bool)
    /// The room's user whitelist (replaces it).
    case setChatroomWhitelist(room: String, users: [String])
    /// The app's chatroom message-type whitelist (replaces it; every room): these types are never
    /// dropped by a room's quota.
    case setChatroomMessageWhitelist(types: [String])
}

public enum ScriptAction: Sendable, Equatable {
    case connect(timeLimitSeconds: Int32)
    case disconnect
    case logout
    case send(SendSpec)
    case resendLastFailed
    case recallLastSent
    case read(ConversationKey)
    case clearUnread(ConversationKey)
    /// Read (with `receipt`: `read`, else `clearUnread`) up to the sentTime of the `nth` newest
    /// message of the conversation on the device (`"message": N`; 1 = the newest).
    case readUpTo(ConversationKey, nth: Int, receipt: Bool)
    /// Recall the `nth` newest of the device's own sent (not yet recalled) messages in the
    /// conversation (`recall` with `"conversation"` and `"message": N`).
    case recallMessage(ConversationKey, nth: Int)
    case joinChatroom(String, count: Int32)
    case joinExistChatroom(String, count: Int32)
    case quitChatroom(String)
    case setKV(room: String, key: String, value: String, autoDelete: Bool, force: Bool)
    case removeKV(room: String, key: String, force: Bool)
    /// `pages` pages of local history, `interval` apart, each continuing from the last
    /// messageId of the page before (the app scrolling back).
    case history(ConversationKey, count: Int32, pages: Int, interval: SimDuration)
    /// The app reads its room's attributes (`getChatroomKV`).
    case getKV(room: String)
    /// A cloud history query (`getRemoteHistory` / `getRemoteHistoryAfter`) of `count` (1…200)
    /// messages around a point in simulated time, given to the server as its ms timestamp then.
    case remoteHistory(ConversationKey, count: Int32, RemoteHistoryCursor)
    case background
    case foreground
    case kill
    case restart
    case network(NetworkState)
    case clockStep(SimDuration)
    case partition(target: String, for: SimDuration)
    case resetConnection
    case halfOpenConnection
    case latencySpike(factor: Int64, for: SimDuration)
    case serverCrash(downFor: SimDuration)
    case server(ServerScriptCall)
    /// A typing status (RC:TypSts, STATUS) to the conversation; the SDK skips repeats within 6 s.
    case typing(ConversationKey)
    /// The device loses power (device store only): app killed, unsynced writes lost (`torn`:
    /// some survive, some half-written), the app starts again after `downFor`.
    case powerLoss(torn: Bool, downFor: SimDuration)
    /// `ioError` or `diskFull` on the device's simulated disk for a window.
    case storageFault(FaultKind, for: SimDuration)

    public enum Kind: String, CaseIterable, Sendable {
        case connect, disconnect, logout, send, resend, recall, read, clearUnread, join, joinExist, quit, setKV, removeKV,
             getKV, history, remoteHistory, background, foreground, kill, restart, network, clockStep, partition, reset, halfOpen,
             latencySpike, serverCrash, banChatroomUser, muteChatroomUser, destroyChatroom, systemMessage, broadcast,
             typing, addGroupMembers, removeGroupMembers, blockUser, createChatroom, keepAliveChatroom, setChatroomWhitelist,
             setChatroomMessageWhitelist, powerLoss, ioError, diskFull

        var parameters: [String] {
            switch self {
            case .connect: ["timeLimit"]
            case .send: ["to", "type", "text", "content", "count", "interval", "mention"]
            case .read, .clearUnread, .recall: ["conversation", "message"]
            case .join, .joinExist: ["room", "count"]
            case .quit, .destroyChatroom: ["room"]
            case .setKV: ["room", "key", "value", "autoDelete", "force"]
            case .removeKV: ["room", "key", "force"]
            case .history: ["conversation", "count", "pages", "interval"]
            case .getKV: ["room"]
            case .remoteHistory: ["conversation", "count", "before", "after"]
            case .network: ["state"]
            case .clockStep: ["by"]
            case .partition: ["target", "for"]
            case .latencySpike: ["factor", "for"]
            case .powerLoss: ["torn", "downFor"]
            case .ioError, .diskFull: ["for"]
            case .serverCrash: ["downFor"]
            case .banChatroomUser, .muteChatroomUser: ["room", "user", "for"]
            case .systemMessage: ["user", "text"]
            case .broadcast: ["text"]
            case .typing: ["to"]
            case .addGroupMembers, .removeGroupMembers: ["group", "users"]
            case .blockUser: ["user", "blocked"]
            case .createChatroom: ["room"]
            case .keepAliveChatroom: ["room", "enabled"]
            case .setChatroomWhitelist: ["room", "users"]
            case .setChatroomMessageWhitelist: ["types"]
            default: []
            }
        }

        var needsDevice: Bool {
            switch self {
            case .partition, .latencySpike, .serverCrash, .banChatroomUser, .muteChatroomUser, .destroyChatroom,
                 .systemMessage, .broadcast, .addGroupMembers, .removeGroupMembers, .blockUser, .createChatroom,
                 .keepAliveChatroom, .setChatroomWhitelist, .setChatroomMessageWhitelist:
                false
            default:
                true
            }
        }
    }

    public var kind: Kind {
        switch self {
        case .connect: .connect
        case .disconnect: .disconnect
        case .logout: .logout
        case .send: .send
        case .resendLastFailed: .resend
        case .recallLastSent, .recallMessage: .recall
        case .readUpTo(_, _, let receipt): receipt ? .read : .clearUnread
        case .read: .read
        case .clearUnread: .clearUnread
        case .joinChatroom: .join
        case .joinExistChatroom: .joinExist
        case .quitChatroom: .quit
        case .setKV: .setKV
        case .removeKV: .removeKV
        case .history: .history
        case .getKV: .getKV
        case .remoteHistory: .remoteHistory
        case .background: .background
        case .foreground: .foreground
        case .kill: .kill
        case .restart: .restart
        case .network: .network
        case .clockStep: .clockStep
        case .partition: .partition
        case .resetConnection: .reset
        case .halfOpenConnection: .halfOpen
        case .latencySpike: .latencySpike
        case .serverCrash: .serverCrash
        case .server(let call):
            switch call {
            case .banChatroomUser: .banChatroomUser
            case .muteChatroomUser: .muteChatroomUser
            case .destroyChatroom: .destroyChatroom
            case .systemMessage: .systemMessage
            case .broadcast: .broadcast
            case .addGroupMembers: .addGroupMembers
            case .removeGroupMembers: .removeGroupMembers
            case .blockUser: .blockUser
            case .createChatroom: .createChatroom
            case .keepAliveChatroom: .keepAliveChatroom
            case .setChatroomWhitelist: .setChatroomWhitelist
            case .setChatroomMessageWhitelist: .setChatroomMessageWhitelist
            }
        case .typing: .typing
        case .powerLoss: .powerLoss
        case .storageFault(let kind, _): kind == .diskFull ? .diskFull : .ioError
        }
    }
}

extension ConversationKey {
    /// Parses `private:bob`, `group:g1`, `chatroom:room1`, `system:ops`.
    public init?(parsing text: String) {
        guard let colon = text.firstIndex(of: ":") else { return nil }
        guard let type = ConversationType(name: String(text[..<colon])) else { return nil }
        let target = String(text[text.index(after: colon)...])
        guard !target.isEmpty else { return nil }
        self.init(type, target)
    }
}
