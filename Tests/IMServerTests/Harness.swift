import IMWire
import SwiftProtobuf
import SimKernel
import Testing
@testable import IMServer

/// Drives a `ServerCore` through `handle` with hand-built client frames and decodes what it sends.
struct Harness {
    static let t0: Int64 = 1_700_000_000_000

    var core: ServerCore
    var now: Int64 = Harness.t0
    var nextConnection: UInt64 = 1
    /// Per connection: the client's message-id counter.
    var clientIds: [ConnectionID: MessageIdCounter] = [:]
    /// Every effect so far (determinism checks).
    var log: [ServerEffect] = []

    init(config: ServerConfig = ServerConfig(), directory: ServerDirectory = Harness.directory()) {
        core = ServerCore(config: config, directory: directory)
    }

    /// Users alice, bob, carol, dave, erin… with tokens "tok-<user>"; group g1 = alice, bob, carol.
    static func directory(users: [String] = ["alice", "bob", "carol", "dave", "erin"]) -> ServerDirectory {
        var d = ServerDirectory()
        for u in users { d.addUser(u, token: "tok-\(u)") }
        d.groups["g1"] = ["alice", "bob", "carol"]
        return d
    }

    // MARK: Inputs

    @discardableResult
    mutating func run(_ input: ServerInput) -> Output {
        let fx = core.handle(input, now: now)
        log += fx
        return Output(effects: fx)
    }

    mutating func advance(ms: Int64) { now += ms }

    /// Advances to `time` and fires `timer`.
    @discardableResult
    mutating func fire(_ timer: ServerTimer, at time: Int64? = nil) -> Output {
        if let time { now = time }
        return run(.timerFired(timer))
    }

    mutating func newConnection() -> ConnectionID {
        let c = ConnectionID(nextConnection)
        nextConnection += 1
        run(.connectionAccepted(c))
        return c
    }

    @discardableResult
    mutating func send(_ c: ConnectionID, _ frame: Frame) -> Output {
        let bytes = try! StreamFraming.encode(frame, direction: .clientToServer, obfuscated: core.config.obfuscatedStreams)
        return run(.bytes(c, bytes))
    }

    mutating func nextId(_ c: ConnectionID) -> UInt16 { clientIds[c, default: MessageIdCounter()].next() }

    /// Accept + CONNECT; returns the connection and the output of the CONNECT.
    mutating func connect(_ user: String, device: String? = nil, platform: Platform = .mobile, token: String? = nil,
                          reconnect: Bool = false, kickEnable: Bool = false) -> (ConnectionID, Output) {
        let c = newConnection()
        let f = Frame.connect(Frame.Connect(keepAlive: 30, clientId: Frame.Connect.clientId(platform: platform, deviceId: device ?? "\(user)-\(platform)"),
                                            appKey: core.config.appKey, token: token ?? "tok-\(user)",
                                            isReconnect: reconnect, reconnectKickEnable: kickEnable))
        return (c, send(c, f))
    }

    /// Connects and expects CONNACK accepted.
    mutating func online(_ user: String, device: String? = nil, platform: Platform = .mobile) -> ConnectionID {
        let (c, out) = connect(user, device: device, platform: platform)
        #expect(out.connack(c)?.status == .accepted, "\(user) should connect")
        return c
    }

    /// A text message PUBLISH.
    mutating func sendText(_ c: ConnectionID, to target: String, _ text: String, topic: Topic = .ppMsgP,
                           clientUniqueId: Int64? = nil, messageId: UInt16? = nil) -> (UInt16, Output) {
        let up = try! RMTPUpStreamMessage(content: .text(TextContent(content: text)), flags: .normal, clientUniqueId: clientUniqueId)
        return publish(c, topic: topic, target: target, up, messageId: messageId)
    }

    mutating func publish(_ c: ConnectionID, topic: Topic, target: String, _ up: RMTPUpStreamMessage, qos: QoS = .atLeastOnce,
                          messageId: UInt16? = nil) -> (UInt16, Output) {
        let id = messageId ?? nextId(c)
        let out = send(c, .publish(try! Frame.Publish(flags: FrameFlags(qos: topic.isStatus ? .atMostOnce : qos), topic: topic,
                                                     targetId: target, messageId: id, message: up)))
        return (id, out)
    }

    /// A custom-type message with raw content.
    mutating func sendRaw(_ c: ConnectionID, to target: String, objectName: String, bytes: [UInt8], topic: Topic,
                          clientUniqueId: Int64? = nil) -> (UInt16, Output) {
        var up = RMTPUpStreamMessage()
        up.sessionID = UpStreamFlags(persistent: .isCounted).rawValue
        up.classname = objectName
        up.contentBytes = bytes
        if let clientUniqueId { up.clientUniqueID = clientUniqueId }
        return publish(c, topic: topic, target: target, up)
    }

