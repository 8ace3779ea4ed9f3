import IMWire
import SimKernel
import Testing
@testable import IMServer

@Suite struct RecallTests {
    static func recall(_ h: inout Harness, _ c: ConnectionID, type: ConversationType = .privateChat, target: String,
                       uid: String, sentTime: Int64) -> Output {
        let cmd = RecallCommandContent(conversationType: type, targetId: target, messageUId: uid, sentTime: sentTime)
        let up = try! RMTPUpStreamMessage(content: .recallCommand(cmd), flags: .command)
        return h.publish(c, topic: .recallMsg, target: target, up).1
    }

    /// Only the sender, within 120 s (inclusive) of the original dataTime; refused → 25101.
    @Test(arguments: [
        ("sender at 120 s", "alice", Int64(120_000), UInt16(0)),
        ("sender at 120.001 s", "alice", 120_001, 25101),
        ("not the sender", "bob", 1_000, 25101),
    ])
    func recallWindowAndSender(_ name: String, who: String, after: Int64, status: UInt16) throws {
        var h = Harness()
        let a = h.online("alice")
        let b = h.online("bob")
        let orig = try #require(h.sendText(a, to: "bob", "oops").1.puback(a))
        h.now = orig.sentTime + after
        let c = who == "alice" ? a : b
        let target = who == "alice" ? "bob" : "alice"
        let out = Self.recall(&h, c, target: target, uid: orig.messageUId, sentTime: orig.sentTime)
        #expect(out.puback(c)?.status == status)
        #expect(h.core.isRecalled(orig.messageUId) == (status == 0))
        if status == 0 {
            #expect(out.has(.recalled(messageUId: orig.messageUId, byUserId: "alice")))
            let cmd = try #require(out.delivered(b).first)
            #expect(cmd.classname == "RC:RcCmd" && !cmd.statusFlags.contains(.persisted))
            #expect(cmd.msgID == out.puback(a)?.messageUId && cmd.msgID != orig.messageUId)
            // The original stays in bob's inbox; the command follows it.
            #expect(h.core.inboxMessageUIds(of: "bob") == [orig.messageUId, cmd.msgID])
            // A second recall of the same message is refused.
            #expect(Self.recall(&h, a, target: "bob", uid: orig.messageUId, sentTime: orig.sentTime).puback(a)?.status == 25101)
        } else {
            #expect(out.rejectedCodes == [25101])
        }
    }

    /// The recall command reaches an offline recipient through the inbox (NONE: delivered offline).
    @Test func recallReachesOfflineRecipient() throws {
        var h = Harness()
        let a = h.online("alice")
        let orig = try #require(h.sendText(a, to: "bob", "oops").1.puback(a))
        let out = Self.recall(&h, a, target: "bob", uid: orig.messageUId, sentTime: orig.sentTime)
        let cmdUid = try #require(out.puback(a)).messageUId
        #expect(out.has(.offlineStored(messageUId: cmdUid, userId: "bob")))
        #expect(!out.has(.pushed(messageUId: cmdUid, userId: "bob")))
        let b = h.online("bob")
        let page = try #require(h.pull(b, user: "bob", syncTime: 0).1.pullPage(b))
        #expect(page.list.map(\.classname) == ["RC:TxtMsg", "RC:RcCmd"])
        let content = page.list[1].messageContent
        #expect(content == .recallCommand(RecallCommandContent(conversationType: .privateChat, targetId: "bob",
                                                               messageUId: orig.messageUId, sentTime: orig.sentTime)))
    }
}

@Suite struct HistoryTests {
    static func history(_ h: inout Harness, _ c: ConnectionID, _ topic: Topic, target: String, time: Int64, count: Int32,
                        order: Int32) -> (Output, RMTPHistoryMsgOuput?) {
        var q = RMTPHistoryMsgInput()
        q.targetID = target
        q.time = time
        q.count = count
        q.order = order
        let out = h.query(c, topic, target: target, q).1
        return (out, out.queryAck(c).flatMap { $0.status == 0 ? try? $0.decodeBody(RMTPHistoryMsgOuput.self) : nil })
    }

