import IMClient
import IMWire

/// A message the server sent this device, as it appeared on the wire.
public struct WireMessage: Sendable {
    public enum Via: String, Sendable {
        /// `s_msg` direct delivery.
        case direct
        /// An item of a `pullMsg` page.
        case pull
        /// An item of a `chrmPull` page.
        case chatroomPull
        /// A sync echo (server PUBLISH with the dup bit) completed by its PUBACK: the user's own
        /// message sent from another device.
        case syncEcho
        /// An item of a cloud-history answer (never stored by the client).
        case history
    }
    public var messageUId: String?
    /// Server ms (the message's sentTime everywhere).
    public var dataTime: Int64
    /// The conversation as this device files it.
    public var conversation: ConversationKey
    public var senderUserId: String
    public var direction: MessageDirection
    public var objectName: String
    public var content: [UInt8]
    /// The wire status word (0x10 persisted, 0x20 counted, …).
    public var status: Int64
    public var clientUniqueId: Int64?
    public var via: Via
    /// Device time of the read that completed it, and its capture line.
    public var t: Int64
    public var line: Int
}

/// A message this device sent (client PUBLISH) and what the server answered.
public struct WireSend: Sendable {
    public var topic: String
    public var targetId: String
    public var objectName: String
    public var content: [UInt8]
    public var clientUniqueId: Int64?
    public var t: Int64
    public var line: Int
    /// From the server's PUBACK.
    public var messageUId: String?
    public var sentTime: Int64?
    public var status: UInt16?
    public var ackT: Int64?
}

/// Decodes the wire traffic of a capture (both directions of the current connection) and keeps
/// what the server side said: the messages it delivered with their dataTimes, the answers to
/// this device's sends, CONNACK timestamps. Replay takes the server's times from here (a replay
/// has no world); lift rebuilds the server side from it. Frames that do not decode are skipped
/// (the reader already refused them).
struct FrameTap {
    let userId: String
    let maxFrameSize: Int
    let obfuscated: Bool
    private var inDecoder: StreamDecoder?
    private var outDecoder: StreamDecoder?
    /// QUERY topic by client msgId (to decode QUERYACK bodies), per connection.
    private var queryTopics: [UInt16: String] = [:]
    /// Client PUBLISHes waiting for their PUBACK, by msgId (index into `sends`).
    private var pendingSends: [UInt16: Int] = [:]
    /// Server sync echoes waiting for their PUBACK, by server msgId.
    private var pendingEchoes: [UInt16: (Frame.Publish, RMTPUpStreamMessage, Int64, Int)] = [:]

    private(set) var messages: [WireMessage] = []
    private(set) var sends: [WireSend] = []
    /// (device t, server timestamp) of every accepted CONNACK.
    private(set) var connacks: [(t: Int64, serverMs: Int64)] = []
    /// messageUId → server time, from deliveries and PUBACKs.
    private(set) var serverTimes: [String: Int64] = [:]

    init(userId: String, maxFrameSize: Int, obfuscated: Bool) {
        self.userId = userId
        self.maxFrameSize = maxFrameSize
        self.obfuscated = obfuscated
    }

    /// A new connection: fresh decoders, msgIds restart.
    mutating func open() {
        inDecoder = StreamDecoder(direction: .serverToClient, maxFrameSize: maxFrameSize, obfuscated: obfuscated)
        outDecoder = StreamDecoder(direction: .clientToServer, maxFrameSize: maxFrameSize, obfuscated: obfuscated)
        queryTopics = [:]
        pendingSends = [:]
        pendingEchoes = [:]
    }

    mutating func close() {
        inDecoder = nil
        outDecoder = nil
    }

    /// Client bytes; returns their frames.
    @discardableResult
    mutating func outbound(_ bytes: [UInt8], t: Int64, line: Int) -> [Frame] {
        guard outDecoder != nil, let frames = try? outDecoder!.feed(bytes) else { return [] }
        for f in frames {
            switch f {
            case .query(let q):
                queryTopics[q.messageId] = q.topic
            case .publish(let p) where p.flags.qos != .atMostOnce:
                if let up = try? p.decodeBody(RMTPUpStreamMessage.self) {
                    sends.append(WireSend(topic: p.topic, targetId: p.targetId, objectName: up.classname, content: up.contentBytes,
                                          clientUniqueId: up.hasClientUniqueID ? up.clientUniqueID : nil, t: t, line: line))
                    pendingSends[p.messageId] = sends.count - 1
                }
            case .publish(let p):
                // qos 0 (status messages): no PUBACK will come.
                if let up = try? p.decodeBody(RMTPUpStreamMessage.self) {
                    sends.append(WireSend(topic: p.topic, targetId: p.targetId, objectName: up.classname, content: up.contentBytes,
                                          clientUniqueId: up.hasClientUniqueID ? up.clientUniqueID : nil, t: t, line: line))
                }
            default:
                break
            }
        }
        return frames
    }

