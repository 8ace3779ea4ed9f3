import IMStore
import IMWire

// Store writes a storage fault (I/O error, full disk) left undone although the server side of
// the operation already happened (issue 28, Docs/store.md). The app is told the outcome only
// once the row says so; each is retried at every input, and on the `storeRetry` timer while the
// app is quiet, until it commits. An app kill drops
// them: the next start finds the rows as they are (a SENDING row is completed by its pulled
// copy or a resend; a room's rows are removed by the start-up cleanup).

/// PUBACK status 0 whose `markSent` failed: the message is on the server, the row says SENDING.
struct OwedSentMark: Sendable, Hashable {
    var send: OutgoingSend
    var messageUId: String
    /// The time the row gets (the server's, or B4's device time).
    var sentTime: Int64
    /// The PUBACK's server time (the sendbox cursor's unit).
    var serverTime: Int64
}

/// The app cleared a conversation's unread up to a time; the store's update failed.
struct OwedClearUnread: Sendable, Hashable {
    var conversation: ConversationKey
    var upTo: Int64
}

/// A room left (quit, kicked, join refused, disconnect) whose local rows could not be removed.
struct OwedRoomCleanup: Sendable, Hashable {
    var roomId: String
    /// `chatroomQuit` is owed to the app once the rows are gone.
    var reportQuit: Bool
}

extension ClientCore {
    var hasOwedStoreWork: Bool { !owedSentMarks.isEmpty || !owedRoomCleanups.isEmpty || !owedClearUnreads.isEmpty }

    /// Keeps the `storeRetry` timer armed exactly while a write is owed.
    mutating func armStoreRetry() {
        // Runs after every input: one test of the owed lists, nothing more when armed as it should be.
        let owed = hasOwedStoreWork
        guard owed != storeRetryArmed else { return }
        storeRetryArmed = owed
        if owed { out.setTimer(.storeRetry, after: config.storeRetryInterval) } else { out.cancelTimer(.storeRetry) }
    }

    /// Tries every owed write again; what commits is reported now, the rest stays owed (quietly:
    /// the first failure was noted).
    mutating func retryOwedStoreWork() {
        let marks = owedSentMarks
        owedSentMarks = []
        for m in marks {
            do {
                let u = try store.markSent(messageId: m.send.messageId, messageUId: m.messageUId, sentTime: m.sentTime)
                unsentOwnRows[m.send.clientUniqueId] = nil
                // Not updated: a pulled own copy completed the row first and reported it.
                guard u.updated else { continue }
                out.note(.changed(conversation: m.send.conversation, messageIds: [m.send.messageId],
                                  what: "SENT \(m.messageUId) at \(m.sentTime) (retried after a store failure)"))
                out.callback(.sendResult(messageId: m.send.messageId, messageUId: m.messageUId, sentTime: m.sentTime, error: nil))
                if sync.isInSync, m.send.conversation.type != .chatroom { moveSendbox(to: m.serverTime, reason: "own send recorded") }
            } catch {
                owedSentMarks.append(m)
            }
        }
        let clears = owedClearUnreads
        owedClearUnreads = []
        for c in clears {
            do {
                let r = try store.clearUnread(in: c.conversation, upTo: c.upTo)
                out.note(.changed(conversation: c.conversation, messageIds: r.markedReadMessageIds,
                                  what: "unread cleared up to \(c.upTo) (retried after a store failure): \(r.conversation?.unreadCount ?? 0) left"))
            } catch {
                owedClearUnreads.append(c)
            }
        }
        let rooms = owedRoomCleanups
        owedRoomCleanups = []
        for r in rooms {
            clearRoomLocally(r.roomId, operation: "", reportQuit: r.reportQuit, retry: true) {
                "local rows of a room left earlier removed after a store failure (\($0.deletedMessageCount) messages, \($0.removedKVCount) KV)"
            }
        }
    }

    /// Removes a room's local state (messages, conversation row, KV cache, cursor, membership),
    /// notes `chatroomState(joined: false)`, then tells the app `chatroomQuit` when `reportQuit`.
    /// On a store failure the removal is owed, and so is the callback: the app is told the room
    /// is quit only once its rows are gone. Returns whether it committed.
    @discardableResult
    mutating func clearRoomLocally(_ roomId: String, operation: String, reportQuit: Bool, retry: Bool = false,
                                   describe: ((ChatroomQuitResult) -> String)? = nil) -> Bool {
        var done = true
        do {
            let r = try store.quitChatroom(roomId)
            if let describe { out.note(.changed(conversation: ConversationKey(.chatroom, roomId), messageIds: [], what: describe(r))) }
        } catch {
            done = false
            if !retry { storeError(operation, error) }
            if let i = owedRoomCleanups.firstIndex(where: { $0.roomId == roomId }) {
                owedRoomCleanups[i].reportQuit = owedRoomCleanups[i].reportQuit || reportQuit
            } else {
                owedRoomCleanups.append(OwedRoomCleanup(roomId: roomId, reportQuit: reportQuit))
            }
        }
        if !retry { out.note(.chatroomState(roomId: roomId, joined: false)) }
        if done, reportQuit { out.callback(.chatroomQuit(roomId: roomId)) }
        return done
    }

    /// A room whose local rows are still owed a removal cannot be joined (its old rows would
    /// mix with the join pull's).
    func roomCleanupOwed(_ roomId: String) -> Bool { owedRoomCleanups.contains { $0.roomId == roomId } }
}
