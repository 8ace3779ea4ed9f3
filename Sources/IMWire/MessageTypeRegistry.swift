/// Chatroom drop-policy priority of a message type (im-semantics §6): high by default.
public enum ChatroomPriority: String, Sendable, Hashable, Codable, CaseIterable {
    case high
    case low
}

/// What a message type's objectName decides (im-semantics §2).
public struct MessageTypeFlags: Sendable, Hashable, Codable {
    /// Stored / counted / STATUS.
    public var persistent: MessagePersistent
    /// Cached by the server for offline recipients (7 days); if not, online recipients only.
    public var offline: Bool
    /// Push notification to an offline recipient (only meaningful if `offline`).
    public var push: Bool
    /// Slot class in the chatroom drop policy.
    public var chatroomPriority: ChatroomPriority

    public init(persistent: MessagePersistent, offline: Bool, push: Bool, chatroomPriority: ChatroomPriority = .high) {
        self.persistent = persistent
        self.offline = offline
        self.push = push
        self.chatroomPriority = chatroomPriority
    }

    public var isPersisted: Bool { persistent.isStored }
    public var isCounted: Bool { persistent.isCounted }
    public var isStatus: Bool { persistent == .status }

    /// Visible messages: stored + counted, offline, push (RC:TxtMsg, RC:ImgMsg…).
    public static let normal = MessageTypeFlags(persistent: .isCounted, offline: true, push: true)
    /// Stored, not counted, offline, no push (notifications such as RC:InfoNtf, RC:RcNtf).
    public static let storedNotice = MessageTypeFlags(persistent: .isPersisted, offline: true, push: false)
    /// Not stored or counted but delivered offline, no push (commands: RC:RcCmd, receipts).
    public static let command = MessageTypeFlags(persistent: .none, offline: true, push: false)
    /// STATUS: not stored, dropped for offline recipients, no push (RC:TypSts).
    public static let status = MessageTypeFlags(persistent: .status, offline: false, push: false)
}

/// Message types by objectName with their flags. A value: each client/server model owns one; the
/// built-in `RC:` types are always present and custom types are added at run time with `register`.
public struct MessageTypeRegistry: Sendable, Hashable {
    /// The built-in types and their flags (the choices are explained in Docs/wire-format.md).
    public static let builtInTypes: [(objectName: String, flags: MessageTypeFlags)] = [
        ("RC:TxtMsg", .normal),
        ("RC:LBSMsg", .normal),
        ("RC:ImgMsg", .normal),
        ("RC:HQVCMsg", .normal),
        ("RC:FileMsg", .normal),
        ("RC:SightMsg", .normal),
        ("RC:GIFMsg", .normal),
        ("RC:RcCmd", .command),
        ("RC:RcNtf", .storedNotice),
        ("RC:ReadNtf", .command),
        ("RC:RRReqMsg", .command),
        ("RC:RRRspMsg", .command),
        ("RC:SRSMsg", .command),
        ("RC:InfoNtf", .storedNotice),
        ("RC:TypSts", .status),
        ("RC:chrmKVNotiMsg", MessageTypeFlags(persistent: .isPersisted, offline: false, push: false)),
    ]

    /// The reserved namespace of built-in types.
    public static let reservedPrefix = "RC:"

    private var types: [String: MessageTypeFlags]

    /// A registry holding the built-in types.
    public init() {
        var t: [String: MessageTypeFlags] = [:]
        for b in Self.builtInTypes { t[b.objectName] = b.flags }
        types = t
    }

    /// Registers (or re-registers with new flags) a custom type. Names in `RC:` and empty names
    /// are refused with `.reservedObjectName`.
    public mutating func register(_ objectName: String, flags: MessageTypeFlags) throws(WireError) {
        guard !objectName.isEmpty, !objectName.hasPrefix(Self.reservedPrefix) else {
            throw .reservedObjectName(objectName: objectName)
        }
        types[objectName] = flags
    }

    /// Flags of a registered type.
    public func flags(for objectName: String) -> MessageTypeFlags? { types[objectName] }

    public func isRegistered(_ objectName: String) -> Bool { types[objectName] != nil }

    /// The send-time check: throws `.unregisteredMessageType` (→ 34021) for a type never registered.
    /// Returns the type's flags.
    @discardableResult
    public func checkSendable(_ objectName: String) throws(WireError) -> MessageTypeFlags {
        guard let f = types[objectName] else { throw .unregisteredMessageType(objectName: objectName) }
        return f
    }

    /// All registered names, sorted (never Dictionary order).
    public var objectNames: [String] { types.keys.sorted() }

    /// Registered custom (non-`RC:`) names, sorted.
    public var customObjectNames: [String] { objectNames.filter { !$0.hasPrefix(Self.reservedPrefix) } }
}
