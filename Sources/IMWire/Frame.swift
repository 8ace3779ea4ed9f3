/// One RMTP frame (wire-protocol §1): fixed header flags plus the typed variable header of its type.
///
/// Bodies (PUBLISH, QUERY, QUERYACK) stay raw protobuf bytes; `decodeBody(_:)` / `init(…, message:)`
/// convert them. Encoding and decoding take a `WireDirection` because PUBLISH and PUBACK are laid out
/// differently each way; fields that exist only server→client are ignored (and decode as zero/empty)
/// client→server. Every frame `MessageFraming` or `StreamDecoder` returns re-encodes to exactly the
/// bytes it came from.
public enum Frame: Sendable, Hashable {
    case connect(Connect)
    case connack(Connack)
    case publish(Publish)
    case puback(Puback)
    case query(Query)
    case queryAck(QueryAck)
    case queryConfirm(QueryConfirm)
    /// Types 8–11 (subscribe family): decoded and kept raw, never used by the model.
    case subscribeFamily(Raw)
    case pingReq(FrameFlags = .none)
    case pingResp(FrameFlags = .none)
    case disconnect(Disconnect)

    public var type: FrameType {
        switch self {
        case .connect: .connect
        case .connack: .connack
        case .publish: .publish
        case .puback: .puback
        case .query: .query
        case .queryAck: .queryAck
        case .queryConfirm: .queryConfirm
        case .subscribeFamily(let r): r.type
        case .pingReq: .pingReq
        case .pingResp: .pingResp
        case .disconnect: .disconnect
        }
    }

    /// dup / qos / retain of byte0.
    public var flags: FrameFlags {
        switch self {
        case .connect(let f): f.flags
        case .connack(let f): f.flags
        case .publish(let f): f.flags
        case .puback(let f): f.flags
        case .query(let f): f.flags
        case .queryAck(let f): f.flags
        case .queryConfirm(let f): f.flags
        case .subscribeFamily(let f): f.flags
        case .pingReq(let f), .pingResp(let f): f
        case .disconnect(let f): f.flags
        }
    }

    /// The message id of frames that carry one (PUBLISH, PUBACK, QUERY, QUERYACK, QUERYCON).
    public var messageId: UInt16? {
        switch self {
        case .publish(let f): f.messageId
        case .puback(let f): f.messageId
        case .query(let f): f.messageId
        case .queryAck(let f): f.messageId
        case .queryConfirm(let f): f.messageId
        default: nil
        }
    }
}

extension Frame {
    /// CONNECT, client→server, stream framing only (web clients authenticate in the URL).
    ///
    /// Layout: protocolName str · protocolVersion u8 · connect flags u8 · keepAlive u16 ·
    /// clientId str · [appKey str] · [token str]. Connect flags (MQTT's layout, RMTP's meaning):
    /// 0x80 appKey present (MQTT "user name"), 0x40 token present ("password"), 0x20
    /// reconnectKickEnable, 0x04 reconnect, 0x02 clean session; the other bits (0x01, 0x08, 0x10) are
    /// reserved and must be 0. See Docs/wire-format.md and Docs/server.md §2.
    public struct Connect: Sendable, Hashable {
        public static let rcloudProtocolName = "RCloud"
        public static let rcloudProtocolVersion: UInt8 = 3
        static let appKeyBit: UInt8 = 0x80
        static let tokenBit: UInt8 = 0x40
        static let cleanSessionBit: UInt8 = 0x02
        /// IMSim's use of MQTT's "will flag" bit: this CONNECT is an automatic reconnect.
        static let reconnectBit: UInt8 = 0x04
        /// IMSim's use of MQTT's "will retain" bit: the app set `reconnectKickEnable`.
        static let reconnectKickEnableBit: UInt8 = 0x20
        static let reservedBits: UInt8 = ~(appKeyBit | tokenBit | cleanSessionBit | reconnectBit | reconnectKickEnableBit)

        public var flags: FrameFlags
        public var protocolName: String
        public var protocolVersion: UInt8
        public var cleanSession: Bool
        /// Seconds.
        public var keepAlive: UInt16
        /// The simulator uses `"<platform>:<deviceId>"`, e.g. `"mobile:alice-phone"`.
        public var clientId: String
        public var appKey: String?
        public var token: String?
        /// Flag 0x04: an automatic reconnect by the SDK (not the first connect after `connect(token)`).
        /// The server uses it to recognise a late reconnect of a stale device (Docs/server.md §2).
        public var isReconnect: Bool
        /// Flag 0x20: the app set `reconnectKickEnable` — on a reconnect, give up (CONNACK
        /// `Connack.otherDeviceLoggedInStatusCode`, client error 31023) rather than kick another
        /// device of the same platform class.
        public var reconnectKickEnable: Bool

