import IMStore
import IMWire
import SimKernel
@testable import IMClient

/// Drives one `ClientCore` with hand-built server frames and decodes what it writes.
struct Harness {
    var core: ClientCore
    let store: IMStore
    /// Device time of the next input (ms).
    var now: Int64 = 1_000_000
    /// Effects of the last input.
    var effects: [ClientEffect] = []
    /// Client frames written by the last input.
    var frames: [Frame] = []
    /// The latest QUERY written per topic, over all inputs.
    var latestQuery: [String: Frame.Query] = [:]
    private var clientStream = StreamDecoder(direction: .clientToServer)
    private var serverMessageId: UInt16 = 0
    static let user = "alice"

    init(config: ClientConfig = ClientConfig(), store: IMStore? = nil, device: String = "phone", platform: Platform = .mobile) {
        let s = store ?? (try! IMStore.inMemory())
        self.store = s
        core = ClientCore(identity: DeviceIdentity(userId: Self.user, deviceId: device, platform: platform), config: config, store: s)
    }

    @discardableResult
    mutating func feed(_ input: ClientInput) -> [ClientEffect] {
        effects = core.handle(input, now: DeviceTime(milliseconds: now))
        frames = []
        for e in effects {
            switch e {
            case .openConnection: clientStream = StreamDecoder(direction: .clientToServer)
            case .send(let bytes, _): frames += try! clientStream.feed(bytes)
            default: break
            }
        }
        for case .query(let q) in frames { latestQuery[q.topic] = q }
        return effects
    }

    @discardableResult
    mutating func api(_ call: ClientAPICall) -> [ClientEffect] { feed(.api(call)) }

    @discardableResult
    mutating func fire(_ timer: ClientTimer) -> [ClientEffect] { feed(.timerFired(timer)) }

    /// Server frames as one read.
    @discardableResult
    mutating func server(_ frames: Frame...) -> [ClientEffect] { server(frames) }

    @discardableResult
    mutating func server(_ frames: [Frame]) -> [ClientEffect] {
        var bytes: [UInt8] = []
        for f in frames { try! StreamFraming.encode(f, direction: .serverToClient, into: &bytes) }
        return feed(.transport(.bytes(bytes)))
    }

    mutating func nextServerId() -> UInt16 {
        serverMessageId = serverMessageId == .max ? 1 : serverMessageId + 1
        return serverMessageId
    }

    // MARK: Scenario steps

    /// connect → opened → CONNACK accepted (the first pull is left running).
    mutating func connect(timestamp: Int64 = 1_000_000, timeLimit: Int32 = 0) {
        api(.connect(token: "tok-alice", timeLimitSeconds: timeLimit))
        feed(.transport(.opened))
        server(.connack(Frame.Connack(status: .accepted, session: .init(userId: Self.user, sessionId: "S1", timestamp: timestamp))))
    }

    /// A reconnect attempt after a drop: fire the reconnect timer, open, CONNACK.
    mutating func reconnect(timestamp: Int64) {
        fire(.reconnect)
        feed(.transport(.opened))
        server(.connack(Frame.Connack(status: .accepted, session: .init(userId: Self.user, sessionId: "S2", timestamp: timestamp))))
    }

    /// connect and answer the first pull with an empty, finished page: connected and in sync.
    mutating func connectInSync(timestamp: Int64 = 1_000_000) {
        connect(timestamp: timestamp)
        answerPull(page([], syncTime: 0))
    }

    /// Answers the latest pullMsg QUERY the client wrote.
    @discardableResult
    mutating func answerPull(_ body: RMTPDownStreamMessages, status: UInt16 = 0) -> [ClientEffect] {
        let q = latestQuery[Topic.pullMsg.rawValue]!
        return server(.queryAck(try! Frame.QueryAck(messageId: q.messageId, date: 1000, status: status, message: body)))
    }

    /// Answers the latest QUERY on `topic` (of any earlier input).
    @discardableResult
    mutating func answer(_ topic: Topic, status: UInt16 = 0, body: [UInt8] = [], qos: QoS = .atLeastOnce) -> [ClientEffect] {
        let q = latestQuery[topic.rawValue]!
        return server(.queryAck(Frame.QueryAck(flags: FrameFlags(qos: qos), messageId: q.messageId, date: 1000, status: status, body: body)))
    }

    /// The last QUERY on `topic` among the frames of the last input.
    func lastQuery(_ topic: Topic) -> Frame.Query? {
        frames.reversed().compactMap { if case .query(let q) = $0, q.topic == topic.rawValue { q } else { nil } }.first
    }

    func queries(_ topic: Topic) -> [Frame.Query] {
        frames.compactMap { if case .query(let q) = $0, q.topic == topic.rawValue { q } else { nil } }
    }

