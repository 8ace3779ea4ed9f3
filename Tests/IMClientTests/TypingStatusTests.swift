import IMStore
import IMWire
import SimKernel
import Testing
@testable import IMClient

/// Issue 22 item 4. Seed rule (im-semantics §2): "Typing status (`RC:TypSts`) at most once per
/// 6 s per conversation: the SDK silently skips the extra ones" — and it is STATUS: qos 0 on
/// `ppMsgS`, never stored.
@Suite("Typing status")
struct TypingStatusTests {
    static func typing(_ h: inout Harness, to peer: String) -> Int {
        h.api(.send(conversation: ConversationKey(.privateChat, peer), objectName: "RC:TypSts",
                    content: #"{"typingContentType":"RC:TxtMsg"}"#, pushText: nil, mentioned: false))
        return h.publishes.filter { $0.topic == Topic.ppMsgS.rawValue }.count
    }

    @Test("at most one RC:TypSts per 6 s per conversation; others are skipped without an error")
    func throttled() throws {
        var h = Harness()
        h.connectInSync()
        #expect(Self.typing(&h, to: "bob") == 1)
        let sent = try #require(h.publishes.first)
        #expect(sent.flags.qos == .atMostOnce)
        h.now += 2_000
        #expect(Self.typing(&h, to: "bob") == 0)               // 2 s later: skipped
        #expect(h.effects.callbacks.contains { if case .sendResult(0, nil, 0, nil) = $0 { true } else { false } })
        #expect(Self.typing(&h, to: "carol") == 1)             // another conversation: its own 6 s
        h.now += 3_999
        #expect(Self.typing(&h, to: "bob") == 0)               // 5.999 s
        h.now += 1
        #expect(Self.typing(&h, to: "bob") == 1)               // 6 s: sent
        #expect(try h.store.conversationList().isEmpty)   // never stored
    }
}
