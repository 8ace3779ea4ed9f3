import Foundation
import Testing
@testable import IMWorld

/// `Ledger.compactJSON()` must be byte for byte what `JSONEncoder` writes with sorted keys and
/// unescaped slashes (traces store ledgers this way; readers decode them with `JSONDecoder`).
@Suite struct LedgerJSONTests {
    static func encoderJSON(_ l: Ledger) throws -> [UInt8] {
        let enc = JSONEncoder()
        enc.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return [UInt8](try enc.encode(l))
    }

    static let tricky: Ledger = {
        let m1 = Ledger.MessageLedger(uid: "BJ6A-Q2U4-\"quoted\"-\\", from: "u/1", direction: "in", type: "RC:TxtMsg",
                                      sentTime: -1_250, status: "received", read: true, content: "0123456789abcdef")
        let m2 = Ledger.MessageLedger(uid: nil, from: "ünïcødé 用户 🎉", direction: "out", type: "RC:Img\nMsg\t\r\u{8}\u{c}",
                                      sentTime: Int64.max, status: "sent", read: false, content: "\u{1}\u{1f}\u{7f}")
        let c = Ledger.ConversationLedger(conversation: "private:bob", unread: 3, messages: [m1, m2])
        let empty = Ledger.ConversationLedger(conversation: "group:g/1", unread: 0, messages: [])
        let d1 = Ledger.DeviceLedger(device: "alice-phone", user: "alice", connection: ["connecting", "connected"],
                                     conversations: [c, empty])
        let d2 = Ledger.DeviceLedger(device: "bob-web", user: "bob", connection: [], conversations: [])
        return Ledger(scenario: "tricky \"name\"", seed: UInt64.max, devices: [d1, d2])
    }()

    @Test func matchesJSONEncoderOnTrickyStrings() throws {
        let mine = Self.tricky.compactJSON()
        #expect(mine == (try Self.encoderJSON(Self.tricky)))
        #expect(try JSONDecoder().decode(Ledger.self, from: Data(mine)) == Self.tricky)
    }

    @Test func matchesJSONEncoderOnEmptyAndNegative() throws {
        let l = Ledger(scenario: "", seed: 0, devices: [])
        #expect(l.compactJSON() == (try Self.encoderJSON(l)))
        let m = Ledger.MessageLedger(uid: "x", from: "a", direction: "in", type: "t", sentTime: Int64.min,
                                     status: "s", read: false, content: "")
        let one = Ledger(scenario: "s", seed: 7, devices: [Ledger.DeviceLedger(
            device: "d", user: "u", connection: ["c"],
            conversations: [Ledger.ConversationLedger(conversation: "c", unread: -2, messages: [m])])])
        #expect(one.compactJSON() == (try Self.encoderJSON(one)))
    }

    /// Every escape `JSONEncoder` makes, at the start, middle and end of a string and back to
    /// back, among runs that need none (slashes, DEL, non-ASCII, U+2028).
    @Test func matchesJSONEncoderOnEveryEscape() throws {
        let controls = (0..<0x20).map { String(UnicodeScalar(UInt8($0))) }
        let specials = controls + ["\"", "\\", "/", "\u{7f}", "é", "用户", "🎉", "\u{2028}", "\u{2029}", ""]
        var strings: [String] = []
        for e in specials {
            strings += [e, e + "abc", "abc" + e, "ab" + e + "cd", e + e, "a" + e + "b" + e]
        }
        strings.append(specials.joined())
        strings.append(String(repeating: "long run without escapes / ", count: 40) + "\"" + String(repeating: "x", count: 100))
        let messages = strings.map { x in
            Ledger.MessageLedger(uid: x, from: x, direction: x, type: x, sentTime: 0, status: x, read: true, content: x)
        }
        let l = Ledger(scenario: strings.joined(separator: "|"), seed: 1, devices: [Ledger.DeviceLedger(
            device: "d\"", user: "u\\", connection: strings,
            conversations: [Ledger.ConversationLedger(conversation: "c\n", unread: 0, messages: messages)])])
        let mine = l.compactJSON()
        #expect(mine == (try Self.encoderJSON(l)))
        #expect(try JSONDecoder().decode(Ledger.self, from: Data(mine)) == l)
    }

    /// The writer looks at 8 bytes a step: an escape at every position of strings up to three
    /// steps long (the last step overlapping), next to multi-byte characters.
    @Test func matchesJSONEncoderAtEveryPositionOfAStep() throws {
        var strings: [String] = []
        for n in 1...24 {
            strings.append(String(repeating: "x", count: n))
            strings.append(String(repeating: "é", count: n))
            for p in 0..<n {
                for e in ["\"", "\\", "\u{1}", "\u{1f}", "\n"] {
                    let x = String(repeating: "x", count: p) + e + String(repeating: "x", count: n - p - 1)
                    strings.append(x)
                    strings.append(x.replacingOccurrences(of: "x", with: "é"))
                }
            }
        }
        let l = Ledger(scenario: "steps", seed: 2, devices: [Ledger.DeviceLedger(
            device: "d", user: "u", connection: strings, conversations: [])])
        #expect(l.compactJSON() == (try Self.encoderJSON(l)))
    }

    @Test func matchesJSONEncoderOnARealRun() throws {
        let run = try ScenarioRun(scenario: try pair(duration: "30s"), seed: 3)
        _ = run.run()
        let l = run.ledger()
        #expect(!l.devices.isEmpty)
        #expect(l.compactJSON() == (try Self.encoderJSON(l)))
    }
}
