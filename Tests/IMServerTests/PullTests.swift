import IMWire
import SimKernel
import Testing
@testable import IMServer

@Suite struct PullTests {
    /// Offline messages are pulled in pages of `pullPageSize`, `syncTime` = last returned
    /// dataTime, `finished` false while more remain.
    @Test func pagesWithSyncTimeAndFinished() throws {
        var cfg = ServerConfig()
        cfg.pullPageSize = 3
        cfg.rateLimitPerSecond = 0
        var h = Harness(config: cfg)
        let a = h.online("alice")
        var uids: [String] = []
        for i in 0..<7 {
            h.now = Harness.t0 + Int64(i) * 10
            uids.append(h.sendText(a, to: "bob", "m\(i)").1.puback(a)!.messageUId)
        }
        let b = h.online("bob")
        var cursor: Int64 = 0
        var got: [String] = []
        var pages: [(Int, Bool)] = []
        for _ in 0..<5 {
            let page = try #require(h.pull(b, user: "bob", syncTime: cursor).1.pullPage(b))
            got += page.list.map(\.msgID)
            pages.append((page.list.count, page.finished))
            cursor = page.syncTime
            if page.finished { break }
        }
        #expect(got == uids)
        #expect(pages.map(\.0) == [3, 3, 1] && pages.map(\.1) == [false, false, true])
        #expect(cursor == Harness.t0 + 60)
        // Nothing newer: empty page, the request's syncTime back, finished.
        let empty = try #require(h.pull(b, user: "bob", syncTime: cursor).1.pullPage(b))
        #expect(empty.list.isEmpty && empty.syncTime == cursor && empty.finished)
    }

    /// Page boundaries with equal dataTime (allowEqualDataTime on): the client's cursor rule
    /// (keep dataTime > cursor, cursor := syncTime) never skips or repeats a message. Table: the
    /// dataTime offsets of 9 messages, page size 3, and the expected page sizes.
    @Test(arguments: [
        ([0, 0, 0, 0, 1, 1, 2, 2, 2], [4, 2, 3]),   // a run longer than the page is taken whole
        ([0, 1, 1, 1, 2, 3, 3, 4, 4], [1, 3, 3, 2]), // a run straddling the boundary moves to the next page
        ([0, 1, 2, 3, 4, 5, 6, 7, 8], [3, 3, 3]),
        ([5, 5, 5, 5, 5, 5, 5, 5, 5], [9]),
        ([0, 0, 1, 1, 2, 2, 3, 3, 3], [2, 2, 2, 3]),
    ])
    func equalDataTimePageBoundaries(offsets: [Int64], expectedPages: [Int]) throws {
        var cfg = ServerConfig()
        cfg.pullPageSize = 3
        cfg.allowEqualDataTime = true
        cfg.rateLimitPerSecond = 0
        var h = Harness(config: cfg)
        // Three senders so that equal times also come from different conversations.
        let senders = ["alice", "carol", "dave"].map { h.online($0) }
        var uids: [String] = []
        for (i, off) in offsets.enumerated() {
            h.now = Harness.t0 + off
            let s = senders[i % 3]
            uids.append(h.sendText(s, to: "bob", "m\(i)").1.puback(s)!.messageUId)
        }
        let b = h.online("bob")
        var cursor: Int64 = 0
        var kept: [String] = []
        var sizes: [Int] = []
        for _ in 0..<20 {
            let page = try #require(h.pull(b, user: "bob", syncTime: cursor).1.pullPage(b))
            sizes.append(page.list.count)
            kept += page.list.filter { $0.dataTime > cursor }.map(\.msgID) // the real client's rule
            cursor = page.syncTime
            if page.finished { break }
        }
        #expect(kept == uids) // no skip, no duplicate, server order (dataTime, then messageUId)
        #expect(sizes == expectedPages)
    }

