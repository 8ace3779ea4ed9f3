import IMWire
import SimKernel

/// One accepted message as the server keeps it: immutable, shared by every inbox, sendbox,
/// chatroom ring and cloud-history log that holds it (a class so that a 3000-member group message
/// is stored once; immutable so `ServerCore` keeps value semantics).
///
/// The DownStreamMessage a recipient gets is encoded **once** at accept time (`downBytes`) and
/// reused for every `s_msg` and every pull page; the rarer variants (the sender's own copy with
/// `direction = 1`, the "already received by another device" bit) are derived on demand.
final class MessageRecord: Sendable {
    let uid: String
    /// `generation << 48 | counter`: the accept order (= messageUId string order).
    let seq: UInt64
    /// The conversation as the sender sees it (private: the peer; system: `system:<systemSenderId>`).
    let conversation: ConversationKey
    let senderUserId: String
    /// nil for server-API messages.
    let senderDeviceId: String?
    let objectName: String
    let dataTime: Int64
    let flags: MessageTypeFlags
    let clientUniqueId: Int64
    /// False for `ppMsgN` sends and messages flagged "no notification".
    let pushAllowed: Bool
    /// The recipient's view (no `direction`), encoded.
    let downBytes: [UInt8]
    let contentLength: Int
    let contentHash: UInt64

    init(uid: String, seq: UInt64, conversation: ConversationKey, senderUserId: String, senderDeviceId: String?,
         objectName: String, dataTime: Int64, flags: MessageTypeFlags, clientUniqueId: Int64, pushAllowed: Bool,
         downBytes: [UInt8], contentLength: Int, contentHash: UInt64) {
        self.uid = uid
        self.seq = seq
        self.conversation = conversation
        self.senderUserId = senderUserId
        self.senderDeviceId = senderDeviceId
        self.objectName = objectName
        self.dataTime = dataTime
        self.flags = flags
        self.clientUniqueId = clientUniqueId
        self.pushAllowed = pushAllowed
        self.downBytes = downBytes
        self.contentLength = contentLength
        self.contentHash = contentHash
    }

    /// Order of inboxes, sendboxes, logs and pull pages: dataTime, then messageUId.
    @inline(__always) func precedes(_ other: MessageRecord) -> Bool {
        dataTime != other.dataTime ? dataTime < other.dataTime : seq < other.seq
    }

    /// The DownStreamMessage for one reader: `own` = the reader is the sender (direction 1 and
    /// `groupId` = the conversation target), `receivedElsewhere` = status bit 0x02.
    func encoded(own: Bool, receivedElsewhere: Bool) -> [UInt8] {
        if !own && !receivedElsewhere { return downBytes }
        guard var m = try? ProtoBody.decode(RMTPDownStreamMessage.self, from: downBytes) else { return downBytes }
        if own {
            m.direction = MessageDirection.send.rawValue
            m.groupID = conversation.targetId
        }
        if receivedElsewhere { m.status |= DownStreamStatus.receivedByOtherDevice.rawValue }
        return ProtoBody.reencode(m)
    }

    /// The same message with its content replaced (cloud history of a recalled message: `RC:RcNtf`).
    func replacedContent(objectName: String, content: [UInt8], own: Bool) -> [UInt8] {
        guard var m = try? ProtoBody.decode(RMTPDownStreamMessage.self, from: downBytes) else { return downBytes }
        m.classname = objectName
        m.contentBytes = content
        m.status = DownStreamStatus(persistent: .isPersisted).rawValue
        if own {
            m.direction = MessageDirection.send.rawValue
            m.groupID = conversation.targetId
        }
        return ProtoBody.reencode(m)
    }
}

/// The key of a conversation's server clock and cloud-history log: the same for both sides of a
/// private chat.
struct ConversationClockKey: Hashable, Sendable {
    var type: ConversationType
    var a: String
    var b: String

    /// Private: the unordered pair; group/chatroom: the target; system: the system sender.
    init(type: ConversationType, user: String, target: String) {
        self.type = type
        if type == .privateChat {
            (a, b) = user < target ? (user, target) : (target, user)
        } else {
            a = target
            b = ""
        }
    }
}

/// A conversation's server-side state: its dataTime clock and (cloud history) its stored messages
/// in (dataTime, messageUId) order.
struct ConversationLog: Sendable {
    var lastDataTime: Int64 = .min
    var messages: [MessageRecord] = []
}