        public init(flags: FrameFlags = .none, protocolName: String = rcloudProtocolName,
                    protocolVersion: UInt8 = rcloudProtocolVersion, cleanSession: Bool = true,
                    keepAlive: UInt16, clientId: String, appKey: String?, token: String?,
                    isReconnect: Bool = false, reconnectKickEnable: Bool = false) {
            self.flags = flags
            self.protocolName = protocolName
            self.protocolVersion = protocolVersion
            self.cleanSession = cleanSession
            self.keepAlive = keepAlive
            self.clientId = clientId
            self.appKey = appKey
            self.token = token
            self.isReconnect = isReconnect
            self.reconnectKickEnable = reconnectKickEnable
        }

        /// The connect-flags byte this value encodes to.
        public var connectFlags: UInt8 {
            (appKey != nil ? Self.appKeyBit : 0) | (token != nil ? Self.tokenBit : 0)
                | (cleanSession ? Self.cleanSessionBit : 0) | (isReconnect ? Self.reconnectBit : 0)
                | (reconnectKickEnable ? Self.reconnectKickEnableBit : 0)
        }

        /// `"<platform>:<deviceId>"`.
        public static func clientId(platform: Platform, deviceId: String) -> String {
            "\(platform.rawValue):\(deviceId)"
        }

        /// Splits a simulator client id back into platform and device id.
        public var platformAndDevice: (platform: Platform, deviceId: String)? {
            guard let colon = clientId.firstIndex(of: ":"),
                  let p = Platform(rawValue: String(clientId[..<colon])) else { return nil }
            return (p, String(clientId[clientId.index(after: colon)...]))
        }
    }

    /// CONNACK, server→client: reserved u8 · status u8 · [userId str · sessionId str · timestamp i64 ms].
    public struct Connack: Sendable, Hashable {
        /// The optional trailer of an accepted connection.
        public struct Session: Sendable, Hashable {
            public var userId: String
            public var sessionId: String
            /// Server time in ms; messages older than this are flagged `offline` (§4).
            public var timestamp: Int64
            public init(userId: String, sessionId: String, timestamp: Int64) {
                self.userId = userId
                self.sessionId = sessionId
                self.timestamp = timestamp
            }
        }

        public var flags: FrameFlags
        public var reserved: UInt8
        /// The raw status byte (unknown values are kept; see `status`).
        public var statusCode: UInt8
        public var session: Session?

        public init(flags: FrameFlags = .none, reserved: UInt8 = 0, statusCode: UInt8, session: Session? = nil) {
            self.flags = flags
            self.reserved = reserved
            self.statusCode = statusCode
            self.session = session
        }

        public init(flags: FrameFlags = .none, status: ConnackStatus, session: Session? = nil) {
            self.init(flags: flags, statusCode: status.rawValue, session: session)
        }

        /// The status as a known value, nil for a code the spec does not list.
        public var status: ConnackStatus? { ConnackStatus(rawValue: statusCode) }

        /// IMSim's CONNACK status for a reconnect refused because another device of the same
        /// platform class is online (reconnectKickEnable, or a stale device with B12 off); the
        /// client reports 31023. The spec lists no code for it (Docs/server.md §2).
        public static let otherDeviceLoggedInStatusCode: UInt8 = 23
    }

    /// PUBLISH. C→S: topic str · targetId str · msgId u16 · body.
    /// S→C: date u32 (s) · topic str · targetId str · msgId u16 · body.
    public struct Publish: Sendable, Hashable {
        public var flags: FrameFlags
        /// Server time in seconds; server→client only (0 client→server).
        public var date: UInt32
        public var topic: String
        public var targetId: String
        public var messageId: UInt16
        /// Protobuf bytes: UpStreamMessage (send topics, sync echoes), DownStreamMessage (`s_msg`),
        /// NotifyMsg (`s_ntf`, `s_cmd`).
        public var body: [UInt8]

        public init(flags: FrameFlags = .atLeastOnce, date: UInt32 = 0, topic: String, targetId: String,
                    messageId: UInt16, body: [UInt8]) {
            self.flags = flags
            self.date = date
            self.topic = topic
            self.targetId = targetId
            self.messageId = messageId
            self.body = body
        }

        public init(flags: FrameFlags = .atLeastOnce, date: UInt32 = 0, topic: Topic, targetId: String,
                    messageId: UInt16, body: [UInt8]) {
            self.init(flags: flags, date: date, topic: topic.rawValue, targetId: targetId, messageId: messageId, body: body)
        }

