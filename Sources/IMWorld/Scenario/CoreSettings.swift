import IMWire
import SimKernel

/// Scenario `server` section: knobs of the server model (defaults = im-semantics values).
/// Mapped onto `ServerConfig` by the world.
public struct ServerSettings: Codable, Sendable, Equatable {
    public var offlineRetentionDays: Int = 7
    public var allowEqualDataTime: Bool = false
    /// `direct` (s_msg) or `notify` (s_ntf + pull) for online recipients.
    public var delivery: String = "direct"
    public var pullPageSize: Int = 50
    public var multiDeviceSync: Bool = true
    public var newDeviceHistoryDays: Int = 1
    /// The server's time zone for calendar days (new-device sync): minutes east of UTC.
    public var serverUtcOffsetMinutes: Int = 480
    public var sessionIdleTimeout: DurationValue = DurationValue(.seconds(90))
    public var rateLimitPerSecond: Int = 5
    public var maxBodyBytes: Int = 131_072
    public var recallWindow: DurationValue = DurationValue(.seconds(120))
    public var sensitiveWords: [String] = []
    /// user → users they block (405 for the blocked sender).
    public var blacklists: [String: [String]] = [:]
    /// user → the only users allowed to message them (407 for others).
    public var whitelists: [String: [String]] = [:]
    /// Offline inbox, chatroom history and KV survive a server crash.
    public var persistAcrossCrash: Bool = true
    public var chatroom: ChatroomSettings = ChatroomSettings()
    public var bugs: [BugSwitch] = []

    public init() {}

    enum CodingKeys: String, CodingKey, CaseIterable {
        case offlineRetentionDays, allowEqualDataTime, delivery, pullPageSize, multiDeviceSync, newDeviceHistoryDays,
             sessionIdleTimeout, rateLimitPerSecond, maxBodyBytes, recallWindow, sensitiveWords, blacklists,
             whitelists, persistAcrossCrash, chatroom, bugs
        case serverUtcOffsetMinutes
    }

    public init(from decoder: Decoder) throws {
        try decoder.rejectUnknownKeys(allowed: CodingKeys.allCases.map(\.rawValue))
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = ServerSettings()
        offlineRetentionDays = try c.decodeIfPresent(Int.self, forKey: .offlineRetentionDays) ?? d.offlineRetentionDays
        guard (1...7).contains(offlineRetentionDays) else {
            throw DecodingError.dataCorruptedError(forKey: .offlineRetentionDays, in: c, debugDescription: "must be 1…7 days")
        }
        allowEqualDataTime = try c.decodeIfPresent(Bool.self, forKey: .allowEqualDataTime) ?? d.allowEqualDataTime
        delivery = try c.decodeIfPresent(String.self, forKey: .delivery) ?? d.delivery
        guard ["direct", "notify"].contains(delivery) else {
            throw DecodingError.dataCorruptedError(forKey: .delivery, in: c, debugDescription: "must be \"direct\" or \"notify\"")
        }
        pullPageSize = try c.decodeIfPresent(Int.self, forKey: .pullPageSize) ?? d.pullPageSize
        guard (1...500).contains(pullPageSize) else {
            throw DecodingError.dataCorruptedError(forKey: .pullPageSize, in: c, debugDescription: "must be 1…500")
        }
        multiDeviceSync = try c.decodeIfPresent(Bool.self, forKey: .multiDeviceSync) ?? d.multiDeviceSync
        newDeviceHistoryDays = try c.decodeIfPresent(Int.self, forKey: .newDeviceHistoryDays) ?? d.newDeviceHistoryDays
        guard (1...7).contains(newDeviceHistoryDays) else {
            throw DecodingError.dataCorruptedError(forKey: .newDeviceHistoryDays, in: c, debugDescription: "must be 1…7 calendar days")
        }
        serverUtcOffsetMinutes = try c.decodeIfPresent(Int.self, forKey: .serverUtcOffsetMinutes) ?? d.serverUtcOffsetMinutes
        guard (-720...840).contains(serverUtcOffsetMinutes) else {
            throw DecodingError.dataCorruptedError(forKey: .serverUtcOffsetMinutes, in: c, debugDescription: "must be -720…840 minutes (UTC-12…UTC+14)")
        }
        sessionIdleTimeout = try c.decodeIfPresent(DurationValue.self, forKey: .sessionIdleTimeout) ?? d.sessionIdleTimeout
        rateLimitPerSecond = try c.decodeIfPresent(Int.self, forKey: .rateLimitPerSecond) ?? d.rateLimitPerSecond
        maxBodyBytes = try c.decodeIfPresent(Int.self, forKey: .maxBodyBytes) ?? d.maxBodyBytes
        recallWindow = try c.decodeIfPresent(DurationValue.self, forKey: .recallWindow) ?? d.recallWindow
        sensitiveWords = try c.decodeIfPresent([String].self, forKey: .sensitiveWords) ?? []
        blacklists = try c.decodeIfPresent([String: [String]].self, forKey: .blacklists) ?? [:]
        whitelists = try c.decodeIfPresent([String: [String]].self, forKey: .whitelists) ?? [:]
        persistAcrossCrash = try c.decodeIfPresent(Bool.self, forKey: .persistAcrossCrash) ?? d.persistAcrossCrash
        chatroom = try c.decodeIfPresent(ChatroomSettings.self, forKey: .chatroom) ?? ChatroomSettings()
        bugs = try c.decodeIfPresent([BugSwitch].self, forKey: .bugs) ?? []
        for (i, b) in bugs.enumerated() where b.side == .client {
            throw ScenarioError(path: ScenarioError.path(c.codingPath + [CodingKeys.bugs, AnyKey(intValue: i)]),
                                message: "\(b) is a client bug; put it in client.bugs")
        }
    }
}

