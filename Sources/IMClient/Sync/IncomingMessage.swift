#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import IMStore
import IMWire

/// A message from the server (direct delivery, pull page item, chatroom pull item, or a sync
/// echo completed by its PUBACK), as the receive pipeline sees it.
struct IncomingMessage {
    var down: RMTPDownStreamMessage
    var conversation: ConversationKey
    var direction: MessageDirection

    init(_ d: consuming RMTPDownStreamMessage) {
        let direction: MessageDirection = d.direction == MessageDirection.send.rawValue ? .send : .receive
        self.direction = direction
        conversation = Self.conversation(of: d, direction: direction)
        // Stored last, moved: stored first it was copied for the reads above.
        down = d
    }

    /// Received private/system messages are keyed by their sender; group and chatroom messages,
    /// and one's own messages (`groupId` = the target), by `groupId`.
    static func conversation(of d: RMTPDownStreamMessage, direction: MessageDirection) -> ConversationKey {
        let type = d.conversationType
        switch (direction, type) {
        case (.send, _), (_, .group), (_, .chatroom), (_, .discussion):
            return ConversationKey(type, d.groupID.isEmpty ? d.fromUserID : d.groupID)
        default:
            return ConversationKey(type, d.fromUserID)
        }
    }

    var messageUId: String? { Self.messageUId(msgID: down.msgID) }
    var dataTime: Int64 { down.dataTime }
    var objectName: String { down.classname }
    var clientUniqueId: Int64? { Self.clientUniqueId(has: down.hasClientUniqueID, down.clientUniqueID) }

    /// The wire's empty msgId means none. (Rules over the fields, so that a message read in
    /// place, `ReceiveKind.received(at:)`, applies them without copying the message.)
    static func messageUId(msgID: String) -> String? { msgID.isEmpty ? nil : msgID }
    /// A clientUniqueId of 0 means none.
    static func clientUniqueId(has: Bool, _ value: Int64) -> Int64? { has && value != 0 ? value : nil }
}

/// What the receive pipeline does with a message (im-semantics §2, §7).
enum ReceiveKind {
    /// Persisted: stored (flags from the wire status word), then notified.
    case stored(MessageFlags)
    /// Not persisted (STATUS or NONE types): notified, never stored.
    case transient
    /// A command the SDK interprets instead of showing it.
    case command(Command)

    enum Command {
        case recall(RecallCommandContent)
        case readReceipt(ReadNotificationContent)
        case syncReadStatus(SyncReadStatusContent)
        /// A command the model does not interpret (group receipts), or one with bad content.
        case ignored(String)
    }

    /// Produces a `received` callback.
    var notifies: Bool {
        if case .command = self { return false }
        return true
    }

    /// Classifies by objectName (commands) and the wire status word (persisted / counted /
    /// mentioned). Chatroom messages are never counted: the SDK keeps no unread for rooms.
    static func of(_ m: IncomingMessage) -> ReceiveKind { withUnsafePointer(to: m) { of(at: $0) } }

    /// `of` for a message read where it lies (a page's array): a message passed by value from
    /// there was copied for the call and destroyed after it (62k per hour each way).
    static func of(at p: UnsafePointer<IncomingMessage>) -> ReceiveKind {
        switch p.pointee.down.classname {
        case RecallCommandContent.objectName:
            if case .recallCommand(let c)? = try? MessageContent.decode(objectName: p.pointee.down.classname, bytes: p.pointee.down.contentBytes) {
                return .command(.recall(c))
            }
            return .command(.ignored("malformed RC:RcCmd"))
        case ReadNotificationContent.objectName:
            if case .readNotification(let c)? = try? MessageContent.decode(objectName: p.pointee.down.classname, bytes: p.pointee.down.contentBytes) {
                return .command(.readReceipt(c))
            }
            return .command(.ignored("malformed RC:ReadNtf"))
        case SyncReadStatusContent.objectName:
            if case .syncReadStatus(let c)? = try? MessageContent.decode(objectName: p.pointee.down.classname, bytes: p.pointee.down.contentBytes) {
                return .command(.syncReadStatus(c))
            }
            return .command(.ignored("malformed RC:SRSMsg"))
        case "RC:RRReqMsg", "RC:RRRspMsg":
            return .command(.ignored("group receipts are not modelled"))
        default:
            break
        }
        let status = p.pointee.down.statusFlags
        guard status.contains(.persisted) else { return .transient }
        var flags: MessageFlags = [.persisted]
        if status.contains(.counted), p.pointee.conversation.type != .chatroom { flags.insert(.counted) }
        if status.contains(.mentioned) { flags.insert(.mentioned) }
        if status.contains(.noNotification) { flags.insert(.noNotification) }
        return .stored(flags)
    }

    /// The row to store for `m`.
    static func received(_ m: IncomingMessage, flags: MessageFlags, localTime: Int64) -> ReceivedMessage {
        withUnsafePointer(to: m) { received(at: $0, flags: flags, localTime: localTime) }
    }

    /// `received` for a message read where it lies (see `of(at:)`).
    static func received(at p: UnsafePointer<IncomingMessage>, flags: MessageFlags, localTime: Int64) -> ReceivedMessage {
        var status: ReceivedStatus = .unread
        if p.pointee.down.statusFlags.contains(.receivedByOtherDevice) { status.insert(.retrieved) }
        return ReceivedMessage(
            conversation: p.pointee.conversation, messageUId: IncomingMessage.messageUId(msgID: p.pointee.down.msgID),
            senderUserId: p.pointee.down.fromUserID, direction: p.pointee.direction, objectName: p.pointee.down.classname,
            content: String(decoding: p.pointee.down.content, as: UTF8.self),
            sentTime: p.pointee.down.dataTime, receivedTime: localTime, sentStatus: .sent, receivedStatus: status,
            flags: flags,
            clientUniqueId: IncomingMessage.clientUniqueId(has: p.pointee.down.hasClientUniqueID, p.pointee.down.clientUniqueID))
    }

    /// The row as the app sees it after the store assigned `messageId` (0: not stored).
    static func row(_ r: ReceivedMessage, messageId: Int64) -> StoredMessage {
        StoredMessage(
            messageId: messageId, messageUId: r.messageUId, conversation: r.conversation, senderUserId: r.senderUserId,
            direction: r.direction, objectName: r.objectName, content: r.content, extra: r.extra,
            sentTime: r.sentTime != 0 ? r.sentTime : r.receivedTime, receivedTime: r.receivedTime,
            sentStatus: r.sentStatus, receivedStatus: r.receivedStatus, flags: r.flags, clientUniqueId: r.clientUniqueId)
    }
}
