import IMWire
import Testing
@testable import IMStore

@Suite struct ConversationListTests {
    @Test func pinnedFirstThenNewestThenDeterministicTieBreak() throws {
        let s = try memoryStore()
        _ = try store(s, incoming("1", in: alice, at: 100))
        _ = try store(s, incoming("2", in: bob, at: 300))
        _ = try store(s, incoming("3", in: team, at: 200))
        let carol = ConversationKey(.privateChat, "carol"), dave = ConversationKey(.privateChat, "dave")
        _ = try store(s, incoming("4", in: dave, at: 200))   // same time as team, inserted later
        _ = try store(s, incoming("5", in: carol, at: 50))
        _ = try store(s, incoming("6", in: room, at: 999))  // chatrooms are not in the default list
        #expect(try s.setTop(carol, true))
        #expect(try s.conversationList().map(\.key) == [carol, bob, dave, team, alice])
        #expect(try s.conversationList(types: [.group, .chatroom]).map(\.key) == [room, team])
        // Unpinning puts it back in time order.
        #expect(try s.setTop(carol, false))
        #expect(try s.conversationList().map(\.key) == [bob, dave, team, alice, carol])
    }

    @Test func equalLatestTimeAndNoMessagesFallBackToTypeAndTarget() throws {
        let s = try memoryStore()
        // Rows created by settings alone have no latest message (time 0, id NULL).
        try s.setDraft(ConversationKey(.group, "z"), "draft")
        try s.setDraft(ConversationKey(.privateChat, "y"), "draft")
        try s.setDraft(ConversationKey(.privateChat, "x"), "draft")
        #expect(try s.conversationList().map(\.key.description) == ["private:x", "private:y", "group:z"])
    }

    @Test func settingsAreStoredAndReportChanges() throws {
        let s = try memoryStore()
        _ = try store(s, incoming("A", at: 1))
        #expect(try s.setDraft(alice, "typing…"))
        #expect(try !s.setDraft(alice, "typing…"), "same value: no change")
        #expect(try s.setNotificationStatus(alice, .doNotDisturb))
        #expect(try !s.setNotificationStatus(alice, .doNotDisturb))
        #expect(try s.setTop(alice, true))
        #expect(try !s.setTop(alice, true))
        let c = try #require(try s.conversation(alice))
        #expect(c.draft == "typing…")
        #expect(c.notificationStatus == .doNotDisturb)
        #expect(c.isTop)
        #expect(c.unreadCount == 1, "settings do not touch message state")
        #expect(try s.setDraft(alice, nil))
        #expect(try s.conversation(alice)?.draft == nil)
        // Settings on an unknown conversation create its row.
        #expect(try s.setTop(bob, false))
        #expect(try s.conversation(bob) == StoredConversation(key: bob))
    }

    @Test func removedConversationComesBackWithTheNextMessage() throws {
        let s = try memoryStore()
        _ = try store(s, incoming("A", at: 1))
        #expect(try s.removeConversation(alice))
        #expect(try !s.removeConversation(alice))
        #expect(try s.conversation(alice) == nil)
        #expect(try s.messageCount(in: alice) == 1, "messages stay")
        let r = try s.storeReceived(incoming("B", at: 2))
        #expect(r.conversationChanged)
        #expect(try s.conversation(alice)?.unreadCount == 1, "the new row counts from the new message")
    }
}

