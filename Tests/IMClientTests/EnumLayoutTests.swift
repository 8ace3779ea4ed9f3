import IMStore
import IMWire
import Testing
@testable import IMClient

/// The inputs and effects stay small enough to be copied as loaded values: at 58–74 bytes Swift
/// copied them whole through a value witness (~130 instructions) wherever they were switched
/// over outside IMClient — the trace recorder's per-record cost (Docs/performance.md, trace8).
@Suite("Enum layout")
struct EnumLayoutTests {
    @Test func inputsAndEffectsAreAtMostFiveWords() {
        #expect(MemoryLayout<ClientAPICall>.size <= 32)
        #expect(MemoryLayout<AppCallback>.size <= 32)
        #expect(MemoryLayout<ClientNote>.size <= 32)
        #expect(MemoryLayout<ClientInput>.size <= 40)
        #expect(MemoryLayout<ClientEffect>.size <= 40)
    }

    @Test func boxedCasesMatchAndCompareAsBefore() {
        let key = ConversationKey(.privateChat, "bob")
        let a = ClientAPICall.send(conversation: key, objectName: "RC:TxtMsg", content: "{}", pushText: nil, mentioned: false)
        #expect(a == .send(conversation: key, objectName: "RC:TxtMsg", content: "{}", pushText: nil, mentioned: false))
        #expect(a != .send(conversation: key, objectName: "RC:TxtMsg", content: "{ }", pushText: nil, mentioned: false))
        let e = ClientEffect.note(.stored(messageId: 7, messageUId: "U1", conversation: key, sentTime: 5, direction: .receive, isNew: true))
        guard case .note(let n) = e, case .stored(let id, let uid, let c, _, _, let isNew) = n else {
            Issue.record("pattern did not match")
            return
        }
        #expect(id == 7 && uid == "U1" && c == key && isNew)
    }
}
