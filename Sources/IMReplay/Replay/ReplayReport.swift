import IMClient
import IMStore
import IMWire

/// Where the replayed core first did something else than the captured one.
public struct ReplayDivergence: Sendable, Codable, Equatable {
    /// Capture line of the first captured output that differs (or of the input, when the
    /// replayed core produced an output the capture does not have).
    public var line: Int
    public var t: Int64
    public var time: String
    /// The input whose outputs differ.
    public var inputLine: Int
    public var input: String
    /// Index of the first differing output of that input.
    public var index: Int
    /// The input's captured and replayed outputs, one line each.
    public var captured: [String]
    public var replayed: [String]
    /// When an outbound frame differs: both decoded in full.
    public var frameDiff: [String]
    /// Capture records around the divergence (`line: text`), the divergent one marked `▶`.
    public var context: [String]
}

/// The user-visible outcome of the replayed device (the shape of `Ledger.DeviceLedger`, with
/// absolute server ms: a capture does not know the server's epoch).
public struct ReplayLedger: Sendable, Codable, Equatable {
    public struct Message: Sendable, Codable, Equatable {
        public var uid: String?
        public var from: String
        public var direction: String
        public var type: String
        public var sentTime: Int64
        public var status: String
        public var read: Bool
    }
    public struct Conversation: Sendable, Codable, Equatable {
        public var conversation: String
        public var unread: Int
        /// Oldest first (the order the app's history shows).
        public var messages: [Message]
    }
    public var device: String
    public var user: String
    /// Connection statuses the app was told, consecutive repeats collapsed.
    public var connection: [String]
    public var conversations: [Conversation]

    static func read(_ store: IMStore, identity: DeviceIdentity, statuses: [String]) -> ReplayLedger {
        var convs: [Conversation] = []
        for c in (try? store.conversationList()) ?? [] {
            var msgs: [StoredMessage] = []
            var before: Int64 = -1
            while true {
                let page = (try? store.history(in: c.key, before: before, count: 20)) ?? []
                msgs += page
                guard page.count == 20, let last = page.last else { break }
                before = last.messageId
            }
            convs.append(Conversation(conversation: c.key.description, unread: c.unreadCount, messages: msgs.reversed().map {
                Message(uid: $0.messageUId, from: $0.senderUserId, direction: $0.direction == .send ? "out" : "in", type: $0.objectName,
                        sentTime: $0.sentTime, status: $0.sentStatus.description, read: $0.receivedStatus.contains(.read))
            }))
        }
        convs.sort { $0.conversation < $1.conversation }
        return ReplayLedger(device: identity.deviceId, user: identity.userId, connection: statuses, conversations: convs)
    }

    public var text: [String] {
        var lines = ["\(device) (\(user)): connection " + connection.joined(separator: " → ")]
        for c in conversations {
            lines.append("  \(c.conversation): \(c.messages.count) message(s), unread \(c.unread)")
            for m in c.messages.suffix(8) {
                lines.append("    \(m.direction == "out" ? "→" : "←") \(m.uid ?? "-") \(m.type) from \(m.from) sentTime \(m.sentTime) \(m.status)\(m.read ? " read" : "")")
            }
            if c.messages.count > 8 { lines.insert("    … \(c.messages.count - 8) older", at: lines.count - 8) }
        }
        return lines
    }
}

/// What `imsim replay` prints: did the replay match, where it first diverged, what the checks
/// found, and the replayed device's ledger.
public struct ReplayReport: Sendable, Codable {
    public var capture: String
    public var device: String
    public var user: String
    public var sdk: String
    public var recordedBugs: [String]
    public var replayedBugs: [String]
    public var records: Int
    public var inputs: Int
    public var outputsCompared: Int
    public var divergence: ReplayDivergence?
    /// Inputs whose replayed outputs differed from the captured ones.
    public var divergentInputs: Int
    /// The replay ran with other bug switches than the recording, so outputs are expected to
    /// differ; the verdict then rests on the violations only.
    public var divergenceExpected: Bool
    public var violations: [ReplayViolation]
    public var ledger: ReplayLedger
    public var notes: [String]

    public var matched: Bool { divergence == nil }

    /// 0: matches and no violation; 1: a divergence (with the recorded switches) or a violation.
    public var exitCode: Int32 {
        if !violations.isEmpty { return 1 }
        if divergence != nil && !divergenceExpected { return 1 }
        return 0
    }

    public var text: String {
        var l: [String] = []
        l.append("imsim replay \(capture)")
        l.append("  device \(device) (user \(user)), recorded by \(sdk) with bugs [\(recordedBugs.joined(separator: ","))]; replayed with [\(replayedBugs.joined(separator: ","))]")
        l.append("  \(records) records, \(inputs) inputs fed, \(outputsCompared) outputs compared")
        for n in notes { l.append("  note: \(n)") }
        if let d = divergence {
            l.append("  ✘ diverged at line \(d.line) (t=\(d.time))\(divergenceExpected ? " — expected: the bug switches differ from the recording" : ""); \(divergentInputs) input(s) differ in all")
            l.append("    after input line \(d.inputLine): \(d.input)")
            l.append("    captured output #\(d.index):")
            for (i, s) in d.captured.enumerated() { l.append("      \(i == d.index ? "▶" : " ") \(s)") }
            if d.captured.isEmpty { l.append("        (none)") }
            l.append("    replayed output #\(d.index):")
            for (i, s) in d.replayed.enumerated() { l.append("      \(i == d.index ? "▶" : " ") \(s)") }
            if d.replayed.isEmpty { l.append("        (none)") }
            if !d.frameDiff.isEmpty {
                l.append("    the frames, decoded:")
                for s in d.frameDiff { l.append("      \(s)") }
            }
            if !d.context.isEmpty {
                l.append("    context:")
                for s in d.context { l.append("      \(s)") }
            }
        } else {
            l.append("  ✔ replay matches the capture (every output, byte for byte)")
        }
        if violations.isEmpty {
            l.append("  checks: no violations")
        } else {
            l.append("  checks: \(violations.count) violation(s)")
            for v in violations.prefix(10) { l.append(v.text.split(separator: "\n").map { "    " + $0 }.joined(separator: "\n")) }
        }
        l.append("  ledger:")
        for s in ledger.text { l.append("    " + s) }
        return l.joined(separator: "\n")
    }
}