    /// The pager on its own: inbox and sendbox merged, equal dataTime across the two boxes.
    @Test func pagerMergesBoxesWithoutSplittingRuns() {
        func rec(_ t: Int64, _ n: UInt64) -> MessageRecord {
            MessageRecord(uid: MessageUId.make(n), seq: n, conversation: ConversationKey(.privateChat, "x"), senderUserId: "s",
                          senderDeviceId: "d", objectName: "RC:TxtMsg", dataTime: t, flags: .normal, clientUniqueId: 0,
                          pushAllowed: true, downBytes: [], contentLength: 0, contentHash: 0)
        }
        var inbox = Mailbox(), sendbox = Mailbox()
        for (t, n) in [(1, 1), (2, 3), (2, 5), (4, 7)] as [(Int64, UInt64)] { inbox.insert(rec(t, n)) }
        for (t, n) in [(2, 4), (3, 6)] as [(Int64, UInt64)] { sendbox.insert(rec(t, n)) }
        // Order: 1(i0) 2(i1) 2(s0) 2(i2) 3(s1) 4(i3)
        let p1 = PullPager.page(inbox, from: 0, sendbox, from: 0, size: 2)
        #expect(p1.picks == [.init(inbox: true, index: 0)] && !p1.finished)
        let p2 = PullPager.page(inbox, from: 1, sendbox, from: 0, size: 2)
        #expect(p2.picks == [.init(inbox: true, index: 1), .init(inbox: false, index: 0), .init(inbox: true, index: 2)])
        #expect(!p2.finished)
        let p3 = PullPager.page(inbox, from: 3, sendbox, from: 1, size: 5)
        #expect(p3.picks == [.init(inbox: false, index: 1), .init(inbox: true, index: 3)] && p3.finished)
        // Out-of-order arrival is inserted in place.
        inbox.insert(rec(3, 8))
        #expect((0..<inbox.count).map { inbox[$0].dataTime } == [1, 2, 2, 3, 4])
    }

    /// isPullSend: own messages sent from other devices come back with direction 1 and the peer as
    /// groupId, after `sendBoxSyncTime`.
    @Test func sendboxPull() throws {
        var h = Harness()
        let phone = h.online("alice", device: "phone")
        let ack = try #require(h.sendText(phone, to: "bob", "from phone").1.puback(phone))
        let desk = h.online("alice", device: "desk", platform: .desktop)
        let page = try #require(h.pull(desk, user: "alice", syncTime: 0, isPullSend: true).1.pullPage(desk))
        let m = try #require(page.list.first)
        #expect(page.list.count == 1 && m.msgID == ack.messageUId && m.direction == 1 && m.groupID == "bob" && m.fromUserID == "alice")
        #expect(page.syncTime == 0) // no inbox message: the request's syncTime
        let later = try #require(h.pull(desk, user: "alice", syncTime: 0, sendBoxSyncTime: ack.sentTime, isPullSend: true).1.pullPage(desk))
        #expect(later.list.isEmpty)
        #expect(h.pull(desk, user: "alice", syncTime: 0, isPullSend: false).1.pullPage(desk)?.list.isEmpty == true)
    }

    /// Status bit 0x02: set on a pull when another device of the user already got the message.
    @Test func receivedByAnotherDeviceBit() throws {
        var h = Harness()
        let a = h.online("alice")
        let phone = h.online("bob", device: "phone")
        _ = h.sendText(a, to: "bob", "x")
        let desk = h.online("bob", device: "desk", platform: .desktop)
        let onDesk = try #require(h.pull(desk, user: "bob", syncTime: 0).1.pullPage(desk)?.list.first)
        #expect(onDesk.statusFlags.contains(.receivedByOtherDevice))
        // The phone got it itself (s_msg): from its own view only the desk has it too → bit set now.
        let onPhone = try #require(h.pull(phone, user: "bob", syncTime: 0).1.pullPage(phone)?.list.first)
        #expect(onPhone.statusFlags.contains(.receivedByOtherDevice))
        // A message only the phone got: its own pull does not set the bit.
        h.close(desk)
        _ = h.sendText(a, to: "bob", "y")
        let page = try #require(h.pull(phone, user: "bob", syncTime: onPhone.dataTime).1.pullPage(phone))
        #expect(page.list.count == 1 && !page.list[0].statusFlags.contains(.receivedByOtherDevice))
    }

