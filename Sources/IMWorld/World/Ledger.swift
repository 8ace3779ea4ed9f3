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
        for d in 0..<world.deviceCount {
            let store = world.store(ofDevice: d)
            var convs: [ConversationLedger] = []
            for c in (try? store.conversationList()) ?? [] {
                var msgs: [StoredMessage] = []
                var before: Int64 = -1
                while true {
                    let page = (try? store.history(in: c.key, before: before, count: 20)) ?? []
                    msgs += page
                    guard page.count == 20, let last = page.last else { break }
                    before = last.messageId
                }
                convs.append(ConversationLedger(
                    conversation: c.key.description, unread: c.unreadCount,
                    messages: msgs.reversed().map { m in
                        MessageLedger(
                            uid: m.messageUId, from: m.senderUserId, direction: m.direction == .send ? "out" : "in",
                            type: m.objectName, sentTime: m.sentTime - epoch, status: m.sentStatus.description,
                            read: m.receivedStatus.contains(.read),
                            content: Digest64.hex(StableHash.fnv1a(m.content)))
                    }))
            }
            convs.sort { $0.conversation < $1.conversation }
            devices.append(DeviceLedger(device: world.deviceId(d), user: world.userId(ofDevice: d),
                                        connection: statuses?.statuses(ofDevice: d) ?? [], conversations: convs))
        }
        return Ledger(scenario: world.scenario.name, seed: world.seed, devices: devices)
    }

    /// Canonical JSON: sorted keys, pretty-printed, stable across runs and processes.
    public func json() -> String {
        let enc = JSONEncoder()
        enc.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try! enc.encode(self), as: UTF8.self)
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
