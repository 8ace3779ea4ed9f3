import IMClient
import IMWire
import SimKernel

/// A script of SDK calls with delays, run by `imsim client --script FILE` (Docs/runtime.md).
/// A JSON array of flat steps; the action vocabulary is the scenario script's device actions:
///
/// ```json
/// [{"after": "1s", "action": "send", "to": "private:bob", "text": "hi", "count": 3, "interval": "200ms"},
///  {"at": "10s", "action": "network", "state": "none"},
///  {"after": "2s", "action": "network", "state": "wifi"}]
/// ```
///
/// `after` is a delay after the previous step ended (a `send` with `count` ends at its last
/// repeat), `at` a time from the script's start, not before the previous step's start (one of
/// them, or neither = `after: 0`).
public struct ClientScript: Sendable, Equatable {
    public var steps: [Step]

    public struct Step: Sendable, Equatable {
        /// From the script's start.
        public var at: SimDuration
        public var action: Action
        public init(at: SimDuration, action: Action) {
            self.at = at
            self.action = action
        }
        /// When the step's last repeat runs.
        public var end: SimDuration {
            if case .send(_, _, _, _, let count, let interval, _) = action { return at + interval * Int64(count - 1) }
            return at
        }
    }

    public enum Action: Sendable, Equatable {
        case connect(timeLimitSeconds: Int32)
        case disconnect
        case logout
        /// `count` sends `interval` apart; content `{"content":"text"}` (with ` #k` when count > 1)
        /// or the raw JSON `content`.
        case send(to: ConversationKey, objectName: String, text: String?, content: String?, count: Int, interval: SimDuration, mention: Bool)
        /// Resend the last message whose send failed.
        case resend
        /// Recall the last message sent successfully.
        case recall
        /// Read receipt (private) + clear unread up to the conversation's latest message.
        case read(ConversationKey)
        case clearUnread(ConversationKey)
        case join(room: String, count: Int32)
        case joinExist(room: String, count: Int32)
        case quit(room: String)
        case setKV(room: String, key: String, value: String, autoDelete: Bool, force: Bool)
        case removeKV(room: String, key: String, force: Bool)
        case history(ConversationKey, count: Int32)
        case remoteHistory(ConversationKey, count: Int32)
        case background
        case foreground
        /// `none`, `wifi` or `cellular` (a change of interface drops the socket).
        case network(String)
        /// Nothing: keeps the client running until this time.
        case wait
    }

    public init(steps: [Step]) { self.steps = steps }

    /// When the last step has run.
    public var duration: SimDuration { steps.reduce(SimDuration.zero) { max($0, $1.end) } }

    /// Parses a script file's text. Errors name the step (0-based) and the field.
    public static func parse(_ text: String, path: String = "script") throws(RuntimeError) -> ClientScript {
        let root: JSONValue
        do {
            root = try JSONValue.parse(text)
        } catch {
            throw .script(path: path, step: nil, field: nil, message: "invalid JSON: \(error)")
        }
        guard let items = root.arrayValue else {
            throw .script(path: path, step: nil, field: nil, message: "expected a JSON array of steps")
        }
        var steps: [Step] = []
        var start = SimDuration.zero, end = SimDuration.zero
        for (i, item) in items.enumerated() {
            var p = StepParser(value: item, path: path, index: i)
            let step = try p.step(previousStart: start, previousEnd: end)
            start = step.at
            end = step.end
            steps.append(step)
        }
        return ClientScript(steps: steps)
    }
}

/// Reads one step, checking every field it touches and rejecting the others.
struct StepParser {
    let value: JSONValue
    let path: String
    let index: Int
    var used: Set<String> = ["action", "after", "at"]

    init(value: JSONValue, path: String, index: Int) {
        self.value = value
        self.path = path
        self.index = index
    }

    func fail(_ field: String?, _ message: String) -> RuntimeError {
        .script(path: path, step: index, field: field, message: message)
    }

    mutating func step(previousStart: SimDuration, previousEnd: SimDuration) throws(RuntimeError) -> ClientScript.Step {
        guard case .object(let members) = value else { throw fail(nil, "expected an object") }
        var seen: Set<String> = []
        for m in members where !seen.insert(m.key).inserted { throw fail(m.key, "appears twice") }
        guard let name = value["action"]?.stringValue else { throw fail("action", "missing or not a string") }
        var at = previousEnd
        switch (value["after"], value["at"]) {
        case (.some, .some): throw fail("at", "give either \"after\" or \"at\", not both")
        case (.some, nil): at = previousEnd + (try duration("after"))
        case (nil, .some):
            at = try duration("at")
            if at < previousStart { throw fail("at", "time goes backwards (\(at) < \(previousStart), the previous step's start)") }
        case (nil, nil): break
        }
        let action = try self.action(name)
        for m in members where !used.contains(m.key) {
            throw fail(m.key, "unknown field for action \"\(name)\" (known: \(used.sorted().joined(separator: ", ")))")
        }
        return ClientScript.Step(at: at, action: action)
    }

