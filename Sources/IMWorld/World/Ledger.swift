import Foundation
import IMClient
import IMStore
import IMWire
import SimKernel

/// Per device, the canonical user-visible outcome of a run: the conversation list with unread
/// counts, the messages of each conversation in the order the app shows them (history order) with
/// their status, and the connection states the app saw. Small, canonical, diffable across builds:
/// the regression suite diffs ledgers; trace digests catch every other change.
public struct Ledger: Codable, Sendable, Equatable {
    public var scenario: String
    public var seed: UInt64
    public var devices: [DeviceLedger]

    public init(scenario: String, seed: UInt64, devices: [DeviceLedger]) {
        self.scenario = scenario
        self.seed = seed
        self.devices = devices
    }

    public struct DeviceLedger: Codable, Sendable, Equatable {
        public var device: String
        public var user: String
        /// Connection statuses the app was told, consecutive repeats collapsed.
        public var connection: [String]
        public var conversations: [ConversationLedger]
    }

    public struct ConversationLedger: Codable, Sendable, Equatable {
        public var conversation: String
        public var unread: Int
        /// Oldest first.
        public var messages: [MessageLedger]
    }

    public struct MessageLedger: Codable, Sendable, Equatable {
        public var uid: String?
        public var from: String
        public var direction: String
        public var type: String
        /// ms after the server epoch (so ledgers do not depend on the epoch).
        public var sentTime: Int64
        public var status: String
        public var read: Bool
        /// FNV-1a of the content (the content itself stays private).
        public var content: String
    }

    /// Reads the ledger off a world (the stores as they are now, plus the statuses seen).
    public static func capture(_ world: World, statuses: LedgerStatusRecorder?) -> Ledger {
        let epoch = world.scenario.epochMs ?? Scenario.defaultEpochMs
        var devices: [DeviceLedger] = []
        devices.reserveCapacity(world.deviceCount)
        // One hex string per distinct content: a message is in the store of every device that has it.
        var contentHex: [UInt64: String] = [:]
        for d in 0..<world.deviceCount {
            // The conversation list (chatrooms left out), each conversation with its messages.
            let listed = (try? world.store(ofDevice: d).ledgerConversations()) ?? []
            var convs = listed.map { c in
                ConversationLedger(conversation: c.key.description, unread: c.unreadCount, messages: c.messages.map { m in
                    MessageLedger(m, epoch: epoch, content: Self.hex(m.contentHash, memo: &contentHex))
                })
            }
            convs.sort { $0.conversation < $1.conversation }
            devices.append(DeviceLedger(device: world.deviceId(d), user: world.userId(ofDevice: d),
                                        connection: statuses?.statuses(ofDevice: d) ?? [], conversations: convs))
        }
        return Ledger(scenario: world.scenario.name, seed: world.seed, devices: devices)
    }

    /// `Digest64.hex(hash)`, made once per hash (`memo` is only looked up, never iterated).
    private static func hex(_ hash: UInt64, memo: inout [UInt64: String]) -> String {
        if let s = memo[hash] { return s }
        let s = Digest64.hex(hash)
        memo[hash] = s
        return s
    }