@Suite struct ChatroomTests {
    private func joinedRoom(_ s: IMStore, _ id: String = "room1") throws {
        #expect(try s.joinChatroom(id, at: 1_000))
        #expect(try s.upsertChatroomKV(id, [
            ChatroomKVEntry(key: "topic", value: "swift", userId: "host", updateTime: 10),
            ChatroomKVEntry(key: "mode", value: "open", userId: "host", autoDelete: true, updateTime: 11),
        ]) == 2)
        #expect(try s.setChatroomKVSync(id, synced: true, syncTime: 11))
        try s.setCursor(.chatroom(id), to: 5_000)
        _ = try store(s, incoming("R1-\(id)", in: ConversationKey(.chatroom, id), at: 2_000, from: "u1"))
        _ = try store(s, incoming("R2-\(id)", in: ConversationKey(.chatroom, id), at: 2_100, from: "u2"))
    }

    @Test func joinKVAndSyncState() throws {
        let s = try memoryStore()
        try joinedRoom(s)
        #expect(try !s.joinChatroom("room1", at: 3_000), "a rejoin is not a new join")
        let state = try #require(try s.chatroom("room1"))
        #expect(state == ChatroomState(roomId: "room1", joinedTime: 3_000, kvSynced: true, kvSyncTime: 11))
        #expect(try s.chatroomKV("room1").map(\.key) == ["mode", "topic"])
        #expect(try s.upsertChatroomKV("room1", [ChatroomKVEntry(key: "topic", value: "rust", userId: "u2", updateTime: 20)]) == 1)
        #expect(try s.chatroomKV("room1").last == ChatroomKVEntry(key: "topic", value: "rust", userId: "u2", updateTime: 20))
        #expect(try s.removeChatroomKV("room1", keys: ["topic", "missing", "topic"]) == ["topic"])
        #expect(try s.chatroomKV("room1").map(\.key) == ["mode"])
        #expect(try s.clearChatroomKV("room1") == 1)
        #expect(try s.chatroom("room1")?.kvSynced == false)
        #expect(try s.messageCount(in: room) == 2, "clearing the KV cache keeps messages")
        #expect(try !s.setChatroomKVSync("nowhere", synced: true, syncTime: 1))
    }

    @Test func quitClearsMessagesAndStateOfThatRoomOnly() throws {
        let s = try memoryStore()
        try joinedRoom(s, "room1")
        try joinedRoom(s, "room2")
        _ = try store(s, incoming("P", in: alice, at: 2_050))
        let r = try s.quitChatroom("room1")
        #expect(r == ChatroomQuitResult(wasJoined: true, deletedMessageCount: 2, removedKVCount: 2,
                                        conversationRemoved: true, cursorRemoved: true))
        #expect(try s.messageCount(in: room) == 0)
        #expect(try s.conversation(room) == nil)
        #expect(try s.chatroom("room1") == nil)
        #expect(try s.chatroomKV("room1") == [])
        #expect(try s.cursor(.chatroom("room1")) == 0)
        #expect(try s.allMessageUIds(in: room) == [])
        // room2 and private messages are untouched.
        #expect(try s.joinedChatrooms().map(\.roomId) == ["room2"])
        #expect(try s.messageCount(in: ConversationKey(.chatroom, "room2")) == 2)
        #expect(try s.chatroomKV("room2").count == 2)
        #expect(try s.cursor(.chatroom("room2")) == 5_000)
        #expect(try s.messageCount(in: alice) == 1)
        // Quitting again finds nothing.
        #expect(try s.quitChatroom("room1") == ChatroomQuitResult(
            wasJoined: false, deletedMessageCount: 0, removedKVCount: 0, conversationRemoved: false, cursorRemoved: false))
        // A new message id after quit never reuses the deleted rows' ids.
        let maxBefore = try scalar(s, "SELECT MAX(seq) FROM sqlite_sequence WHERE name = 'messages'")
        #expect(try store(s, incoming("N", in: room, at: 9_000)) > maxBefore)
    }

    /// A removal retried after a storage fault (the client told its app the room was quit at
    /// once) spares rows stored after its bound: the app was told of them after the quit.
    @Test func quitUpToAMessageIdSparesLaterRows() throws {
        let s = try memoryStore()
        try joinedRoom(s, "room1")
        let bound = try #require(try s.newestMessageId(in: room))
        #expect(try s.newestMessageId(in: ConversationKey(.chatroom, "elsewhere")) == nil)
        // A row stored after the bound, older by time than the room's rows.
        let later = try store(s, incoming("LATER", in: room, at: 1_500, from: "u3"))
        #expect(later > bound)
        // Meanwhile (the removal owed) the reads above the bound show the later row only.
        #expect(try s.history(in: room, above: bound).map(\.messageUId) == ["LATER"])
        #expect(try s.history(in: room).count == 3)
        #expect(try s.messageCount(in: room, above: bound) == 1)
        #expect(try s.conversationAfterQuit(room, upTo: bound)?.latestMessageId == later)
        #expect(try s.conversation(room)?.latestTime == 2_100)
        #expect(try s.conversationAfterQuit(room, upTo: later) == nil)

        let r = try s.quitChatroom("room1", upTo: bound)
        #expect(r == ChatroomQuitResult(wasJoined: true, deletedMessageCount: 2, removedKVCount: 2,
                                        conversationRemoved: false, cursorRemoved: true))
        #expect(try s.allMessageUIds(in: room) == ["LATER"])
        let c = try #require(try s.conversation(room))
        #expect(c.latestMessageId == later && c.latestTime == 1_500)
        #expect(try s.chatroom("room1") == nil && s.chatroomKV("room1") == [])
        // Nothing left above the bound: the conversation row goes too.
        #expect(try s.quitChatroom("room1", upTo: later).conversationRemoved)
        #expect(try s.messageCount(in: room) == 0 && s.conversation(room) == nil)
    }
}

@Suite struct CursorTests {
    @Test func cursorsStartAtZeroAndAreIndependent() throws {
        let s = try memoryStore()
        #expect(try s.cursor(.inbox) == 0)
        try s.setCursor(.inbox, to: 100)
        try s.setCursor(.sendbox, to: 50)
        try s.setCursor(.chatroom("r"), to: 7)
        #expect(try [s.cursor(.inbox), s.cursor(.sendbox), s.cursor(.chatroom("r")), s.cursor(.chatroom("q"))] == [100, 50, 7, 0])
    }

    @Test func advanceOnlyMovesForward() throws {
        let s = try memoryStore()
        #expect(try !s.advanceCursor(.inbox, to: 0), "0 is where an unset cursor already is")
        #expect(try s.advanceCursor(.inbox, to: 100))
        #expect(try !s.advanceCursor(.inbox, to: 100), "equal is not forward")
        #expect(try !s.advanceCursor(.inbox, to: 99))
        #expect(try s.cursor(.inbox) == 100)
        #expect(try s.advanceCursor(.inbox, to: 101))
        // setCursor may move back (bug models need it); removal resets to 0.
        try s.setCursor(.inbox, to: 10)
        #expect(try s.cursor(.inbox) == 10)
        #expect(try s.removeCursor(.inbox))
        #expect(try s.cursor(.inbox) == 0)
        #expect(SyncCursor.chatroom("r1").name == "chatroom:r1")
    }
}
