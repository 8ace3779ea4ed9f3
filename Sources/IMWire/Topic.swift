/// Every topic of wire-protocol §2. Case names are the wire strings (`Topic.s_ntf.rawValue == "s_ntf"`).
/// Frames keep the topic as a `String` (a peer may send one we do not know); `knownTopic` maps it.
public enum Topic: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    // Client PUBLISH, body UpStreamMessage → PUBACK (status topics: no PUBACK).
    case ppMsgP        // private
    case ppMsgN        // private, no push
    case ppMsgS        // private status: not stored, online only
    case pgMsgP        // group
    case pgMsgS        // group status
    case chatMsg       // chatroom
    case chatMsgS      // chatroom status
    case recallMsg     // recall (RC:RcCmd)
    // Server PUBLISH.
    case s_ntf         // NotifyMsg "go pull" (type 2 = chatroom chrmId, otherwise inbox)
    case s_msg         // DownStreamMessage, direct delivery (private/group)
    case s_cmd         // NotifyMsg (type 2 = chatroom KV changed → pullKV)
    // Client QUERY → QUERYACK.
    case pullMsg       // SyncRequestMsg → DownStreamMessages
    case joinChrm      // ChrmInput → ChrmOutput
    case joinChrmR     // rejoin after reconnect
    case exitChrm      // ChrmInput → ChrmOutput
    case chrmPull      // ChrmPullMsg → DownStreamMessages
    case setKV         // SetChrmKV → ChrmOutput
    case delKV         // DeleteChrmKV → ChrmOutput
    case pullKV        // QueryChrmKV → ChrmKVOutput
    case qryPMsg       // HistoryMsgInput → HistoryMsgOuput (private)
    case qryGMsg       // (group)
    case qryCHMsg      // (chatroom)
    case updRRTime     // SessionMsgReadInput (clear unread up to a time)

    public var description: String { rawValue }

    /// Parses a topic name. The synthesized parser hashes the name into a cached table (~500
    /// instructions, for every frame on both sides); each topic is at most 9 ASCII bytes, so its
    /// bytes and length packed into two words name it, compared against the 23 packed names.
    public init?(rawValue: String) {
        guard let key = Topic.packedName(rawValue) else { return nil }
        for entry in Topic.packedNames where entry.key == key {
            self = entry.topic
            return
        }
        return nil
    }

    private struct PackedName: Equatable {
        var low: UInt64
        /// Bytes 8–14, and the length in the top byte (so a trailing NUL is not a shorter name).
        var high: UInt64
    }

    private static func packedName(_ name: String) -> PackedName? {
        var name = name
        return name.withUTF8 { bytes -> PackedName? in
            guard bytes.count <= 15 else { return nil }
            var key = PackedName(low: 0, high: UInt64(bytes.count) << 56)
            for i in 0..<bytes.count {
                if i < 8 {
                    key.low |= UInt64(bytes[i]) << UInt64(8 * i)
                } else {
                    key.high |= UInt64(bytes[i]) << UInt64(8 * (i - 8))
                }
            }
            return key
        }
    }

    private static let packedNames: [(key: PackedName, topic: Topic)] = allCases.map { topic in
        guard let key = packedName(topic.rawValue) else { preconditionFailure("topic name over 15 bytes: \(topic.rawValue)") }
        return (key, topic)
    }

    /// What kind of frame carries the topic.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// Client PUBLISH of a message (also the topic of a server's sync echo).
        case send
        /// Server PUBLISH (`s_ntf`, `s_msg`, `s_cmd`).
        case server
        /// Client QUERY.
        case query
    }

    public var kind: Kind {
        switch self {
        case .ppMsgP, .ppMsgN, .ppMsgS, .pgMsgP, .pgMsgS, .chatMsg, .chatMsgS, .recallMsg: .send
        case .s_ntf, .s_msg, .s_cmd: .server
        default: .query
        }
    }

    /// Conversation type of a message send topic (nil for `recallMsg`, whose content names it, and
    /// for non-send topics).
    public var conversationType: ConversationType? {
        switch self {
        case .ppMsgP, .ppMsgN, .ppMsgS: .privateChat
        case .pgMsgP, .pgMsgS: .group
        case .chatMsg, .chatMsgS: .chatroom
        default: nil
        }
    }

    /// Status topics (`…S`): not stored, online recipients only, no PUBACK (§1.5).
    public var isStatus: Bool { self == .ppMsgS || self == .pgMsgS || self == .chatMsgS }

    /// Client PUBLISH on this topic expects a PUBACK.
    public var expectsPuback: Bool { kind == .send && !isStatus }

    /// The send topic for a message: `status` for STATUS-flagged types, `push: false` picks
    /// `ppMsgN` for private chats. nil for conversation types users cannot send to.
    public static func send(to type: ConversationType, status: Bool = false, push: Bool = true) -> Topic? {
        switch type {
        case .privateChat: status ? .ppMsgS : (push ? .ppMsgP : .ppMsgN)
        case .group: status ? .pgMsgS : .pgMsgP
        case .chatroom: status ? .chatMsgS : .chatMsg
        default: nil
        }
    }

    /// The cloud-history query topic of a conversation type.
    public static func history(of type: ConversationType) -> Topic? {
        switch type {
        case .privateChat: .qryPMsg
        case .group: .qryGMsg
        case .chatroom: .qryCHMsg
        default: nil
        }
    }

    /// Protobuf body of a PUBLISH or QUERY on this topic (a sync echo on a send topic carries the
    /// sender's UpStreamMessage too).
    public var requestBody: BodyKind? {
        switch self {
        case .ppMsgP, .ppMsgN, .ppMsgS, .pgMsgP, .pgMsgS, .chatMsg, .chatMsgS, .recallMsg: .upStreamMessage
        case .s_ntf, .s_cmd: .notifyMsg
        case .s_msg: .downStreamMessage
        case .pullMsg: .syncRequestMsg
        case .joinChrm, .joinChrmR, .exitChrm: .chrmInput
        case .chrmPull: .chrmPullMsg
        case .setKV: .setChrmKV
        case .delKV: .deleteChrmKV
        case .pullKV: .queryChrmKV
        case .qryPMsg, .qryGMsg, .qryCHMsg: .historyMsgInput
        case .updRRTime: .sessionMsgReadInput
        }
    }

    /// Protobuf body of the QUERYACK answering a QUERY on this topic (nil: none / empty).
    public var responseBody: BodyKind? {
        switch self {
        case .pullMsg, .chrmPull: .downStreamMessages
        case .joinChrm, .joinChrmR, .exitChrm, .setKV, .delKV: .chrmOutput
        case .pullKV: .chrmKVOutput
        case .qryPMsg, .qryGMsg, .qryCHMsg: .historyMsgOuput
        default: nil
        }
    }
}