public struct ChatroomSettings: Codable, Sendable, Equatable {
    /// 0 = unlimited (23411 when reached).
    public var memberLimit: Int = 0
    public var oneRoomPerUser: Bool = true
    public var historySize: Int = 50
    public var quotaWindow: DurationValue = DurationValue(.milliseconds(200))
    public var quotaCapacity: Int = 40
    public var quotaReservedHigh: Int = 20
    public var lowPriorityTypes: [String] = []
    public var whitelistTypes: [String] = []
    /// Tell the sender when the quota drops its message (error) instead of silent success.
    public var dropNotifiesSender: Bool = false
    /// `spec` (31st message within 30 s of going offline, or any message after 30 s) or `faq`
    /// (30 messages, clock starts at the first message).
    public var kickVariant: String = "spec"
    public var offlineKickWindow: DurationValue = DurationValue(.seconds(30))
    public var offlineKickMessages: Int = 31
    public var autoDestroyAfter: DurationValue = DurationValue(.hours(1))
    public var kvMaxKeys: Int = 100
    public var kvOpsPerSecond: Int = 100
    /// Auto-destroy counts members leaving as activity (joins always count). Default off.
    public var autoDestroyCountsLeaving: Bool = false

    public init() {}

    enum CodingKeys: String, CodingKey, CaseIterable {
        case memberLimit, oneRoomPerUser, historySize, quotaWindow, quotaCapacity, quotaReservedHigh, lowPriorityTypes,
             whitelistTypes, dropNotifiesSender, kickVariant, offlineKickWindow, offlineKickMessages, autoDestroyAfter,
             kvMaxKeys, kvOpsPerSecond
        case autoDestroyCountsLeaving
    }

