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
        read(world, statuses: statuses).ledger()
    }

    /// What the ledger is made of, read off a world: the part that needs the world (its stores),
    /// so a trace recorder can build the rest (`LedgerReading.ledger()`) off the simulation thread.
    public static func read(_ world: World, statuses: LedgerStatusRecorder?) -> LedgerReading {
        var devices: [LedgerReading.Device] = []
        devices.reserveCapacity(world.deviceCount)
        for d in 0..<world.deviceCount {
            // The conversation list (chatrooms left out), each conversation with its messages.
            let listed = (try? world.store(ofDevice: d).ledgerConversations()) ?? []
            devices.append(LedgerReading.Device(device: world.deviceId(d), user: world.userId(ofDevice: d),
                                                connection: statuses?.statuses(ofDevice: d) ?? [], listed: listed))
        }
        return LedgerReading(scenario: world.scenario.name, seed: world.seed,
                             epoch: world.scenario.epochMs ?? Scenario.defaultEpochMs, devices: devices)
    }

    /// `Digest64.hex(hash)`, made once per hash (`memo` is only looked up, never iterated).
    fileprivate static func hex(_ hash: UInt64, memo: inout [UInt64: String]) -> String {
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
        // About what a real ledger takes (~190 bytes a message), so the buffer rarely regrows.
        let messages = devices.reduce(0) { n, d in d.conversations.reduce(n) { $0 + $1.messages.count } }
        var w = JSONBytes(capacity: 256 + devices.count * 256 + messages * 200)
        w.raw("{\"devices\":[")
        for i in devices.indices {
            let d = devices[i]
            w.raw(i == 0 ? "{\"connection\":[" : ",{\"connection\":[")
            for j in d.connection.indices {
                if j > 0 { w.raw(",") }
                w.string(d.connection[j])
            }
            w.raw("],\"conversations\":[")
            for j in d.conversations.indices {
                let c = d.conversations[j]
                w.raw(j == 0 ? "{\"conversation\":" : ",{\"conversation\":"); w.string(c.conversation)
                w.raw(",\"messages\":[")
                for k in c.messages.indices {
                    let m = c.messages[k]
                    w.raw(k == 0 ? "{\"content\":" : ",{\"content\":"); w.string(m.content)
                    w.raw(",\"direction\":"); w.string(m.direction)
                    w.raw(",\"from\":"); w.string(m.from)
                    w.raw(m.read ? ",\"read\":true,\"sentTime\":" : ",\"read\":false,\"sentTime\":"); w.int(m.sentTime)
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
        return w.finish()
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

/// A ledger as read off a world's stores, not yet in its canonical form (`ledger()`): plain
/// values, built into the ledger on any thread.
public struct LedgerReading: Sendable {
    public struct Device: Sendable {
        var device: String
        var user: String
        var connection: [String]
        var listed: [LedgerConversation]
    }
    var scenario: String
    var seed: UInt64
    var epoch: Int64
    var devices: [Device]

    /// The ledger (`Ledger.capture`'s).
    public func ledger() -> Ledger {
        var out: [Ledger.DeviceLedger] = []
        out.reserveCapacity(devices.count)
        // One hex string per distinct content: a message is in the store of every device that has it.
        var contentHex: [UInt64: String] = [:]
        for d in devices {
            var convs = d.listed.map { c in
                Ledger.ConversationLedger(conversation: c.key.description, unread: c.unreadCount, messages: c.messages.map { m in
                    Ledger.MessageLedger(m, epoch: epoch, content: Ledger.hex(m.contentHash, memo: &contentHex))
                })
            }
            convs.sort { $0.conversation < $1.conversation }
            out.append(Ledger.DeviceLedger(device: d.device, user: d.user, connection: d.connection, conversations: convs))
        }
        return Ledger(scenario: scenario, seed: seed, devices: out)
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

    public func world(_ world: World, device d: Int, applied effects: AppliedClientEffects) {
        guard effects.statusCallbackCount > 0 else { return }
        for case .callback(.connectionStatus(let s)) in effects {
            while statuses.count <= d { statuses.append([]) }
            if statuses[d].last != s.description { statuses[d].append(s.description) }
        }
    }

    public func statuses(ofDevice d: Int) -> [String] { d < statuses.count ? statuses[d] : [] }
}

/// A minimal JSON byte writer with `JSONEncoder`'s escaping (`"`, `\\`, control characters;
/// `/` and non-ASCII left as they are). It grows its own buffer: an Array's `append` costs ~90
/// instructions a call, and a ledger makes ~25 calls a message.
private struct JSONBytes: ~Copyable {
    private var base: UnsafeMutablePointer<UInt8>
    private var count = 0
    private var capacity: Int

    init(capacity: Int) {
        self.capacity = max(capacity, 64)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    /// The bytes written.
    consuming func finish() -> [UInt8] {
        Array(UnsafeBufferPointer(start: base, count: count))
    }

    mutating func raw(_ s: StaticString) {
        write(UnsafeBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount))
    }

    mutating func int(_ v: Int64) {
        if v < 0 { byte(UInt8(ascii: "-")) }
        uint(v.magnitude)
    }

    mutating func uint(_ v: UInt64) {
        reserve(20)
        var n = 1
        var rest = v / 10
        while rest > 0 { n += 1; rest /= 10 }
        var v = v
        for i in stride(from: count + n - 1, through: count, by: -1) {
            base[i] = UInt8(ascii: "0") + UInt8(v % 10)
            v /= 10
        }
        count += n
    }

    mutating func string(_ s: String) {
        // The bytes borrowed where they are (every native string); a copy otherwise.
        if s.utf8.withContiguousStorageIfAvailable({ quoted($0) }) != nil { return }
        Array(s.utf8).withUnsafeBufferPointer { quoted($0) }
    }

    private mutating func quoted(_ bytes: UnsafeBufferPointer<UInt8>) {
        // A short string is copied as it is checked, byte by byte (a call to memcpy costs more).
        if bytes.count < 16 {
            reserve(bytes.count + 2)
            var p = base + count
            p.pointee = UInt8(ascii: "\"")
            for b in bytes {
                if Self.needsEscape(b) { return quotedWithEscapes(bytes) }
                p += 1
                p.pointee = b
            }
            (p + 1).pointee = UInt8(ascii: "\"")
            count += bytes.count + 2
            return
        }
        quotedWithEscapes(bytes)
    }

    private mutating func quotedWithEscapes(_ bytes: UnsafeBufferPointer<UInt8>) {
        byte(UInt8(ascii: "\""))
        // The runs between escapes are copied whole (most strings are one run).
        var run = 0
        while let i = Self.firstEscape(in: bytes, from: run) {
            write(UnsafeBufferPointer(rebasing: bytes[run..<i]))
            escape(bytes[i])
            run = i + 1
        }
        write(UnsafeBufferPointer(rebasing: bytes[run...]))
        byte(UInt8(ascii: "\""))
    }

    /// The first byte from `start` on that JSON escapes, looking at 8 bytes a step (the last
    /// step overlapping the one before when the rest is shorter).
    private static func firstEscape(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        var i = start
        if let base = bytes.baseAddress, bytes.count - start >= 8 {
            let raw = UnsafeRawPointer(base)
            func clean(_ at: Int) -> Bool {
                !mayNeedEscape(UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: at, as: UInt64.self)))
            }
            while i + 8 <= bytes.count, clean(i) { i += 8 }
            if i == bytes.count || (i + 8 > bytes.count && clean(bytes.count - 8)) { return nil }
        }
        while i < bytes.count {
            if needsEscape(bytes[i]) { return i }
            i += 1
        }
        return nil
    }

    /// Whether a byte of `w` is below 0x20, `"` or `\\` (the classic "has a zero byte" tests;
    /// exact for "some byte", the bytewise loop then finds which).
    @inline(__always)
    private static func mayNeedEscape(_ w: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        let quotes = w ^ 0x2222_2222_2222_2222, backslashes = w ^ 0x5C5C_5C5C_5C5C_5C5C
        let below = (w &- 0x2020_2020_2020_2020) & ~w
        let zeros = ((quotes &- ones) & ~quotes) | ((backslashes &- ones) & ~backslashes)
        return (below | zeros) & highs != 0
    }

    @inline(__always)
    private static func needsEscape(_ b: UInt8) -> Bool { JSONText.needsEscape(b) }

    private mutating func escape(_ b: UInt8) {
        JSONText.escape(b) { byte($0) }
    }

    @inline(__always)
    private mutating func byte(_ b: UInt8) {
        reserve(1)
        base[count] = b
        count += 1
    }

    @inline(__always)
    private mutating func write(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let from = bytes.baseAddress else { return }
        reserve(bytes.count)
        (base + count).initialize(from: from, count: bytes.count)
        count += bytes.count
    }

    @inline(__always)
    private mutating func reserve(_ n: Int) {
        if count + n > capacity { grow(to: count + n) }
    }

    private mutating func grow(to needed: Int) {
        capacity = max(needed, capacity * 2)
        let bigger = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        bigger.moveInitialize(from: base, count: count)
        base.deallocate()
        base = bigger
    }
}
