import IMClient
import IMStore
import IMWire
import SimKernel

/// How frames are delimited on the captured connection.
public enum CaptureFraming: String, Sendable, Hashable, CaseIterable {
    /// TCP: `byte0 · checksum · remaining length · payload` (what the client core speaks).
    case stream
    /// WebSocket: one frame per transport message (parsed and validated; not replayable).
    case message
}

/// The first line of a capture: who recorded it, with which build and settings
/// (`Docs/capture-format.md` §2). Everything replay needs to rebuild the same client core.
public struct CaptureHeader: Sendable, Equatable {
    public static let formatName = "imsim-capture"
    /// The version this build writes and the only one it reads.
    public static let currentVersion = 1

    public var version: Int
    /// SDK / build that recorded the capture, e.g. `imsim 0.1.0 (debug)` or `RongIMLib 4.0.3`.
    public var sdk: String
    /// The app and its version, if the recorder knows it.
    public var app: String?
    public var identity: DeviceIdentity
    /// Device-local wall-clock ms when the capture started.
    public var startMs: Int64
    public var framing: CaptureFraming
    /// The SDK's configuration, including its bug switches, custom message types, stream
    /// obfuscation and maximum frame size.
    public var config: ClientConfig
    /// The store's behaviour switches (dedup by messageUId, unread decrement on recall).
    public var storeOptions: IMStore.Options
    /// The capture starts with an empty database (first run of the app): replay's fresh store
    /// then assigns the same messageIds and clientUniqueIds.
    public var freshStore: Bool
    /// Where the capture comes from (e.g. `imsim run quickstart --seed 1 --capture alice-phone=…`).
    public var source: String?
    /// Set when an importer made the capture from observed traffic (`"pcap"`, `"har"`): it has
    /// frames, connection events and inferred inputs but no callbacks or store, and replay
    /// compares only the frames.
    public var imported: String?

    public init(identity: DeviceIdentity, config: ClientConfig, storeOptions: IMStore.Options, startMs: Int64,
                sdk: String, app: String? = nil, framing: CaptureFraming = .stream, freshStore: Bool = true,
                source: String? = nil) {
        version = Self.currentVersion
        self.sdk = sdk
        self.app = app
        self.identity = identity
        self.startMs = startMs
        self.framing = framing
        self.config = config
        self.storeOptions = storeOptions
        self.freshStore = freshStore
        self.source = source
    }

    /// The client bug switches set in `config`, in order.
    public var bugs: [BugSwitch] {
        BugSwitch.allCases.filter { $0.side == .client && config.bugs.contains(ClientBugs([$0])) }
    }

    // MARK: - JSON

    public var json: JSONValue {
        var o = ObjectBuilder()
        o.add("format", Self.formatName)
        o.add("version", version)
        o.add("sdk", sdk)
        o.addIfPresent("app", app)
        o.add("userId", identity.userId)
        o.add("deviceId", identity.deviceId)
        o.add("platform", identity.platform.rawValue)
        o.add("appKey", identity.appKey)
        o.add("startMs", startMs)
        o.add("framing", framing.rawValue)
        o.add("obfuscated", config.obfuscatedStream)
        o.add("maxFrameSize", config.maxFrameSize)
        o.add("freshStore", freshStore)
        o.add("bugs", .array(bugs.map { .string($0.rawValue) }))
        var c = ObjectBuilder()
        c.add("heartbeatInterval", config.heartbeatInterval.description)
        c.add("pingTimeout", config.pingTimeout.description)
        c.add("connackTimeout", config.connackTimeout.description)
        c.add("requestTimeout", config.requestTimeout.description)
        c.add("backgroundCloseAfter", config.backgroundCloseAfter.description)
        c.add("reconnectSchedule", .array(config.reconnectSchedule.map { .string($0.description) }))
        c.add("pollInterval", config.pollInterval.map { .string($0.description) } ?? .null)
        c.add("reconnectKickEnable", config.reconnectKickEnable)
        c.add("pingBeforeFirstPull", config.pingBeforeFirstPull)
        c.add("messageUIdDedup", config.messageUIdDedup)
        c.add("allowMultipleChatrooms", config.allowMultipleChatrooms)
        c.add("chatroomPullCount", config.chatroomPullCount)
        c.add("chatroomJoinMaxCount", config.chatroomJoinMaxCount)
        o.add("config", c.value)
        o.add("customTypes", .array(config.registry.customObjectNames.map { name in
            let f = config.registry.flags(for: name)!
            var t = ObjectBuilder()
            t.add("objectName", name)
            t.add("persistent", f.persistent.rawValue)
            t.add("offline", f.offline)
            t.add("push", f.push)
            t.add("priority", f.chatroomPriority.rawValue)
            return t.value
        }))
        var s = ObjectBuilder()
        s.add("dedupByMessageUId", storeOptions.dedupByMessageUId)
        s.add("recallDecrementsUnread", storeOptions.recallDecrementsUnread)
        o.add("store", s.value)
        o.addIfPresent("source", source)
        o.addIfPresent("imported", imported)
        return o.value
    }

