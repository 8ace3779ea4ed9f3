import IMWire

/// A request in flight: a PUBLISH qos 1 waiting for its PUBACK, or a QUERY waiting for its
/// QUERYACK. Each has a 30 s `requestTimeout` timer.
enum PendingRequest: Sendable {
    /// A user message (`send` / `resend`).
    case message(OutgoingSend)
    /// `recall(messageId)`: the RC:RcCmd on `recallMsg`.
    case recall(messageId: Int64, conversation: ConversationKey, objectName: String, messageUId: String)
    /// A command message without a row (RC:ReadNtf).
    case command(objectName: String, conversation: ConversationKey)
    /// `pullMsg` of the inbox sync.
    case pull
    case join(roomId: String, kind: JoinKind)
    case quit(roomId: String)
    case chatroomPull(roomId: String, isJoinPull: Bool)
    case pullKV(roomId: String, generation: Int)
    case changeKV(roomId: String, key: String, remove: Bool)
    case remoteHistory(ConversationKey)
    case readTime(ConversationKey)

    /// QUERY (answered by QUERYACK) rather than PUBLISH (answered by PUBACK).
    var isQuery: Bool {
        switch self {
        case .message, .recall, .command: false
        default: true
        }
    }

    /// Short name for notes.
    var what: String {
        switch self {
        case .message(let s): "send \(s.objectName) row \(s.messageId)"
        case .recall(let id, _, _, _): "recall row \(id)"
        case .command(let name, let c): "\(name) \(c)"
        case .pull: "pullMsg"
        case .join(let r, let k): "\(k.topic) \(r)"
        case .quit(let r): "exitChrm \(r)"
        case .chatroomPull(let r, _): "chrmPull \(r)"
        case .pullKV(let r, _): "pullKV \(r)"
        case .changeKV(let r, let k, let remove): "\(remove ? "delKV" : "setKV") \(r) \(k)"
        case .remoteHistory(let c): "history \(c)"
        case .readTime(let c): "updRRTime \(c)"
        }
    }
}

enum JoinKind: Sendable, Hashable {
    case join
    case joinExisting
    case rejoin

    var topic: Topic { self == .rejoin ? .joinChrmR : .joinChrm }
}

/// A user message on the wire.
struct OutgoingSend: Sendable, Hashable {
    /// The row (0: a type that is not stored).
    var messageId: Int64
    var clientUniqueId: Int64
    var conversation: ConversationKey
    var objectName: String
    /// Device ms time of the send (B4 keeps it as sentTime).
    var localTime: Int64
}

/// Requests in flight by message id. One counter numbers PUBLISH and QUERY alike, so an id is
/// unique among requests in flight; the kind is checked against the reply's frame type.
struct RequestTable: Sendable {
    private struct Entry: Sendable {
        var request: PendingRequest
        var sequence: UInt64
    }

    private var entries: [UInt16: Entry] = [:]
    private var sequence: UInt64 = 0

    var count: Int { entries.count }

    mutating func add(_ id: UInt16, _ request: PendingRequest) {
        sequence += 1
        entries[id] = Entry(request: request, sequence: sequence)
    }

    func peek(_ id: UInt16) -> PendingRequest? { entries[id]?.request }

    /// Removes the request answered by a PUBACK (`isQuery == false`) or QUERYACK.
    mutating func complete(_ id: UInt16, isQuery: Bool) -> PendingRequest? {
        guard let e = entries[id], e.request.isQuery == isQuery else { return nil }
        entries[id] = nil
        return e.request
    }

    /// Removes a request regardless of kind (timeouts).
    mutating func remove(_ id: UInt16) -> PendingRequest? {
        entries.removeValue(forKey: id)?.request
    }

    /// Removes every request, in the order they were issued (never Dictionary order).
    mutating func removeAll() -> [(id: UInt16, request: PendingRequest)] {
        let all = entries.sorted { $0.value.sequence < $1.value.sequence }.map { (id: $0.key, request: $0.value.request) }
        entries.removeAll(keepingCapacity: true)
        return all
    }
}