    public init(from decoder: Decoder) throws {
        try decoder.rejectUnknownKeys(allowed: CodingKeys.allCases.map(\.rawValue))
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = ChatroomSettings()
        memberLimit = try c.decodeIfPresent(Int.self, forKey: .memberLimit) ?? d.memberLimit
        oneRoomPerUser = try c.decodeIfPresent(Bool.self, forKey: .oneRoomPerUser) ?? d.oneRoomPerUser
        historySize = try c.decodeIfPresent(Int.self, forKey: .historySize) ?? d.historySize
        quotaWindow = try c.decodeIfPresent(DurationValue.self, forKey: .quotaWindow) ?? d.quotaWindow
        quotaCapacity = try c.decodeIfPresent(Int.self, forKey: .quotaCapacity) ?? d.quotaCapacity
        quotaReservedHigh = try c.decodeIfPresent(Int.self, forKey: .quotaReservedHigh) ?? d.quotaReservedHigh
        guard quotaReservedHigh <= quotaCapacity else {
            throw DecodingError.dataCorruptedError(forKey: .quotaReservedHigh, in: c, debugDescription: "must not exceed quotaCapacity")
        }
        lowPriorityTypes = try c.decodeIfPresent([String].self, forKey: .lowPriorityTypes) ?? []
        whitelistTypes = try c.decodeIfPresent([String].self, forKey: .whitelistTypes) ?? []
        dropNotifiesSender = try c.decodeIfPresent(Bool.self, forKey: .dropNotifiesSender) ?? d.dropNotifiesSender
        kickVariant = try c.decodeIfPresent(String.self, forKey: .kickVariant) ?? d.kickVariant
        guard ["spec", "faq"].contains(kickVariant) else {
            throw DecodingError.dataCorruptedError(forKey: .kickVariant, in: c, debugDescription: "must be \"spec\" or \"faq\"")
        }
        offlineKickWindow = try c.decodeIfPresent(DurationValue.self, forKey: .offlineKickWindow) ?? d.offlineKickWindow
        offlineKickMessages = try c.decodeIfPresent(Int.self, forKey: .offlineKickMessages) ?? d.offlineKickMessages
        autoDestroyAfter = try c.decodeIfPresent(DurationValue.self, forKey: .autoDestroyAfter) ?? d.autoDestroyAfter
        guard autoDestroyAfter.duration <= .hours(24) else {
            throw DecodingError.dataCorruptedError(forKey: .autoDestroyAfter, in: c, debugDescription: "at most 24h")
        }
        kvMaxKeys = try c.decodeIfPresent(Int.self, forKey: .kvMaxKeys) ?? d.kvMaxKeys
        kvOpsPerSecond = try c.decodeIfPresent(Int.self, forKey: .kvOpsPerSecond) ?? d.kvOpsPerSecond
        autoDestroyCountsLeaving = try c.decodeIfPresent(Bool.self, forKey: .autoDestroyCountsLeaving) ?? d.autoDestroyCountsLeaving
    }
}

/// Scenario `client` section: knobs of the client SDK core (defaults = im-semantics values).
public struct ClientSettings: Codable, Sendable, Equatable {
    public var heartbeatInterval: DurationValue = DurationValue(.seconds(30))
    public var pingTimeout: DurationValue = DurationValue(.seconds(6))
    public var connackTimeout: DurationValue = DurationValue(.seconds(5))
    public var requestTimeout: DurationValue = DurationValue(.seconds(30))
    public var backgroundCloseAfter: DurationValue = DurationValue(.minutes(2))
    /// Poll the inbox every … (null = never; the web SDK uses 180 s).
    public var pollInterval: DurationValue?
    public var reconnectKickEnable: Bool = false
    /// The web SDK's link check: one PINGREQ before the first pull of every connection.
    public var pingBeforeFirstPull: Bool = false
    /// The store deduplicates by messageUId (the public client does not).
    public var storeDedup: Bool = false
    public var recallDecrementsUnread: Bool = true
    public var bugs: [BugSwitch] = []
    /// Where each device's store lives (issue 28): `memory` (a private `:memory:` database the
    /// world keeps across app kills) or `device` (the simulated-storage VFS: app kill keeps what
    /// was written, power loss only what was synced). Storage faults need `device`.
    public var store: StoreMode = .memory
    /// The device's fsync returns before the data is durable (a power loss then loses it).
    public var syncLies: Bool = false