    /// QUERYACK (qos 1) is re-sent with the dup bit every `queryAckRetry` until QUERYCON.
    @Test func queryAckRetriedUntilQueryCon() throws {
        var h = Harness()
        let b = h.online("bob")
        let (qid, out) = h.pull(b, user: "bob", syncTime: 0)
        let ack = try #require(out.queryAck(b))
        #expect(ack.flags.qos == .atLeastOnce && ack.messageId == qid)
        #expect(out.effects.contains(.setTimer(.queryAckRetry(b, messageId: qid), after: .seconds(5))))
        for _ in 0..<2 {
            h.advance(ms: 5000)
            let retry = h.fire(.queryAckRetry(b, messageId: qid))
            let again = try #require(retry.queryAck(b))
            #expect(again.flags.dup && again.messageId == qid && again.body == ack.body)
            #expect(retry.timersSet == [.queryAckRetry(b, messageId: qid)])
        }
        let con = h.send(b, .queryConfirm(Frame.QueryConfirm(messageId: qid)))
        #expect(con.effects.contains(.cancelTimer(.queryAckRetry(b, messageId: qid))))
        let stale = h.fire(.queryAckRetry(b, messageId: qid))
        #expect(stale.effects.isEmpty)
    }

    /// A new device of a user who already has one gets only the last `newDeviceHistoryDays`.
    @Test func newDeviceHistoryWindow() throws {
        var cfg = ServerConfig()
        cfg.newDeviceHistoryDays = 1
        var h = Harness(config: cfg)
        let phone = h.online("bob", device: "phone")
        h.close(phone)
        let a = h.online("alice")
        let old = try #require(h.sendText(a, to: "bob", "old").1.puback(a))
        h.advance(ms: 2 * 86_400_000)
        let recent = try #require(h.sendText(a, to: "bob", "recent").1.puback(a))
        h.advance(ms: 1000)
        let (desk, connectOut) = h.connect("bob", device: "desk", platform: .desktop)
        #expect(connectOut.has(.dropped(messageUId: old.messageUId, conversation: ConversationKey(.privateChat, "bob"),
                                        userId: "bob", reason: .beforeDeviceHistoryWindow)))
        let page = try #require(h.pull(desk, user: "bob", syncTime: 0).1.pullPage(desk))
        #expect(page.list.map(\.msgID) == [recent.messageUId])
        // The known device still gets everything.
        let phone2 = h.online("bob", device: "phone")
        #expect(h.pull(phone2, user: "bob", syncTime: 0).1.pullPage(phone2)?.list.map(\.msgID) == [old.messageUId, recent.messageUId])
    }

    /// The page envelope built from pre-encoded messages equals swift-protobuf's encoding.
    @Test func pageEncodingMatchesSwiftProtobuf() throws {
        var items: [RMTPDownStreamMessage] = []
        for i in 0..<3 {
            var d = RMTPDownStreamMessage()
            d.fromUserID = "u\(i)"
            d.type = 1
            d.classname = "RC:TxtMsg"
            d.contentBytes = Array(String(repeating: "x", count: 100 * i).utf8)
            d.dataTime = 1_700_000_000_000 + Int64(i)
            d.status = 0x30
            d.msgID = MessageUId.make(UInt64(i + 1))
            items.append(d)
        }
        for (syncTime, finished) in [(Int64(0), true), (1_700_000_000_002, false), (-5, true)] {
            var ref = RMTPDownStreamMessages()
            ref.list = items
            ref.syncTime = syncTime
            ref.finished = finished
            let mine = FastProto.downStreamMessages(encoded: try items.map { try ProtoBody.encode($0) }, syncTime: syncTime, finished: finished)
            #expect(mine == (try ref.serializedBytes() as [UInt8]))
            var hist = RMTPHistoryMsgOuput()
            hist.list = items
            hist.syncTime = syncTime
            hist.hasMsg = finished ? 0 : 1
            let h2 = FastProto.historyOutput(encoded: try items.map { try ProtoBody.encode($0) }, syncTime: syncTime, hasMsg: finished ? 0 : 1)
            #expect(h2 == (try hist.serializedBytes() as [UInt8]))
        }
    }
}