    /// Cloud history pages before/after a time with a next cursor; 1–200 per page; equal
    /// dataTimes never split; recalled messages come back as RC:RcNtf; own messages direction 1.
    @Test func privateHistoryPaging() throws {
        var cfg = ServerConfig()
        cfg.rateLimitPerSecond = 0
        cfg.allowEqualDataTime = true
        var h = Harness(config: cfg)
        let a = h.online("alice")
        let b = h.online("bob")
        var uids: [String] = []
        for (i, off) in ([0, 10, 20, 20, 20, 30, 40] as [Int64]).enumerated() {
            h.now = Harness.t0 + off
            let c = i % 2 == 0 ? a : b
            uids.append(h.sendText(c, to: c == a ? "bob" : "alice", "m\(i)").1.puback(c)!.messageUId)
        }
        // Newest first pages going back (order 0), 2 per page.
        var cursor: Int64 = 0
        var got: [[String]] = []
        for _ in 0..<5 {
            let (_, page) = Self.history(&h, a, .qryPMsg, target: "bob", time: cursor, count: 2, order: 0)
            let p = try #require(page)
            got.append(p.list.map(\.msgID))
            cursor = p.syncTime
            if p.hasMsg == 0 { break }
        }
        #expect(got == [[uids[5], uids[6]], Array(uids[2...4]), [uids[0], uids[1]]])
        // Forward from a time (order 1).
        let (_, fwd) = Self.history(&h, b, .qryPMsg, target: "alice", time: Harness.t0 + 10, count: 2, order: 1)
        let f = try #require(fwd)
        #expect(f.list.map(\.msgID) == Array(uids[2...4]) && f.hasMsg == 1 && f.syncTime == Harness.t0 + 20)
        #expect(f.list.map(\.direction) == [0, 1, 0]) // bob sent m3
        // Recall: history shows RC:RcNtf in its place.
        h.now = Harness.t0 + 50
        _ = RecallTests.recall(&h, a, target: "bob", uid: uids[6], sentTime: Harness.t0 + 40)
        let (_, after) = Self.history(&h, b, .qryPMsg, target: "alice", time: 0, count: 1, order: 0)
        let last = try #require(after?.list.last)
        #expect(last.msgID == uids[6] && last.classname == "RC:RcNtf")
        // Count bounds.
        #expect(Self.history(&h, a, .qryPMsg, target: "bob", time: 0, count: 0, order: 0).0.queryAck(a)?.status == 33003)
        #expect(Self.history(&h, a, .qryPMsg, target: "bob", time: 0, count: 201, order: 0).0.queryAck(a)?.status == 33003)
        #expect(Self.history(&h, a, .qryPMsg, target: "bob", time: 0, count: 200, order: 0).1 != nil)
    }

    /// Group history: members only, and only messages after the member joined.
    @Test func groupHistoryVisibility() throws {
        var h = Harness()
        let a = h.online("alice")
        let before = try #require(h.sendText(a, to: "g1", "before", topic: .pgMsgP).1.puback(a))
        h.advance(ms: 100)
        h.run(.api(.addGroupMembers(groupId: "g1", userIds: ["dave"])))
        h.advance(ms: 100)
        let after = try #require(h.sendText(a, to: "g1", "after", topic: .pgMsgP).1.puback(a))
        let d = h.online("dave")
        let (_, page) = Self.history(&h, d, .qryGMsg, target: "g1", time: 0, count: 10, order: 0)
        #expect(page?.list.map(\.msgID) == [after.messageUId])
        let (_, all) = Self.history(&h, a, .qryGMsg, target: "g1", time: 0, count: 10, order: 0)
        #expect(all?.list.map(\.msgID) == [before.messageUId, after.messageUId])
        let e = h.online("erin")
        #expect(Self.history(&h, e, .qryGMsg, target: "g1", time: 0, count: 10, order: 0).0.queryAck(e)?.status == 22406)
    }
}