    mutating func query(_ c: ConnectionID, _ topic: Topic, target: String, _ body: some SwiftProtobuf.Message) -> (UInt16, Output) {
        let id = nextId(c)
        return (id, send(c, .query(try! Frame.Query(topic: topic, targetId: target, messageId: id, message: body))))
    }

    mutating func pull(_ c: ConnectionID, user: String, syncTime: Int64, sendBoxSyncTime: Int64 = 0, isPullSend: Bool = false)
        -> (UInt16, Output)
    {
        var r = RMTPSyncRequestMsg()
        r.syncTime = syncTime
        r.ispolling = false
        r.isPullSend = isPullSend
        r.sendBoxSyncTime = sendBoxSyncTime
        return query(c, .pullMsg, target: user, r)
    }

    mutating func join(_ c: ConnectionID, room: String, existingOnly: Bool = false, rejoin: Bool = false) -> Output {
        var i = RMTPChrmInput()
        i.nothing = existingOnly ? 2 : 1
        return query(c, rejoin ? .joinChrmR : .joinChrm, target: room, i).1
    }

    mutating func chatroomPull(_ c: ConnectionID, room: String, syncTime: Int64, count: Int32) -> Output {
        var p = RMTPChrmPullMsg()
        p.syncTime = syncTime
        p.count = count
        return query(c, .chrmPull, target: room, p).1
    }

    mutating func close(_ c: ConnectionID) -> Output { run(.connectionClosed(c, .closedByPeer)) }
}

/// Effects of one input, with decoding helpers.
struct Output {
    var effects: [ServerEffect]

    var events: [ServerEvent] {
        effects.compactMap { if case .event(let e) = $0 { e } else { nil } }
    }

    /// Frames written to `c`, decoded (server→client).
    func frames(_ c: ConnectionID) -> [Frame] {
        var out: [Frame] = []
        for case .send(let id, let bytes, let summaries) in effects where id == c {
            var d = StreamDecoder(direction: .serverToClient)
            let fs = try! d.feed(bytes)
            // The FrameSummary of each frame matches the bytes.
            #expect(fs.count == summaries.count)
            for (f, s) in zip(fs, summaries) {
                #expect(s.type == f.type && s.messageId == (f.messageId ?? 0) && s.dup == f.flags.dup)
                if case .publish(let p) = f { #expect(s.topic == p.topic) } else { #expect(s.topic.isEmpty) }
            }
            out += fs
        }
        return out
    }

    func connack(_ c: ConnectionID) -> Frame.Connack? {
        for case .connack(let a) in frames(c) { return a }
        return nil
    }

    func puback(_ c: ConnectionID) -> Frame.Puback? {
        for case .puback(let a) in frames(c) { return a }
        return nil
    }

    func queryAck(_ c: ConnectionID) -> Frame.QueryAck? {
        for case .queryAck(let a) in frames(c) { return a }
        return nil
    }

    func publishes(_ c: ConnectionID, topic: Topic? = nil) -> [Frame.Publish] {
        frames(c).compactMap { if case .publish(let p) = $0, topic == nil || p.topic == topic!.rawValue { p } else { nil } }
    }

    /// Direct deliveries (`s_msg`) to `c`, decoded.
    func delivered(_ c: ConnectionID) -> [RMTPDownStreamMessage] {
        publishes(c, topic: .s_msg).map { try! $0.decodeBody(RMTPDownStreamMessage.self) }
    }

    func pullPage(_ c: ConnectionID) -> RMTPDownStreamMessages? {
        queryAck(c).map { try! $0.decodeBody(RMTPDownStreamMessages.self) }
    }

    func closed(_ c: ConnectionID) -> Bool {
        effects.contains { if case .close(let id) = $0 { id == c } else { false } }
    }

    var accepted: [AcceptedMessage] {
        events.compactMap { if case .messageAccepted(let a) = $0 { a } else { nil } }
    }

    /// `dropped` events and messages accepted and dropped for everyone (user nil).
    var drops: [(uid: String?, user: String?, reason: DropReason)] {
        events.compactMap {
            switch $0 {
            case .dropped(let u, _, let user, let r): (u, user, r)
            case .messageAccepted(let m): m.droppedForEveryone.map { (m.messageUId, nil, $0) }
            default: nil
            }
        }
    }

    /// (userId, deviceId, via) of every fan-out.
    var fanOuts: [(user: String, device: String, via: DeliveryPath)] {
        events.compactMap { if case .fannedOut(_, let u, let d, _, let v) = $0 { (u, d, v) } else { nil } }
    }

    var rejectedCodes: [Int32] {
        events.compactMap { if case .messageRejected(_, _, _, _, let code) = $0 { code } else { nil } }
    }

    var queryRejectedCodes: [Int32] {
        events.compactMap { if case .queryRejected(_, _, _, _, let code) = $0 { code } else { nil } }
    }

    var timersSet: [ServerTimer] {
        effects.compactMap { if case .setTimer(let t, _) = $0 { t } else { nil } }
    }

    func has(_ e: ServerEvent) -> Bool { events.contains(e) }
}

