import IMStore
import IMWire

// Store writes a storage fault (I/O error, full disk) left undone although the server side of
// the operation already happened (issue 28, Docs/store.md). A send's outcome is told only once
// the row says so; a left room is told at once and its rows hidden from the app until they are
// gone. Each is retried at every input, and on the `storeRetry` timer while the
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
    /// The conversation's newest messageId when the app asked: a row stored later is one the app
    /// had not read (`Int64.max`: unknown, the read failed too).
    var throughMessageId: Int64

    func covers(messageId: Int64, sentTime: Int64) -> Bool { sentTime <= upTo && messageId <= throughMessageId }
}

/// A room left (quit, kicked, join refused, disconnect, a previous process's) whose local rows
/// could not be removed. The app was told at once (`chatroomQuit`, `chatroomKicked`, …): its
/// reads hide the room's rows up to `upTo` until the retry removes them.
struct OwedRoomCleanup: Sendable, Hashable {
    var roomId: String
    /// The room's greatest messageId when the removal failed: the rows it covers are the room's
    /// old ones; a row stored after it (the app's send to the room after the quit, told to the
    /// app) is spared. `.max`: the bound could not be read — every row.
    var upTo: Int64
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
                ownSendRecorded(in: m.send.conversation, at: m.serverTime, reason: "own send recorded")
            } catch {
                owedSentMarks.append(m)
            }
        }
        let clears = owedClearUnreads
        owedClearUnreads = []
        for c in clears {
            do {
                let r = try store.clearUnread(in: c.conversation, upTo: c.upTo, throughMessageId: c.throughMessageId)
                out.note(.changed(conversation: c.conversation, messageIds: r.markedReadMessageIds,
                                  what: "unread cleared up to \(c.upTo) (retried after a store failure): \(r.conversation?.unreadCount ?? 0) left"))
            } catch {
                owedClearUnreads.append(c)
            }
        }
        let rooms = owedRoomCleanups
        owedRoomCleanups = []
        for r in rooms {
            do {
                let q = try store.quitChatroom(r.roomId, upTo: r.upTo)
                // No callback: the app was told when it left.
                out.note(.changed(conversation: ConversationKey(.chatroom, r.roomId), messageIds: [],
                                  what: "local rows of a room left earlier removed after a store failure (\(q.deletedMessageCount) messages, \(q.removedKVCount) KV)"))
            } catch {
                owedRoomCleanups.append(r)
            }
        }
    }

    /// Removes a room's local state (messages, conversation row, KV cache, cursor, membership),
    /// notes `chatroomState(joined: false)`, then tells the app `chatroomQuit` when `reportQuit`.
    /// On a store failure the removal is owed (and the room's rows hidden from the app until
    /// then), but the app is told at once, as a kick is: an app waiting on the disk to learn it
    /// left saw no rejoin after its next connect and did not join again (everyday-storage
    /// --swarm seed 9039: two I/O error windows back to back outlasted the rejoin grace).
    /// Returns whether it committed.
    @discardableResult
    mutating func clearRoomLocally(_ roomId: String, operation: String, reportQuit: Bool,
                                   describe: ((ChatroomQuitResult) -> String)? = nil) -> Bool {
        var done = true
        do {
            let r = try store.quitChatroom(roomId)
            if let describe { out.note(.changed(conversation: ConversationKey(.chatroom, roomId), messageIds: [], what: describe(r))) }
            // Every row went, also those an earlier removal still owed spared.
            if !owedRoomCleanups.isEmpty { owedRoomCleanups.removeAll { $0.roomId == roomId } }
        } catch {
            done = false
            storeError(operation, error)
            oweRoomCleanup(roomId)
        }
        out.note(.chatroomState(roomId: roomId, joined: false))
        if reportQuit { out.callback(.chatroomQuit(roomId: roomId)) }
        return done
    }

    /// Owes the removal of a room's rows stored so far (bounded by the greatest messageId now:
    /// `AUTOINCREMENT` ids only grow, so a row stored later — told to the app after it left —
    /// stays). A read refused too leaves no bound: every row.
    mutating func oweRoomCleanup(_ roomId: String) {
        let upTo: Int64
        do { upTo = try store.newestMessageId(in: ConversationKey(.chatroom, roomId)) ?? 0 } catch { upTo = .max }
        if let i = owedRoomCleanups.firstIndex(where: { $0.roomId == roomId }) {
            owedRoomCleanups[i].upTo = max(owedRoomCleanups[i].upTo, upTo)
        } else {
            owedRoomCleanups.append(OwedRoomCleanup(roomId: roomId, upTo: upTo))
        }
    }

    /// A room whose local rows are still owed a removal cannot be joined: the removal also takes
    /// the room's KV cache, cursor and membership row, which a new join writes afresh (the retry
    /// would take the new ones, or the old cache would mix with the new); the app is told the
    /// database error and may join again once the disk works (the retry runs first at every input).
    func roomCleanupOwed(_ roomId: String) -> Bool { owedRoomCleanups.contains { $0.roomId == roomId } }

    /// The messageId up to which an owed removal hides a room's rows from the app (nil: nothing hidden).
    func hiddenRoomRows(_ key: ConversationKey) -> Int64? {
        guard !owedRoomCleanups.isEmpty, key.type == .chatroom else { return nil }
        return owedRoomCleanups.first { $0.roomId == key.targetId }?.upTo
    }

    /// A row of a left room whose removal is owed: gone, as far as the app is concerned.
    func isHiddenRow(_ row: StoredMessage) -> Bool {
        guard let upTo = hiddenRoomRows(row.conversation) else { return false }
        return row.messageId <= upTo
    }
}
