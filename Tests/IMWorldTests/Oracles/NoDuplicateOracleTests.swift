import Foundation
import IMClient
import IMServer
import IMStore
import IMWire
import SimKernel
import Testing
@testable import IMWorld

/// no-duplicate: one row per messageUId in a store, one `received` per messageUId, one server
/// accept per (sender, clientUniqueId), one conversation per peer.
@Suite struct NoDuplicateOracleTests {
    /// B1: alice connects to a backlog (pull pages of 1); bob's next message arrives as s_msg while
    /// the pull runs, and the pull returns it again.
    func b1(_ on: Bool) throws -> Scenario {
        try duo("dup-b1", client: bugs(on ? ["B1"] : []), server: #"{"pullPageSize": 1}"#,
                alice: #""autoConnect": false"#, script: """
                {"at": "2s", "device": "bob-phone", "action": "send", "to": "private:alice", "text": "backlog", "count": 4, "interval": "250ms"},
                {"at": "10s", "device": "alice-phone", "action": "connect"},
                {"at": "10.2s", "device": "bob-phone", "action": "send", "to": "private:alice", "text": "during the pull"}
                """)
    }

    @Test func b1SecondStoreOfTheSameMessageIsReported() throws {
        let (run, tap) = try runOracles(b1(true), enabled: withoutDeliveryOrder)
        let v = try onlyViolation(run)
        let alice = try run.device("alice-phone")
        let live = try #require(tap.accepted.last)   // "during the pull"
        #expect(tap.accepted.count == 5)
        let stores = tap.stores(of: live.messageUId, on: alice)
        #expect(stores.count == 2)
        let second = try #require(stores.last)
        expectReport(v, oracle: "no-duplicate", device: "alice-phone", conversation: ConversationKey(.privateChat, "bob"),
                     index: second.index, time: second.time, scenario: "dup-b1")
        #expect(v.messageUId == live.messageUId)
        #expect(v.detail.contains("stored twice"), "\(v.detail)")
        // The same event also shows it to the app a second time (reported at the same index).
        #expect(run.violations.count == 2 && run.violations[1].detail.contains("notified to the app twice"))
        // The path shows how it got there twice: direct delivery, then the pull.
        expectPath(v.path, contains: ["send on bob-phone", "server accepted from bob-phone", "fan-out direct → alice-phone",
                                      "stored on alice-phone", "pulled by alice-phone", "stored on alice-phone"])
    }

    @Test func b1OffStoresOnce() throws {
        let (run, tap) = try runOracles(b1(false))
        expectClean(run)
        let alice = try run.device("alice-phone")
        let live = try #require(tap.accepted.last)
        #expect(tap.stores(of: live.messageUId, on: alice).count == 1)
        #expect(try run.world.store(ofDevice: alice).duplicateMessageUIds().isEmpty)
    }

    /// B2: the PUBACK is lost to a reset; the resend is accepted again without idempotency.
    func b2(_ on: Bool, sync: Bool = false, resend: Bool = true) throws -> Scenario {
        try duo("dup-b2", server: bugs(on ? ["B2"] : [], "\"multiDeviceSync\": \(sync)"), script: """
            {"at": "5s", "device": "alice-phone", "action": "send", "to": "private:bob", "text": "are you there?"},
            {"at": "5.07s", "device": "alice-phone", "action": "reset"}
            """ + (resend ? #", {"at": "8s", "device": "alice-phone", "action": "resend"}"# : ""))
    }

    @Test func b2SecondAcceptOfOneSendIsReported() throws {
        let (run, tap) = try runOracles(b2(true))
        let v = try onlyViolation(run)
        let accepts = tap.serverEvents { if case .messageAccepted = $0 { true } else { false } }
        #expect(accepts.count == 2)
        let second = try #require(accepts.last)
        guard case .event(.messageAccepted(let m)) = second.effect else { Issue.record("not an accept"); return }
        #expect(m.clientUniqueId == tap.accepted[0].clientUniqueId)
        expectReport(v, oracle: "no-duplicate", device: "alice-phone", conversation: ConversationKey(.privateChat, "bob"),
                     index: second.index, time: second.time, scenario: "dup-b2")
        #expect(v.messageUId == m.messageUId)
        #expect(v.detail.contains(tap.accepted[0].messageUId) && v.detail.contains("clientUniqueId"), "\(v.detail)")
        expectPath(v.path, contains: ["server accepted from alice-phone"])
    }

    @Test func b2OffIsAbsorbed() throws {
        let (run, tap) = try runOracles(b2(false))
        expectClean(run)
        #expect(tap.accepted.count == 1)
        #expect(!tap.serverEvents { if case .duplicateSendAbsorbed = $0 { true } else { false } }.isEmpty)
        let bob = try run.device("bob-phone")
        #expect(try run.world.store(ofDevice: bob).messageCount(in: ConversationKey(.privateChat, "alice")) == 1)
    }

    /// The documented exception: the sender's own message coming back from the server (the
    /// sendbox pull after the lost PUBACK) completes its own row instead of adding one.
    @Test func ownCopyCompletingItsOwnRowIsNotADuplicate() throws {
        let (run, tap) = try runOracles(b2(false, sync: true, resend: false))
        expectClean(run)
        let alice = try run.device("alice-phone")
        let uid = try #require(tap.accepted.first?.messageUId)
        #expect(tap.accepted.count == 1)
        let inserted = tap.clientEffects(on: alice) { if case .callback(.messageInserted) = $0 { true } else { false } }
        guard case .callback(.messageInserted(let row))? = inserted.first?.effect else { Issue.record("no send"); return }
        // Completed after the reconnect, on the row the send inserted; no new row.
        let completions = tap.clientEffects(on: alice) { if case .callback(.sendResult(_, uid, _, nil)) = $0 { true } else { false } }
        #expect(completions.count == 1)
        let c = try #require(completions.first)
        #expect(c.time > SimTime.zero + .milliseconds(5_070))
        guard case .callback(.sendResult(let id, _, _, _)) = c.effect else { return }
        #expect(id == row.messageId)
        #expect(try run.world.store(ofDevice: alice).countRows(withUId: uid) == 1)
        #expect(try run.world.store(ofDevice: alice).message(id: row.messageId)?.sentStatus == .sent)
    }

    /// Quitting a room clears its messages; the join pull bringing them back is not a duplicate.
    @Test func rejoinAfterQuitReDeliversWithoutViolation() throws {
        let s = try duo("dup-room", extra: #", "chatrooms": [{"id": "hall", "members": ["alice", "bob"], "joinCount": 10}]"#, script: """
            {"at": "5s", "device": "bob-phone", "action": "send", "to": "chatroom:hall", "text": "hello", "count": 2, "interval": "100ms"},
            {"at": "8s", "device": "alice-phone", "action": "quit", "room": "hall"},
            {"at": "10s", "device": "alice-phone", "action": "join", "room": "hall", "count": 10}
            """)
        let (run, tap) = try runOracles(s)
        expectClean(run)
        let alice = try run.device("alice-phone")
        #expect(tap.accepted.count == 2)
        for m in tap.accepted { #expect(tap.stores(of: m.messageUId, on: alice).count == 2) }
        #expect(try run.world.store(ofDevice: alice).messageCount(in: ConversationKey(.chatroom, "hall")) == 2)
    }

    /// B10: a send that fails offline lands in a second conversation row for the same peer.
    func b10(_ on: Bool) throws -> Scenario {
        try duo("dup-b10", client: bugs(on ? ["B10"] : []), script: """
            {"at": "3s", "device": "bob-phone", "action": "send", "to": "private:alice", "text": "lunch?"},
            {"at": "5s", "device": "alice-phone", "action": "network", "state": "none"},
            {"at": "6s", "device": "alice-phone", "action": "send", "to": "private:bob", "text": "sure"},
            {"at": "8s", "device": "alice-phone", "action": "network", "state": "wifi"}
            """)
    }

    @Test func b10DuplicateConversationIsReportedAtTheFailedSend() throws {
        let (run, tap) = try runOracles(b10(true))
        let v = try onlyViolation(run)
        let alice = try run.device("alice-phone")
        let inserted = try #require(tap.clientEffects(on: alice) { if case .callback(.messageInserted) = $0 { true } else { false } }.first)
        guard case .callback(.messageInserted(let row)) = inserted.effect else { return }
        #expect(row.conversation != ConversationKey(.privateChat, "bob"))
        #expect(row.conversation.targetId.trimmingCharacters(in: .whitespaces) == "bob")
        #expect(inserted.time == SimTime.zero + .seconds(6))
        expectReport(v, oracle: "no-duplicate", device: "alice-phone", conversation: row.conversation,
                     index: inserted.index, time: inserted.time, scenario: "dup-b10")
        #expect(v.messageUId == nil && v.path.isEmpty)
        #expect(v.detail.contains("duplicate conversation"), "\(v.detail)")
    }

    @Test func b10OffKeepsOneConversation() throws {
        let (run, _) = try runOracles(b10(false))
        expectClean(run)
        let alice = try run.device("alice-phone")
        let keys = try run.world.store(ofDevice: alice).conversationList().map(\.key)
        #expect(keys == [ConversationKey(.privateChat, "bob")])
    }
}
