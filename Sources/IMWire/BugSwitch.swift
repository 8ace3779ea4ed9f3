/// The known production bugs of im-semantics §8, each a switch in the real code path of the
/// client or the server (all off by default). `Docs/bugs.md` describes each one.
public enum BugSwitch: String, Sendable, Hashable, Codable, CaseIterable, Comparable, CustomStringConvertible {
    case B1, B2, B3, B4, B5, B6, B7, B8, B9, B10, B11, B12, B13, B14, B15, B16

    public var number: Int { Int(rawValue.dropFirst())! }
    public static func < (a: Self, b: Self) -> Bool { a.number < b.number }
    public var description: String { rawValue }

    /// Which core carries the switch. B9, the protocol hazard (offline kick + 50-message rejoin
    /// cap), is a server switch: off, the server refuses the SDK's automatic rejoin after an
    /// offline kick so the app is told; on, it lets it back in silently. B12 is a policy knob.
    public enum Side: String, Sendable { case client, server }

    public var side: Side {
        switch self {
        case .B2, .B9, .B12, .B13: .server
        default: .client
        }
    }

    /// One line: what goes wrong.
    public var summary: String {
        switch self {
        case .B1: "s_msg accepted while a pull is running; the pull returns it again → duplicate"
        case .B2: "resend after a lost PUBACK without idempotency → the server stores the message twice"
        case .B3: "inbox cursor moved to a direct delivery's dataTime → later pull skips older messages (loss)"
        case .B4: "outgoing messages ordered by the (skewed) device clock instead of server time"
        case .B5: "live messages inserted while history is paged → gap in history"
        case .B6: "after a ping timeout during connect, reconnect does not rejoin the chatroom"
        case .B7: "disconnect does not clear chatroom state / KV caches → stale membership, rejoin skipped"
        case .B8: "joining twice in a row → the second join never gets attributes (34004 forever)"
        case .B9: "offline > 30 s (or 31 messages) → kicked; rejoin pulls at most 50 → silent loss"
        case .B10: "a send that failed while offline produces a duplicate conversation"
        case .B11: "backoff not reset on network change / foreground → reconnect up to 64 s late"
        case .B12: "reconnectKickEnable = true not honoured: a retrying device still kicks the mobile device in use"
        case .B13: "low-priority chatroom messages take reserved high slots → high-priority drops"
        case .B14: "recall of an unread message does not decrement unread → badge drift"
        case .B15: "cursor saved in its own transaction before the received rows commit → a storage fault between them loses the rows for good"
        case .B16: "send acknowledged to the app before its SENT update commits → disk full: the app shows sent, the store keeps SENDING"
        }
    }

    /// Parses `"B1,B3"` / `"b1 b3"`; unknown ids are an error naming the id.
    public static func parseList(_ text: String) throws(BugListError) -> [BugSwitch] {
        var out: [BugSwitch] = []
        for raw in text.split(whereSeparator: { $0 == "," || $0 == " " }) where !raw.isEmpty {
            guard let b = BugSwitch(rawValue: raw.uppercased()) else { throw BugListError(id: String(raw)) }
            if !out.contains(b) { out.append(b) }
        }
        return out.sorted()
    }
}

public struct BugListError: Error, Sendable, CustomStringConvertible {
    public var id: String
    public var description: String { "unknown bug switch \"\(id)\" (known: B1…B16)" }
}