        /// The topic as a known `Topic`.
        public var knownTopic: Topic? { Topic(rawValue: topic) }
        /// Server→client with the dup bit: a message this user sent from another device (§1.1).
        public var isSyncEcho: Bool { flags.dup }
    }

    /// PUBACK. C→S: msgId u16. S→C: msgId u16 · date u32 s · status u16 · millis u16 · messageUId str.
    public struct Puback: Sendable, Hashable {
        public var flags: FrameFlags
        public var messageId: UInt16
        /// Server→client only (zero/empty client→server).
        public var date: UInt32
        /// 0 = accepted, otherwise an error code surfaced to the app as is (20604, 405, 30016…).
        public var status: UInt16
        public var millis: UInt16
        public var messageUId: String

        public init(flags: FrameFlags = .none, messageId: UInt16, date: UInt32 = 0, status: UInt16 = 0,
                    millis: UInt16 = 0, messageUId: String = "") {
            self.flags = flags
            self.messageId = messageId
            self.date = date
            self.status = status
            self.millis = millis
            self.messageUId = messageUId
        }

        /// Server→client PUBACK for a sentTime in ms (`date = sentTime / 1000`, `millis = sentTime % 1000`).
        public init(flags: FrameFlags = .none, messageId: UInt16, sentTime: Int64, status: UInt16 = 0, messageUId: String) {
            let t = max(0, sentTime)
            self.init(flags: flags, messageId: messageId, date: UInt32(truncatingIfNeeded: t / 1000), status: status,
                      millis: UInt16(t % 1000), messageUId: messageUId)
        }

        /// `date * 1000 + millis`: the message's sentTime in server ms (§1.4).
        public var sentTime: Int64 { Int64(date) * 1000 + Int64(millis) }
    }

    /// QUERY, client→server: topic str · targetId str · msgId u16 · body.
    public struct Query: Sendable, Hashable {
        public var flags: FrameFlags
        public var topic: String
        public var targetId: String
        public var messageId: UInt16
        public var body: [UInt8]

        public init(flags: FrameFlags = .atLeastOnce, topic: String, targetId: String, messageId: UInt16, body: [UInt8]) {
            self.flags = flags
            self.topic = topic
            self.targetId = targetId
            self.messageId = messageId
            self.body = body
        }

        public init(flags: FrameFlags = .atLeastOnce, topic: Topic, targetId: String, messageId: UInt16, body: [UInt8]) {
            self.init(flags: flags, topic: topic.rawValue, targetId: targetId, messageId: messageId, body: body)
        }

        public var knownTopic: Topic? { Topic(rawValue: topic) }
    }

    /// QUERYACK, server→client: msgId u16 · date u32 s · status u16 · body (may be empty).
    /// With qos ≠ 0 the client must answer QUERYCON (§1.5).
    public struct QueryAck: Sendable, Hashable {
        public var flags: FrameFlags
        public var messageId: UInt16
        public var date: UInt32
        public var status: UInt16
        public var body: [UInt8]

        public init(flags: FrameFlags = .atLeastOnce, messageId: UInt16, date: UInt32, status: UInt16 = 0, body: [UInt8] = []) {
            self.flags = flags
            self.messageId = messageId
            self.date = date
            self.status = status
            self.body = body
        }
    }

    /// QUERYCON, client→server: msgId u16.
    public struct QueryConfirm: Sendable, Hashable {
        public var flags: FrameFlags
        public var messageId: UInt16
        public init(flags: FrameFlags = .none, messageId: UInt16) {
            self.flags = flags
            self.messageId = messageId
        }
    }

    /// DISCONNECT, server→client: reserved u8 · status u8 (1 kicked by another device, 2 blocked).
    public struct Disconnect: Sendable, Hashable {
        public var flags: FrameFlags
        public var reserved: UInt8
        public var statusCode: UInt8

        public init(flags: FrameFlags = .none, reserved: UInt8 = 0, statusCode: UInt8) {
            self.flags = flags
            self.reserved = reserved
            self.statusCode = statusCode
        }

        public init(flags: FrameFlags = .none, status: DisconnectStatus) {
            self.init(flags: flags, statusCode: status.rawValue)
        }

        public var status: DisconnectStatus? { DisconnectStatus(rawValue: statusCode) }
    }

    /// A frame kept as raw payload bytes (types 8–11).
    public struct Raw: Sendable, Hashable {
        public var type: FrameType
        public var flags: FrameFlags
        public var payload: [UInt8]
        public init(type: FrameType, flags: FrameFlags = .none, payload: [UInt8]) {
            self.type = type
            self.flags = flags
            self.payload = payload
        }
    }
}
