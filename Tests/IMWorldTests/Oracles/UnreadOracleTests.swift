import Foundation
import IMClient
import IMServer
import IMStore
import IMWire
import SimKernel
import Testing
@testable import IMWorld

/// unread: a conversation's unread count equals its received, counted, unread, not-recalled
/// messages — checked for each conversation a callback touched, and for all at the end.
@Suite struct UnreadOracleTests {
    /// B14: alice recalls a message bob has not read; bob's badge stays 1.
    func b14(_ on: Bool, read: Bool = false) throws -> Scenario {
        try duo("unread-b14", client: bugs(on ? ["B14"] : []), script: """
            {"at": "5s", "device": "alice-phone", "action": "send", "to": "private:bob", "text": "first"},
            {"at": "6s", "device": "alice-phone", "action": "send", "to": "private:bob", "text": "oops"},
            """ + (read ? #"{"at": "7s", "device": "bob-phone", "action": "read", "conversation": "private:alice"},"# : "") + """
            {"at": "8s", "device": "alice-phone", "action": "recall"}
            """)
    }

    @Test func b14BadgeDriftIsReportedAtTheRecallCallback() throws {
        let (run, tap) = try runOracles(b14(true))
        let v = try onlyViolation(run)
        let bob = try run.device("bob-phone")
        let recalled = try #require(tap.clientEffects(on: bob) { if case .callback(.recalled) = $0 { true } else { false } }.first)
        #expect(recalled.time > SimTime.zero + .seconds(8))
        expectReport(v, oracle: "unread", device: "bob-phone", conversation: ConversationKey(.privateChat, "alice"),
                     index: recalled.index, time: recalled.time, scenario: "unread-b14")
        #expect(v.detail.contains("unread count is 2 but 1"), "\(v.detail)")
    }

    @Test func b14OffRecallDecrements() throws {
        let (run, _) = try runOracles(b14(false))
        expectClean(run)
        let bob = try run.device("bob-phone")
        #expect(try run.world.store(ofDevice: bob).conversation(ConversationKey(.privateChat, "alice"))?.unreadCount == 1)
    }

    /// With B14 on but the message already read, the count is right (0) — nothing to report.
    @Test func b14OnButReadMessageIsClean() throws {
        let (run, _) = try runOracles(b14(true, read: true))
        expectClean(run)
        let bob = try run.device("bob-phone")
        #expect(try run.world.store(ofDevice: bob).conversation(ConversationKey(.privateChat, "alice"))?.unreadCount == 0)
    }
}
