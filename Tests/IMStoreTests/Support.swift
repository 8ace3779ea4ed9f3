import CSQLite
import Foundation
import IMSimTestSupport
import IMWire
@testable import IMStore

// Shared fixtures for IMStoreTests.

let alice = ConversationKey(.privateChat, "alice")
let bob = ConversationKey(.privateChat, "bob")
let team = ConversationKey(.group, "team")
let room = ConversationKey(.chatroom, "room1")

func memoryStore(dedup: Bool = true, recallDecrements: Bool = true) throws -> IMStore {
    try IMStore.inMemory(options: .init(dedupByMessageUId: dedup, recallDecrementsUnread: recallDecrements))
}

/// A received message; counted and unread unless told otherwise.
func incoming(
    _ uid: String?, in conversation: ConversationKey = alice, at sentTime: Int64, from sender: String? = nil,
    persistent: MessagePersistent = .isCounted, mentioned: Bool = false, status: ReceivedStatus = .unread,
    direction: MessageDirection = .receive, text: String? = nil
) -> ReceivedMessage {
    ReceivedMessage(
        conversation: conversation, messageUId: uid, senderUserId: sender ?? conversation.targetId,
        direction: direction, objectName: "RC:TxtMsg",
        content: #"{"content":"\#(text ?? uid ?? "no-uid")"}"#, sentTime: sentTime, receivedTime: sentTime <= .max - 7 ? sentTime + 7 : sentTime,
        receivedStatus: status, flags: MessageFlags(persistent: persistent, mentioned: mentioned))
}

func outgoing(_ text: String, in conversation: ConversationKey = alice, at localTime: Int64, cuid: Int64? = nil) -> OutgoingMessage {
    OutgoingMessage(
        conversation: conversation, senderUserId: "me", objectName: "RC:TxtMsg",
        content: #"{"content":"\#(text)"}"#, clientUniqueId: cuid, localTime: localTime)
}

/// Stores `message` and returns its messageId.
@discardableResult
func store(_ s: IMStore, _ message: ReceivedMessage) throws -> Int64 {
    try s.storeReceived(message).messageId
}

/// Runs a one-column integer query.
func scalar(_ s: IMStore, _ sql: String) throws -> Int64 {
    let st = try s.connection.prepare(sql)
    _ = try st.step()
    return st.int64(0)
}

/// The conversation's unread count as the table's rows say it should be.
func unreadRows(_ s: IMStore, _ key: ConversationKey) throws -> Int {
    try s.snapshot(of: key).filter(\.isUnreadCounted).count
}

/// `SQLITE_CONSTRAINT_CHECK` (a macro Swift cannot import).
let sqliteConstraintCheck: Int32 = SQLITE_CONSTRAINT | (1 << 8)