    mutating func action(_ name: String) throws(RuntimeError) -> ClientScript.Action {
        switch name {
        case "connect": return .connect(timeLimitSeconds: try int32("timeLimit", default: 0, range: 0...86_400))
        case "disconnect": return .disconnect
        case "logout": return .logout
        case "send":
            let count = Int(try int32("count", default: 1, range: 1...100_000))
            let text = try optionalString("text")
            let content = try optionalString("content")
            if text != nil && content != nil { throw fail("content", "give either \"text\" or \"content\"") }
            return .send(to: try conversation("to"), objectName: try optionalString("type") ?? "RC:TxtMsg", text: text,
                         content: content, count: count, interval: try optionalDuration("interval") ?? .zero,
                         mention: try bool("mention", default: false))
        case "resend": return .resend
        case "recall": return .recall
        case "read": return .read(try conversation("conversation"))
        case "clearUnread": return .clearUnread(try conversation("conversation"))
        case "join": return .join(room: try string("room"), count: try int32("count", default: 10, range: -1...50))
        case "joinExist": return .joinExist(room: try string("room"), count: try int32("count", default: 10, range: -1...50))
        case "quit": return .quit(room: try string("room"))
        case "setKV":
            return .setKV(room: try string("room"), key: try string("key"), value: try string("value"),
                          autoDelete: try bool("autoDelete", default: false), force: try bool("force", default: false))
        case "removeKV": return .removeKV(room: try string("room"), key: try string("key"), force: try bool("force", default: false))
        case "history": return .history(try conversation("conversation"), count: try int32("count", default: 20, range: 1...20))
        case "remoteHistory": return .remoteHistory(try conversation("conversation"), count: try int32("count", default: 20, range: 1...200))
        case "background": return .background
        case "foreground": return .foreground
        case "network":
            let s = try string("state")
            guard ["none", "wifi", "cellular"].contains(s) else { throw fail("state", "must be none, wifi or cellular") }
            return .network(s)
        case "wait": return .wait
        default:
            throw fail("action", "unknown action \"\(name)\" (known: connect, disconnect, logout, send, resend, recall, read, clearUnread, join, joinExist, quit, setKV, removeKV, history, remoteHistory, background, foreground, network, wait)")
        }
    }

    // MARK: Fields

    mutating func optionalString(_ key: String) throws(RuntimeError) -> String? {
        used.insert(key)
        guard let v = value[key] else { return nil }
        guard let s = v.stringValue else { throw fail(key, "expected a string") }
        return s
    }

    mutating func string(_ key: String) throws(RuntimeError) -> String {
        guard let s = try optionalString(key) else { throw fail(key, "missing") }
        guard !s.isEmpty else { throw fail(key, "must not be empty") }
        return s
    }

    mutating func bool(_ key: String, default d: Bool) throws(RuntimeError) -> Bool {
        used.insert(key)
        guard let v = value[key] else { return d }
        guard let b = v.boolValue else { throw fail(key, "expected true or false") }
        return b
    }

    mutating func int32(_ key: String, default d: Int32, range: ClosedRange<Int32>) throws(RuntimeError) -> Int32 {
        used.insert(key)
        guard let v = value[key] else { return d }
        guard let n = v.int64Value, let i = Int32(exactly: n), range.contains(i) else {
            throw fail(key, "expected an integer in \(range.lowerBound)…\(range.upperBound)")
        }
        return i
    }

    mutating func optionalDuration(_ key: String) throws(RuntimeError) -> SimDuration? {
        guard let text = try optionalString(key) else { return nil }
        let d: SimDuration
        do {
            d = try SimDuration(parsing: text)
        } catch {
            throw fail(key, error.description)
        }
        guard d >= .zero else { throw fail(key, "must not be negative") }
        return d
    }

    mutating func duration(_ key: String) throws(RuntimeError) -> SimDuration {
        guard let d = try optionalDuration(key) else { throw fail(key, "missing") }
        return d
    }

    mutating func conversation(_ key: String) throws(RuntimeError) -> ConversationKey {
        let text = try string(key)
        guard let colon = text.firstIndex(of: ":"),
              let type = ConversationType(name: String(text[..<colon])),
              text.index(after: colon) < text.endIndex else {
            throw fail(key, "expected TYPE:TARGET, e.g. \"private:bob\", \"group:g1\", \"chatroom:room1\", got \"\(text)\"")
        }
        return ConversationKey(type, String(text[text.index(after: colon)...]))
    }
}
