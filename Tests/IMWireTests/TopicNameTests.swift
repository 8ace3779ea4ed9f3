import Testing
import Foundation
@testable import IMWire

/// `Topic(rawValue:)` is hand-written (packed names, not the synthesized hash table): it must
/// accept exactly the 23 names and nothing else.
@Suite struct TopicNameTests {
    @Test func everyTopicParsesFromItsName() {
        #expect(Topic.allCases.count == 23)
        for topic in Topic.allCases {
            #expect(Topic(rawValue: topic.rawValue) == topic)
            // The same name built at run time (a heap or differently made string).
            #expect(Topic(rawValue: String(decoding: Array(topic.rawValue.utf8), as: UTF8.self)) == topic)
        }
    }

    @Test func nearMissesAndOtherNamesAreRefused() {
        var refused = ["", "p", "ppMsg", "ppMsgp", "PPMSGP", "ppMsgPP", "ppMsgP\u{0}", "\u{0}ppMsgP", " ppMsgP",
                       "joinChrmRR", "qryCHMsg2", "s_ntf ", "sntf", "updRRTim", "ppMsgÞ", "chatMsgS💬",
                       String(repeating: "ppMsgP", count: 3), "recallMsgrecallMsg"]
        for topic in Topic.allCases {   // every name with one byte changed, dropped or added
            let bytes = Array(topic.rawValue.utf8)
            refused.append(String(decoding: bytes.dropLast(), as: UTF8.self))
            refused.append(String(decoding: bytes + [UInt8(ascii: "x")], as: UTF8.self))
            var changed = bytes
            changed[changed.count / 2] ^= 0x20
            refused.append(String(decoding: changed, as: UTF8.self))
        }
        let names = Set(Topic.allCases.map(\.rawValue))
        for name in refused where !names.contains(name) {
            #expect(Topic(rawValue: name) == nil, "\(name.debugDescription)")
        }
    }

    @Test func codableStillUsesTheNames() throws {
        let data = try JSONEncoder().encode([Topic.joinChrmR, .s_ntf])
        #expect(String(decoding: data, as: UTF8.self) == #"["joinChrmR","s_ntf"]"#)
        #expect(try JSONDecoder().decode([Topic].self, from: data) == [.joinChrmR, .s_ntf])
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([Topic].self, from: Data(#"["joinChrmRx"]"#.utf8)) }
    }
}