    /// Server bytes; returns their frames.
    @discardableResult
    mutating func inbound(_ bytes: [UInt8], t: Int64, line: Int) -> [Frame] {
        guard inDecoder != nil, let frames = try? inDecoder!.feed(bytes) else { return [] }
        for f in frames {
            switch f {
            case .connack(let c):
                if c.statusCode == 0, let s = c.session { connacks.append((t, s.timestamp)) }
            case .publish(let p) where p.isSyncEcho:
                if let up = try? p.decodeBody(RMTPUpStreamMessage.self) { pendingEchoes[p.messageId] = (p, up, t, line) }
            case .publish(let p) where p.topic == Topic.s_msg.rawValue:
                if let d = try? p.decodeBody(RMTPDownStreamMessage.self) { add(d, .direct, t, line) }
            case .puback(let a):
                if let (p, up, _, _) = pendingEchoes.removeValue(forKey: a.messageId) {
                    guard a.status == 0, !a.messageUId.isEmpty else { continue }
                    let type = Topic(rawValue: p.topic)?.conversationType ?? .privateChat
                    let m = WireMessage(messageUId: a.messageUId, dataTime: a.sentTime,
                                        conversation: ConversationKey(type, p.targetId), senderUserId: userId, direction: .send,
                                        objectName: up.classname, content: up.contentBytes,
                                        status: Int64(UpStreamFlags(rawValue: up.sessionID).rawValue & 0x7) << 4,
                                        clientUniqueId: up.hasClientUniqueID ? up.clientUniqueID : nil, via: .syncEcho, t: t, line: line)
                    messages.append(m)
                    serverTimes[a.messageUId] = a.sentTime
                } else if let i = pendingSends.removeValue(forKey: a.messageId) {
                    sends[i].status = a.status
                    sends[i].ackT = t
                    if a.status == 0, !a.messageUId.isEmpty {
                        sends[i].messageUId = a.messageUId
                        sends[i].sentTime = a.sentTime
                        serverTimes[a.messageUId] = a.sentTime
                    }
                }
            case .queryAck(let q):
                guard q.status == 0, let topic = queryTopics[q.messageId] else { continue }
                switch Topic(rawValue: topic) {
                case .pullMsg?:
                    if let page = try? q.decodeBody(RMTPDownStreamMessages.self) { for d in page.list { add(d, .pull, t, line) } }
                case .chrmPull?:
                    if let page = try? q.decodeBody(RMTPDownStreamMessages.self) { for d in page.list { add(d, .chatroomPull, t, line) } }
                case .qryPMsg?, .qryGMsg?, .qryCHMsg?:
                    if let page = try? q.decodeBody(RMTPHistoryMsgOuput.self) { for d in page.list { add(d, .history, t, line) } }
                default:
                    break
                }
            default:
                break
            }
        }
        return frames
    }

    private mutating func add(_ d: RMTPDownStreamMessage, _ via: WireMessage.Via, _ t: Int64, _ line: Int) {
        let direction: MessageDirection = d.direction == MessageDirection.send.rawValue ? .send : .receive
        let type = d.conversationType
        let conversation: ConversationKey = switch (direction, type) {
        case (.send, _), (_, .group), (_, .chatroom), (_, .discussion):
            ConversationKey(type, d.groupID.isEmpty ? d.fromUserID : d.groupID)
        default:
            ConversationKey(type, d.fromUserID)
        }
        let uid = d.msgID.isEmpty ? nil : d.msgID
        messages.append(WireMessage(messageUId: uid, dataTime: d.dataTime, conversation: conversation, senderUserId: d.fromUserID,
                                    direction: direction, objectName: d.classname, content: d.contentBytes, status: d.status,
                                    clientUniqueId: d.hasClientUniqueID && d.clientUniqueID != 0 ? d.clientUniqueID : nil,
                                    via: via, t: t, line: line))
        if let uid, via != .history { serverTimes[uid] = d.dataTime }
    }
}