    /// Parses and checks a header line (line 1).
    public init(json value: JSONValue, line: Int = 1) throws(CaptureError) {
        guard case .object = value else { throw CaptureError(.badHeader, line: line, "the first line must be the capture header object") }
        var r = try FieldReader(value, line: line, what: "the header")
        guard r.has("format"), (try? r.string("format")) == Self.formatName else {
            throw CaptureError(.badHeader, line: line, field: "format", "not a capture header (expected \"format\": \"\(Self.formatName)\")")
        }
        let v = try r.int64("version")
        guard v == Int64(Self.currentVersion) else {
            throw CaptureError(.unsupportedVersion, line: line, field: "version",
                               "capture format version \(v); this build reads version \(Self.currentVersion)")
        }
        version = Int(v)
        sdk = try r.string("sdk")
        app = try r.optionalString("app")
        let userId = try r.string("userId")
        let deviceId = try r.string("deviceId")
        let platformText = try r.string("platform")
        guard let platform = Platform(rawValue: platformText) else {
            throw r.fail("platform", .invalidField, "unknown platform \"\(platformText)\" (mobile, desktop, web)")
        }
        let appKey = try r.optionalString("appKey") ?? "imsim-app"
        identity = DeviceIdentity(userId: userId, deviceId: deviceId, platform: platform, appKey: appKey)
        startMs = try r.int64("startMs")
        let framingText = try r.string("framing")
        guard let f = CaptureFraming(rawValue: framingText) else {
            throw r.fail("framing", .invalidField, "unknown framing \"\(framingText)\" (stream, message)")
        }
        framing = f
        var config = ClientConfig()
        config.obfuscatedStream = try r.bool("obfuscated")
        let maxFrame = try r.int("maxFrameSize", in: 16...Int64(StreamFraming.maxRemainingLength))
        config.maxFrameSize = maxFrame
        freshStore = try r.optionalBool("freshStore") ?? true
        var bugs: [BugSwitch] = []
        for (i, b) in try r.array("bugs").enumerated() {
            guard let s = b.stringValue, let sw = BugSwitch(rawValue: s) else {
                throw r.fail("bugs[\(i)]", .invalidField, "unknown bug switch (known: B1…B16)")
            }
            guard sw.side == .client else { throw r.fail("bugs[\(i)]", .invalidField, "\(sw) is not a client bug switch") }
            bugs.append(sw)
        }
        config.bugs = ClientBugs(bugs)
        if let cv = r.optionalValue("config") {
            var c = try FieldReader(cv, line: line, prefix: "config.", what: "config")
            if c.has("heartbeatInterval") { config.heartbeatInterval = try c.duration("heartbeatInterval") }
            if c.has("pingTimeout") { config.pingTimeout = try c.duration("pingTimeout") }
            if c.has("connackTimeout") { config.connackTimeout = try c.duration("connackTimeout") }
            if c.has("requestTimeout") { config.requestTimeout = try c.duration("requestTimeout") }
            if c.has("backgroundCloseAfter") { config.backgroundCloseAfter = try c.duration("backgroundCloseAfter") }
            if c.has("reconnectSchedule") {
                var schedule: [SimDuration] = []
                for (i, d) in try c.array("reconnectSchedule").enumerated() {
                    guard let s = d.stringValue, let v = try? SimDuration(parsing: s), v >= .zero else {
                        throw c.fail("reconnectSchedule[\(i)]", .invalidField, "expected a duration such as \"250ms\"")
                    }
                    schedule.append(v)
                }
                guard !schedule.isEmpty else { throw c.fail("reconnectSchedule", .invalidField, "must not be empty") }
                config.reconnectSchedule = schedule
            }
            if c.optionalValue("pollInterval") != nil { config.pollInterval = try c.duration("pollInterval") }
            if let b = try c.optionalBool("reconnectKickEnable") { config.reconnectKickEnable = b }
            if let b = try c.optionalBool("pingBeforeFirstPull") { config.pingBeforeFirstPull = b }
            if let b = try c.optionalBool("messageUIdDedup") { config.messageUIdDedup = b }
            if let b = try c.optionalBool("allowMultipleChatrooms") { config.allowMultipleChatrooms = b }
            if let n = try c.optionalInt32("chatroomPullCount") { config.chatroomPullCount = n }
            if let n = try c.optionalInt32("chatroomJoinMaxCount") { config.chatroomJoinMaxCount = n }
            try c.finish()
        }
        if let types = r.optionalValue("customTypes") {
            guard let list = types.arrayValue else { throw r.fail("customTypes", .invalidField, "expected an array") }
            for (i, t) in list.enumerated() {
                var tr = try FieldReader(t, line: line, prefix: "customTypes[\(i)].", what: "a custom type")
                let name = try tr.string("objectName")
                let p = try tr.int32("persistent")
                guard let persistent = MessagePersistent(rawValue: p) else {
                    throw tr.fail("persistent", .invalidField, "must be 0, 1, 3 or 16")
                }
                let priorityText = try tr.optionalString("priority") ?? "high"
                guard let priority = ChatroomPriority(rawValue: priorityText) else {
                    throw tr.fail("priority", .invalidField, "must be \"high\" or \"low\"")
                }
                let flags = MessageTypeFlags(persistent: persistent, offline: try tr.bool("offline"),
                                             push: try tr.optionalBool("push") ?? false, chatroomPriority: priority)
                try tr.finish()
                do { try config.registry.register(name, flags: flags) } catch {
                    throw tr.fail("objectName", .invalidField, "\(error)")
                }
            }
        }
        var options = IMStore.Options(dedupByMessageUId: config.messageUIdDedup, recallDecrementsUnread: true)
        if let sv = r.optionalValue("store") {
            var s = try FieldReader(sv, line: line, prefix: "store.", what: "store")
            if let b = try s.optionalBool("dedupByMessageUId") { options.dedupByMessageUId = b }
            if let b = try s.optionalBool("recallDecrementsUnread") { options.recallDecrementsUnread = b }
            try s.finish()
        }
        storeOptions = options
        source = try r.optionalString("source")
        imported = try r.optionalString("imported")
        self.config = config
        try r.finish()
    }

    public static func == (a: Self, b: Self) -> Bool { a.json.canonical == b.json.canonical }
}