    /// Canonical JSON: sorted keys, pretty-printed, stable across runs and processes.
    public func json() -> String {
        let enc = JSONEncoder()
        enc.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try! enc.encode(self), as: UTF8.self)
    }

    /// Canonical compact JSON (sorted keys, no spaces, `/` unescaped): byte for byte what
    /// `JSONEncoder` with `[.sortedKeys, .withoutEscapingSlashes]` writes, ~10× faster — a
    /// trace stores its ledger this way at the end of every recorded run.
    public func compactJSON() -> [UInt8] {
        var w = JSONBytes()
        w.out.reserveCapacity(256 + devices.count * 512)
        w.raw("{\"devices\":[")
        for (i, d) in devices.enumerated() {
            if i > 0 { w.raw(",") }
            w.raw("{\"connection\":[")
            for (j, c) in d.connection.enumerated() {
                if j > 0 { w.raw(",") }
                w.string(c)
            }
            w.raw("],\"conversations\":[")
            for (j, c) in d.conversations.enumerated() {
                if j > 0 { w.raw(",") }
                w.raw("{\"conversation\":"); w.string(c.conversation)
                w.raw(",\"messages\":[")
                for (k, m) in c.messages.enumerated() {
                    if k > 0 { w.raw(",") }
                    w.raw("{\"content\":"); w.string(m.content)
                    w.raw(",\"direction\":"); w.string(m.direction)
                    w.raw(",\"from\":"); w.string(m.from)
                    w.raw(m.read ? ",\"read\":true" : ",\"read\":false")
                    w.raw(",\"sentTime\":"); w.int(m.sentTime)
                    w.raw(",\"status\":"); w.string(m.status)
                    w.raw(",\"type\":"); w.string(m.type)
                    if let uid = m.uid { w.raw(",\"uid\":"); w.string(uid) }
                    w.raw("}")
                }
                w.raw("],\"unread\":"); w.int(Int64(c.unread))
                w.raw("}")
            }
            w.raw("],\"device\":"); w.string(d.device)
            w.raw(",\"user\":"); w.string(d.user)
            w.raw("}")
        }
        w.raw("],\"scenario\":"); w.string(scenario)
        w.raw(",\"seed\":"); w.uint(seed)
        w.raw("}")
        return w.out
    }

    public static func parse(_ data: Data) throws -> Ledger {
        try JSONDecoder().decode(Ledger.self, from: data)
    }

    /// Readable differences, one line each ("" when equal): what users saw differently.
    public func diff(against other: Ledger, limit: Int = 40) -> [String] {
        var out: [String] = []
        func add(_ s: String) { if out.count < limit { out.append(s) } }
        let mine = Dictionary(uniqueKeysWithValues: devices.map { ($0.device, $0) })
        let theirs = Dictionary(uniqueKeysWithValues: other.devices.map { ($0.device, $0) })
        for id in Set(mine.keys).union(theirs.keys).sorted() {
            guard let a = mine[id] else { add("+ device \(id) only in the second ledger"); continue }
            guard let b = theirs[id] else { add("- device \(id) only in the first ledger"); continue }
            if a.connection != b.connection {
                add("~ \(id) connection states: \(a.connection.joined(separator: "→")) vs \(b.connection.joined(separator: "→"))")
            }
            let ca = Dictionary(uniqueKeysWithValues: a.conversations.map { ($0.conversation, $0) })
            let cb = Dictionary(uniqueKeysWithValues: b.conversations.map { ($0.conversation, $0) })
            for conv in Set(ca.keys).union(cb.keys).sorted() {
                guard let x = ca[conv] else { add("+ \(id) \(conv): only in the second ledger"); continue }
                guard let y = cb[conv] else { add("- \(id) \(conv): only in the first ledger"); continue }
                if x.unread != y.unread { add("~ \(id) \(conv) unread \(x.unread) vs \(y.unread)") }
                if x.messages != y.messages {
                    let n = min(x.messages.count, y.messages.count)
                    let i = (0..<n).first { x.messages[$0] != y.messages[$0] } ?? n
                    let describe: (MessageLedger?) -> String = { m in
                        guard let m else { return "(none)" }
                        return "\(m.uid ?? "-") \(m.direction) \(m.type) t+\(m.sentTime) \(m.status)\(m.read ? " read" : "")"
                    }
                    add("~ \(id) \(conv): \(x.messages.count) vs \(y.messages.count) messages; first difference at #\(i): " +
                        "\(describe(i < x.messages.count ? x.messages[i] : nil)) vs \(describe(i < y.messages.count ? y.messages[i] : nil))")
                }
            }
        }
        return out
    }
}

extension Ledger.MessageLedger {
    /// `content` is `Digest64.hex(m.contentHash)`.
    init(_ m: LedgerMessage, epoch: Int64, content: String) {
        self.init(uid: m.messageUId, from: m.senderUserId, direction: m.direction == .send ? "out" : "in",
                  type: m.objectName, sentTime: m.sentTime - epoch, status: m.sentStatus.description,
                  read: m.receivedStatus.contains(.read), content: content)
    }
}

/// Records the connection statuses each app was told (for the ledger).
public final class LedgerStatusRecorder: WorldObserver {
    private var statuses: [[String]] = []
    public init() {}

    public func world(_ world: World, device d: Int, effects: [ClientEffect]) {
        for case .callback(.connectionStatus(let s)) in effects {
            while statuses.count <= d { statuses.append([]) }
            if statuses[d].last != s.description { statuses[d].append(s.description) }
        }
    }

    public func statuses(ofDevice d: Int) -> [String] { d < statuses.count ? statuses[d] : [] }
}

/// A minimal JSON byte writer with `JSONEncoder`'s escaping (`"`, `\\`, control characters;
/// `/` and non-ASCII left as they are).
private struct JSONBytes {
    var out: [UInt8] = []

    mutating func raw(_ s: StaticString) {
        s.withUTF8Buffer { out.append(contentsOf: $0) }
    }

    mutating func int(_ v: Int64) {
        if v < 0 { out.append(UInt8(ascii: "-")) }
        uint(v.magnitude)
    }

    mutating func uint(_ v: UInt64) {
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var n = 0
        var v = v
        withUnsafeMutableBytes(of: &digits) { d in
            repeat {
                d[n] = UInt8(ascii: "0") + UInt8(v % 10)
                v /= 10
                n += 1
            } while v > 0
            while n > 0 {
                n -= 1
                out.append(d[n])
            }
        }
    }

    mutating func string(_ s: String) {
        out.append(UInt8(ascii: "\""))
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "\""): out.append(UInt8(ascii: "\\")); out.append(b)
            case UInt8(ascii: "\\"): out.append(UInt8(ascii: "\\")); out.append(b)
            case 0x0A: out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "n"))
            case 0x0D: out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "r"))
            case 0x09: out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "t"))
            case 0x08: out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "b"))
            case 0x0C: out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "f"))
            case 0..<0x20:
                let hex: [UInt8] = Array("0123456789abcdef".utf8)
                out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                        hex[Int(b >> 4)], hex[Int(b & 15)]])
            default: out.append(b)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