@Suite struct ExpiryTests {
    /// Inbox entries expire `offlineRetentionDays` after their dataTime: pulls stop returning them
    /// at exactly that instant, the sweep drops them and reports the unseen ones.
    @Test(arguments: [7, 1])
    func offlineExpiry(days: Int) throws {
        var cfg = ServerConfig()
        cfg.offlineRetentionDays = days
        cfg.multiDeviceSync = false
        var h = Harness(config: cfg)
        let a = h.online("alice")
        let first = h.sendText(a, to: "bob", "unseen")
        let uid = try #require(first.1.puback(a)).messageUId
        let retention = Int64(days) * 86_400_000
        #expect(first.1.effects.contains(.setTimer(.offlineExpiry, after: .milliseconds(retention))))
        h.now = Harness.t0 + retention - 1
        let b = h.online("bob")
        #expect(h.pull(b, user: "bob", syncTime: 0).1.pullPage(b)?.list.map(\.msgID) == [uid])
        // Seen by bob now; a second, unseen message for carol.
        h.now = Harness.t0
        let carolUid = try #require(h.sendText(a, to: "carol", "c").1.puback(a)).messageUId
        h.now = Harness.t0 + retention
        #expect(h.pull(b, user: "bob", syncTime: 0).1.pullPage(b)?.list.isEmpty == true)
        let sweep = h.fire(.offlineExpiry)
        #expect(sweep.drops.map { "\($0.uid!)/\($0.user!)/\($0.reason)" } == ["\(carolUid)/carol/offlineExpired"])
        #expect(h.core.inboxCount(of: "bob") == 0 && h.core.inboxCount(of: "carol") == 0)
        #expect(sweep.timersSet.isEmpty) // nothing left to expire
    }

    @Test func sweepRearmsForTheOldestRemainingEntry() {
        var cfg = ServerConfig()
        cfg.offlineRetentionDays = 1
        var h = Harness(config: cfg)
        let a = h.online("alice")
        _ = h.sendText(a, to: "bob", "1")
        h.now = Harness.t0 + 3_600_000
        _ = h.sendText(a, to: "bob", "2")
        let sweep = h.fire(.offlineExpiry, at: Harness.t0 + 86_400_000)
        #expect(sweep.timersSet == [.offlineExpiry])
        #expect(sweep.effects.contains(.setTimer(.offlineExpiry, after: .milliseconds(3_600_000))))
        #expect(h.core.inboxCount(of: "bob") == 1)
    }
}

/// Issue 22 item 3. Seed rule (im-semantics §5): a new device gets "今天(当天 0 点)" — the current
/// calendar day from 00:00 in the server's time zone (UTC+8 by default), up to 7 days — not a
/// rolling 24 h window. Harness.t0 = 2023-11-15 06:13:20 UTC+8.
@Suite struct NewDeviceCalendarDayTests {
    /// "old" at t0+12h (Nov 15 18:13 UTC+8), "recent" at t0+18h (Nov 16 00:13 UTC+8), a new device
    /// at t0+18h+1s: what its first pull returns.
    func newDevicePull(_ cfg: ServerConfig) throws -> [String] {
        var h = Harness(config: cfg)
        let phone = h.online("bob", device: "phone")
        h.close(phone)
        let a = h.online("alice")
        h.advance(ms: 12 * 3_600_000)
        _ = try #require(h.sendText(a, to: "bob", "old").1.puback(a))
        h.advance(ms: 6 * 3_600_000)
        _ = try #require(h.sendText(a, to: "bob", "recent").1.puback(a))
        h.advance(ms: 1000)
        let (desk, _) = h.connect("bob", device: "desk", platform: .desktop)
        let page = try #require(h.pull(desk, user: "bob", syncTime: 0).1.pullPage(desk))
        return page.list.map { String(decoding: $0.content, as: UTF8.self) }
    }

    @Test func defaultIsTodayFromMidnightUTCPlus8() throws {
        // Rolling 24 h would return both; yesterday (Nov 15, UTC+8) is outside.
        #expect(try newDevicePull(ServerConfig()).map { $0.contains("recent") } == [true])
    }

    @Test func theTimeZoneIsAKnob() throws {
        var cfg = ServerConfig()
        cfg.serverUtcOffsetMinutes = -600   // UTC-10: both are on Nov 15
        #expect(try newDevicePull(cfg).count == 2)
    }

    @Test func upToSevenDays() throws {
        var cfg = ServerConfig()
        cfg.newDeviceHistoryDays = 2
        #expect(try newDevicePull(cfg).count == 2)
        cfg.newDeviceHistoryDays = 30          // clamped to 7
        #expect(try newDevicePull(cfg).count == 2)
    }
}