    var publishes: [Frame.Publish] { frames.compactMap { if case .publish(let p) = $0 { p } else { nil } } }
    var pubacks: [UInt16] { frames.compactMap { if case .puback(let p) = $0 { p.messageId } else { nil } } }
    var queryConfirms: [UInt16] { frames.compactMap { if case .queryConfirm(let p) = $0 { p.messageId } else { nil } } }
}

// MARK: - Server-side builders

func page(_ list: [RMTPDownStreamMessage], syncTime: Int64, finished: Bool = true) -> RMTPDownStreamMessages {
    var p = RMTPDownStreamMessages()
    p.list = list
    p.syncTime = syncTime
    p.finished = finished
    return p
}

/// A DownStreamMessage of a private text from `from` (or one's own, `direction: .send`).
func down(from: String = "bob", uid: String, at dataTime: Int64, type: ConversationType = .privateChat,
          target: String? = nil, objectName: String = "RC:TxtMsg", content: String = #"{"content":"hi"}"#,
          persistent: MessagePersistent = .isCounted, direction: MessageDirection = .receive, retrieved: Bool = false,
          clientUniqueId: Int64? = nil) -> RMTPDownStreamMessage {
    var d = RMTPDownStreamMessage()
    d.fromUserID = from
    d.type = type.rawValue
    if let target { d.groupID = target }
    d.classname = objectName
    d.contentBytes = Array(content.utf8)
    d.dataTime = dataTime
    var status = DownStreamStatus(persistent: persistent)
    if retrieved { status.insert(.receivedByOtherDevice) }
    d.status = status.rawValue
    d.msgID = uid
    if direction == .send { d.direction = MessageDirection.send.rawValue }
    if let clientUniqueId { d.clientUniqueID = clientUniqueId }
    return d
}

func sMsg(_ d: RMTPDownStreamMessage, id: UInt16, qos: QoS = .atLeastOnce) -> Frame {
    .publish(try! Frame.Publish(flags: FrameFlags(qos: qos), date: UInt32(d.dataTime / 1000), topic: .s_msg,
                                targetId: d.fromUserID, messageId: id, message: d))
}

func sNtf(time: Int64, id: UInt16, room: String? = nil) -> Frame {
    var n = RMTPNotifyMsg()
    n.type = room == nil ? 1 : 2
    n.time = time
    if let room { n.chrmID = room }
    return .publish(try! Frame.Publish(flags: .none, date: UInt32(time / 1000), topic: .s_ntf, targetId: room ?? Harness.user,
                                       messageId: id, message: n))
}

func text(_ s: String) -> String { #"{"content":"\#(s)"}"# }

// MARK: - Effect inspection

extension Array where Element == ClientEffect {
    var callbacks: [AppCallback] { compactMap { if case .callback(let c) = $0 { c } else { nil } } }
    var notes: [ClientNote] { compactMap { if case .note(let n) = $0 { n } else { nil } } }
    var statuses: [ConnectionStatus] { callbacks.compactMap { if case .connectionStatus(let s) = $0 { s } else { nil } } }
    var connectErrors: [Int32] { callbacks.compactMap { if case .connectError(let c) = $0 { c } else { nil } } }
    var timersSet: [ClientTimer: SimDuration] {
        var d: [ClientTimer: SimDuration] = [:]
        for e in self { if case .setTimer(let t, let after) = e { d[t] = after } }
        return d
    }
    var cancelled: [ClientTimer] { compactMap { if case .cancelTimer(let t) = $0 { t } else { nil } } }
    var opens: Int { filter { if case .openConnection = $0 { true } else { false } }.count }
    var closes: Int { filter { if case .closeConnection = $0 { true } else { false } }.count }
    var received: [(message: StoredMessage, left: Int, offline: Bool, hasPackage: Bool)] {
        callbacks.compactMap { if case .received(let m, let l, let o, let h) = $0 { (m, l, o, h) } else { nil } }
    }
    var sendResults: [(messageId: Int64, uid: String?, sentTime: Int64, error: Int32?)] {
        callbacks.compactMap { if case .sendResult(let id, let uid, let t, let e) = $0 { (id, uid, t, e) } else { nil } }
    }
    var inserted: [StoredMessage] { callbacks.compactMap { if case .messageInserted(let m) = $0 { m } else { nil } } }
    var skips: [String] { notes.compactMap { if case .skipped(_, _, let r) = $0 { r } else { nil } } }
    var stateNotes: [(from: String, to: String, reason: String)] {
        notes.compactMap { if case .state(let f, let t, let r) = $0 { (f, t, r) } else { nil } }
    }
    var reconnectDelay: SimDuration? { timersSet[.reconnect] }
}
