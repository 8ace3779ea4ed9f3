/// One broken property, reported at the event that broke it.
public struct Violation: Sendable, Codable, Equatable {
    /// `no-duplicate`, `order`, `no-loss`, `unread`, `reconnect`, `chatroom`, `liveness`.
    public var oracle: String
    /// Index of the kernel event at which it was detected.
    public var eventIndex: UInt64
    public var time: String
    public var timeNanoseconds: Int64
    public var device: String?
    public var conversation: String?
    public var messageUId: String?
    public var detail: String
    /// The message's path: send → server accept → fan-out → store → app callback.
    public var path: [String]
    /// One command that reproduces the run up to this point.
    public var repro: String

    public init(oracle: String, eventIndex: UInt64, time: String, timeNanoseconds: Int64, device: String?,
                conversation: String?, messageUId: String?, detail: String, path: [String], repro: String) {
        self.oracle = oracle
        self.eventIndex = eventIndex
        self.time = time
        self.timeNanoseconds = timeNanoseconds
        self.device = device
        self.conversation = conversation
        self.messageUId = messageUId
        self.detail = detail
        self.path = path
        self.repro = repro
    }

    public var text: String {
        var s = "✘ \(oracle) at event \(eventIndex) (t=\(time))"
        if let device { s += " device \(device)" }
        if let conversation { s += " conversation \(conversation)" }
        if let messageUId { s += " message \(messageUId)" }
        s += "\n  \(detail)"
        if !path.isEmpty { s += "\n  path:\n" + path.map { "    " + $0 }.joined(separator: "\n") }
        s += "\n  repro: \(repro)"
        return s
    }
}