    public enum StoreMode: String, Codable, Sendable, Equatable { case memory, device }

    public init() {}

    enum CodingKeys: String, CodingKey, CaseIterable {
        case heartbeatInterval, pingTimeout, connackTimeout, requestTimeout, backgroundCloseAfter, pollInterval,
             reconnectKickEnable, pingBeforeFirstPull, storeDedup, recallDecrementsUnread, bugs, store, syncLies
    }

    public init(from decoder: Decoder) throws {
        try decoder.rejectUnknownKeys(allowed: CodingKeys.allCases.map(\.rawValue))
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = ClientSettings()
        heartbeatInterval = try c.decodeIfPresent(DurationValue.self, forKey: .heartbeatInterval) ?? d.heartbeatInterval
        pingTimeout = try c.decodeIfPresent(DurationValue.self, forKey: .pingTimeout) ?? d.pingTimeout
        connackTimeout = try c.decodeIfPresent(DurationValue.self, forKey: .connackTimeout) ?? d.connackTimeout
        requestTimeout = try c.decodeIfPresent(DurationValue.self, forKey: .requestTimeout) ?? d.requestTimeout
        backgroundCloseAfter = try c.decodeIfPresent(DurationValue.self, forKey: .backgroundCloseAfter) ?? d.backgroundCloseAfter
        pollInterval = try c.decodeIfPresent(DurationValue.self, forKey: .pollInterval)
        reconnectKickEnable = try c.decodeIfPresent(Bool.self, forKey: .reconnectKickEnable) ?? d.reconnectKickEnable
        pingBeforeFirstPull = try c.decodeIfPresent(Bool.self, forKey: .pingBeforeFirstPull) ?? d.pingBeforeFirstPull
        storeDedup = try c.decodeIfPresent(Bool.self, forKey: .storeDedup) ?? d.storeDedup
        recallDecrementsUnread = try c.decodeIfPresent(Bool.self, forKey: .recallDecrementsUnread) ?? d.recallDecrementsUnread
        bugs = try c.decodeIfPresent([BugSwitch].self, forKey: .bugs) ?? []
        store = try c.decodeIfPresent(StoreMode.self, forKey: .store) ?? d.store
        syncLies = try c.decodeIfPresent(Bool.self, forKey: .syncLies) ?? d.syncLies
        for (i, b) in bugs.enumerated() where b.side != .client {
            throw ScenarioError(path: ScenarioError.path(c.codingPath + [CodingKeys.bugs, AnyKey(intValue: i)]),
                                message: "\(b) is a \(b.side.rawValue) bug; put it in server.bugs")
        }
    }

    /// As the synthesized encoding, with the issue-28 storage keys only when not default (so
    /// scenarios and captures written before them encode byte for byte as before).
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(heartbeatInterval, forKey: .heartbeatInterval)
        try c.encode(pingTimeout, forKey: .pingTimeout)
        try c.encode(connackTimeout, forKey: .connackTimeout)
        try c.encode(requestTimeout, forKey: .requestTimeout)
        try c.encode(backgroundCloseAfter, forKey: .backgroundCloseAfter)
        try c.encodeIfPresent(pollInterval, forKey: .pollInterval)
        try c.encode(reconnectKickEnable, forKey: .reconnectKickEnable)
        try c.encode(pingBeforeFirstPull, forKey: .pingBeforeFirstPull)
        try c.encode(storeDedup, forKey: .storeDedup)
        try c.encode(recallDecrementsUnread, forKey: .recallDecrementsUnread)
        try c.encode(bugs, forKey: .bugs)
        if store != .memory { try c.encode(store, forKey: .store) }
        if syncLies { try c.encode(syncLies, forKey: .syncLies) }
    }
}
