import Foundation
import IMClient
import IMServer
import IMStore
import IMWire
import SimKernel
import Testing
@testable import IMWorld

/// The two script steps issue 22 left: the chatroom message-type whitelist changed at run time
/// (server API) and cloud history queries before / after a time (`remoteHistory`). Fixed links,
/// seed 1 (nothing random decides these runs: no workload, no faults).
@Suite struct ScriptActionRound2Tests {
    @Test func stepsParseAndRoundTrip() throws {
        let s = try duo("steps", script: """
            {"at": "1s", "action": "setChatroomMessageWhitelist", "types": ["app:Gift"]},
            {"at": "2s", "device": "bob-phone", "action": "remoteHistory", "conversation": "private:alice", "count": 5, "after": "3s"},
            {"at": "3s", "device": "bob-phone", "action": "remoteHistory", "conversation": "private:alice", "before": "2500ms"},
            {"at": "4s", "device": "bob-phone", "action": "remoteHistory", "conversation": "group:g1"}
            """)
        #expect(s.script.map(\.action) == [
            .server(.setChatroomMessageWhitelist(types: ["app:Gift"])),
            .remoteHistory(ConversationKey(.privateChat, "alice"), count: 5, .after(.seconds(3))),
            .remoteHistory(ConversationKey(.privateChat, "alice"), count: 20, .before(.milliseconds(2500))),
            .remoteHistory(ConversationKey(.group, "g1"), count: 20, .newest),
        ])
        let enc = JSONEncoder()
        enc.outputFormatting = [.sortedKeys]
        #expect(try Scenario.load(json: try enc.encode(s)) == s)
    }

    @Test func badStepsAreRefused() throws {
        for step in [
            #"{"at": "1s", "device": "bob-phone", "action": "remoteHistory", "conversation": "private:alice", "before": "1s", "after": "2s"}"#,
            #"{"at": "1s", "device": "bob-phone", "action": "remoteHistory", "conversation": "private:alice", "count": 0}"#,
            #"{"at": "1s", "device": "bob-phone", "action": "remoteHistory", "conversation": "private:alice", "count": 201}"#,
            #"{"at": "1s", "action": "remoteHistory", "conversation": "private:alice"}"#,
            #"{"at": "1s", "action": "setChatroomMessageWhitelist"}"#,
            #"{"at": "1s", "action": "setChatroomMessageWhitelist", "types": ["a"], "room": "r"}"#,
        ] {
            #expect(throws: (any Error).self, "\(step)") { try duo("bad", script: step) }
        }
    }

    /// Five messages from alice at 3, 4, 5, 6, 7 s; bob asks the cloud for 2 after 4.5 s (the
    /// oldest two after: #3, #4), 2 before 6.5 s (the newest two before: #3, #4), and the newest 2.
    @Test func remoteHistoryBeforeAndAfter() throws {
        let s = try duo("remote-history", script: """
            {"at": "3s", "device": "alice-phone", "action": "send", "to": "private:bob", "text": "m", "count": 5, "interval": "1s"},
            {"at": "10s", "device": "bob-phone", "action": "remoteHistory", "conversation": "private:alice", "count": 2, "after": "4500ms"},
            {"at": "11s", "device": "bob-phone", "action": "remoteHistory", "conversation": "private:alice", "count": 2, "before": "6500ms"},
            {"at": "12s", "device": "bob-phone", "action": "remoteHistory", "conversation": "private:alice", "count": 2}
            """)
        let (run, tap) = try runOracles(s)
        expectClean(run)
        let bob = try run.device("bob-phone")
        let pages: [[String]] = tap.clientEffects(on: bob) {
            if case .callback(.remoteHistory) = $0 { true } else { false }
        }.map {
            guard case .callback(.remoteHistory(_, let messages, let error)) = $0.effect else { return [] }
            #expect(error == nil)
            return messages.map(\.content)
        }
        #expect(pages == [[#"{"content":"m #3"}"#, #"{"content":"m #4"}"#],
                          [#"{"content":"m #3"}"#, #"{"content":"m #4"}"#],
                          [#"{"content":"m #4"}"#, #"{"content":"m #5"}"#]])
        // The after query goes out as HistoryMsgInput order 1 (the client API's after form).
        let calls = tap.clientInputs(on: bob) { if case .api(.getRemoteHistoryAfter) = $0 { true } else { false } }
        #expect(calls.count == 1)
    }

    /// A one-slot quota window: alice's two gifts in one window lose one to the quota until the
    /// server API puts the type on the message whitelist at 8 s; emptied at 12 s, the drop is back.
    /// The chatroom oracle (which re-derives the quota) follows the change and stays clean.
    @Test func messageWhitelistChangedAtRunTime() throws {
        let s = try duo("type-whitelist", server: #"{"chatroom": {"quotaCapacity": 1, "quotaReservedHigh": 1}}"#,
                        extra: #", "chatrooms": [{"id": "hall", "members": ["alice", "bob"]}]"#, script: """
            {"at": "5s", "device": "alice-phone", "action": "send", "to": "chatroom:hall", "type": "app:Gift", "content": "{\\"g\\":1}", "count": 2, "interval": "10ms"},
            {"at": "8s", "action": "setChatroomMessageWhitelist", "types": ["app:Gift"]},
            {"at": "9s", "device": "alice-phone", "action": "send", "to": "chatroom:hall", "type": "app:Gift", "content": "{\\"g\\":2}", "count": 2, "interval": "10ms"},
            {"at": "12s", "action": "setChatroomMessageWhitelist", "types": []},
            {"at": "13s", "device": "alice-phone", "action": "send", "to": "chatroom:hall", "type": "app:Gift", "content": "{\\"g\\":3}", "count": 2, "interval": "10ms"}
            """)
        let (run, tap) = try runOracles(s)
        expectClean(run)
        let bob = try run.device("bob-phone")
        let gifts = tap.clientEffects(on: bob) {
            if case .callback(.received(let m, _, _, _)) = $0 { m.objectName == "app:Gift" } else { false }
        }.compactMap { o -> String? in
            if case .callback(.received(let m, _, _, _)) = o.effect { m.content } else { nil }
        }
        #expect(gifts == [#"{"g":1}"#, #"{"g":2}"#, #"{"g":2}"#, #"{"g":3}"#])
        #expect(tap.drops.filter { $0.reason == .chatroomQuota }.count == 2)
        #expect(run.world.serverCore.chatroomWhitelistTypes.isEmpty)
    }
}
