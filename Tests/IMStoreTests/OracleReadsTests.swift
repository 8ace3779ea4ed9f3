import IMWire
import Testing
@testable import IMStore

/// The oracles' lean reads answer what the app-facing reads they replace would.
@Suite struct OracleReadsTests {
    @Test func conversationAndSentTimeIsTheRowsFields() throws {
        let s = try memoryStore()
        let a = try store(s, incoming("A", at: 1_500))
        let sent = try s.insertOutgoing(outgoing("hi", in: bob, at: 2_000)).messageId
        for id in [a, sent] {
            let row = try #require(try s.message(id: id))
            let lean = try #require(try s.conversationAndSentTime(ofMessage: id))
            #expect(lean.conversation == row.conversation)
            #expect(lean.sentTime == row.sentTime)
        }
        #expect(try s.conversationAndSentTime(ofMessage: 9_999) == nil)
    }

    @Test func unreadStateIsTheConversationRowAndTheRecount() throws {
        let s = try memoryStore(recallDecrements: false)  // B14: the count may drift from the rows
        _ = try store(s, incoming("A", at: 1_000))
        _ = try store(s, incoming("B", at: 1_100, mentioned: true))
        _ = try store(s, incoming("C", at: 1_200, persistent: .isPersisted))  // not counted
        _ = try store(s, incoming("D", in: bob, at: 1_300))
        _ = try s.recall(.messageUId("A"), notificationContent: rcNtf)
        for key in [alice, bob] {
            let conv = try #require(try s.conversation(key))
            let state = try #require(try s.unreadState(of: key))
            #expect(state.unreadCount == conv.unreadCount)
            #expect(state.hasUnreadMentioned == conv.hasUnreadMentioned)
            #expect(state.unreadCandidates == (try s.countUnreadCandidates(in: key)))
        }
        #expect(try s.unreadState(of: alice)?.unreadCount != (try s.unreadState(of: alice)?.unreadCandidates), "B14 shows")
        _ = try s.clearUnread(in: alice, upTo: 1_150)
        #expect(try s.unreadState(of: alice)?.unreadCandidates == (try s.countUnreadCandidates(in: alice)))
        #expect(try s.unreadState(of: team) == nil, "no conversation row")
    }

    @Test func historyUIdsAreTheConcatenatedPages() throws {
        let s = try memoryStore(dedup: false)
        for i in 0..<47 {
            _ = try store(s, incoming("A\(i % 40)", at: Int64(1_000 + (i * 7) % 13)))  // same-ms ties, repeated uids
            _ = try store(s, incoming("B\(i)", in: bob, at: Int64(1_000 + i)))
        }
        _ = try store(s, incoming(nil, at: 1_005))  // no messageUId
        _ = try s.insertOutgoing(outgoing("pending", at: 1_003))
        for key in [alice, bob, team] {
            var pages: [String?] = []
            var before: Int64 = -1
            while true {
                let page = try s.history(in: key, before: before, count: 20)
                pages += page.map(\.messageUId)
                guard page.count == 20, let last = page.last else { break }
                before = last.messageId
            }
            #expect(try s.historyUIds(in: key, limit: 100_000) == pages)
            #expect(try s.historyUIds(in: key, limit: 7) == Array(pages.prefix(7)))
        }
    }
}
