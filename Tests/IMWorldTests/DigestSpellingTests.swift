import IMClient
import IMWire
import SimKernel
import Testing
@testable import IMWorld

/// Issue 30: the digest and the stream names are hashed from strings the runtime's reflection
/// used to build; the hand-spelled versions must be the very same strings (same digests, same
/// random streams).
@Suite struct DigestSpellingTests {
    static let rooms = ["room01", "", "a \"quoted\" room", "back\\slash", "tab\tnew\nline", "émoji 🎉", "\u{7}bell"]

    @Test func callbackDescriptionsAreTheReflectedOnes() {
        var callbacks: [AppCallback] = [
            .dbOpened(code: 0), .dbOpened(code: -7),
            .recalled(messageId: 42, conversation: ConversationKey(.privateChat, "u0001")),
            .recalled(messageId: -1, conversation: ConversationKey(ConversationType(rawValue: 12)!, "x")),
            .recallResult(messageId: 9, error: nil), .recallResult(messageId: 9, error: 25101),
        ]
        for r in Self.rooms {
            callbacks += [
                .chatroomJoined(roomId: r), .chatroomJoinFailed(roomId: r, code: 23410), .chatroomQuit(roomId: r),
                .chatroomKicked(roomId: r), .chatroomDestroyed(roomId: r), .chatroomKVSynced(roomId: r),
                .chatroomKVResult(roomId: r, key: r + "k", error: nil), .chatroomKVResult(roomId: "r", key: r, error: 23424),
            ]
        }
        for cb in callbacks {
            #expect(World.describedForDigest(cb) == String(describing: cb))
            #expect(World.describedHash(cb) == StableHash.fnv1a(String(describing: cb)))
        }
        // The others are still described by reflection.
        let kv = AppCallback.chatroomKVRemoved(roomId: "r", keys: ["a", "b"])
        #expect(World.describedForDigest(kv) == String(describing: kv))
    }

    @Test func conversationHashIsTheHashOfItsDescription() {
        var keys = ConversationType.allCases.map { ConversationKey($0, "u0001") }
        keys.append(ConversationKey(ConversationType(rawValue: 12)!, "room 🎉"))
        keys.append(ConversationKey(.group, ""))
        for k in keys {
            #expect(k.description == "\(k.type):\(k.targetId)")
            #expect(World.conversationHash(k) == StableHash.fnv1a(k.description))
        }
    }

    @Test func workloadStreamNamesAreTheCaseNames() {
        for kind in WorkloadKind.allCases {
            #expect(kind.streamName == "\(kind)")
            #expect(StreamKey.workload(user: "u0007", kind) == "workload/u0007/\(kind)")
        }
    }

    /// The Character loop `Coverage.shape` had before its ASCII fast path.
    static func shapeByCharacters(_ reason: String) -> String {
        var out = ""
        var inNumber = false
        for ch in reason {
            if ch.isASCII && ch.isNumber {
                if !inNumber { out.append("N") }
                inNumber = true
            } else {
                out.append(ch)
                inNumber = false
            }
        }
        return out
    }

    @Test func coverageShapeIsTheCharacterLoop() {
        let reasons = ["dataTime 1767225679701 older than room cursor 1767225683758", "", "7", "a1b22c333",
                       "line\r\n12\r\n", "s_ntf time 12 ≤ room cursor 345", "x1\u{301}2", "tab\t9 nul\u{0}0",
                       String(repeating: "9", count: 40) + "z"]
        for r in reasons {
            #expect(Coverage.shape(r) == Self.shapeByCharacters(r))
        }
    }
}
