import IMClient
import IMCapture
import IMStore
import IMWire
import SimKernel

/// The import report: what was found, what was inferred, what could not be (never invented).
public struct ImportReport: Sendable {
    public var source = ""
    public var device = ""
    public var connections: [String] = []
    /// `line N t=… call (basis)` for every inferred input.
    public var inferred: [String] = []
    /// Client actions (frames, closes) the importer could not attribute to an input.
    public var notInferred: [String] = []
    /// Holes, cut packets, skipped traffic, assumptions.
    public var notes: [String] = []
    public var records = 0
    public var framesOut = 0
    public var framesIn = 0

    public var text: String {
        var out = ["import \(source)", "  device \(device)", "  \(records) records, \(framesOut) client frame(s), \(framesIn) server frame(s)"]
        out.append("  connections (\(connections.count)):")
        out += connections.map { "    " + $0 }
        out.append("  inferred inputs (\(inferred.count)):")
        out += inferred.prefix(200).map { "    " + $0 }
        if inferred.count > 200 { out.append("    … \(inferred.count - 200) more") }
        out.append("  not inferred (\(notInferred.count))\(notInferred.isEmpty ? "" : ": the capture keeps these frames, replay will show the core did not send them"):")
        out += notInferred.prefix(100).map { "    " + $0 }
        if !notes.isEmpty {
            out.append("  notes:")
            out += notes.prefix(100).map { "    " + $0 }
        }
        return out.joined(separator: "\n")
    }
}

/// Turns observed traffic into a capture of one client: connection events and received chunks as
/// they were seen, the client's writes as outputs, and the inputs the client must have been given
/// (app calls, timers) inferred from what it sent. A shadow `ClientCore` is fed alongside: a frame
/// the core already sends for an earlier input needs no inference; only frames it does not
/// explain are attributed to an inferred call, and the call is checked against the shadow's
/// answer. What cannot be attributed goes into the report.
public final class CaptureBuilder {
    public private(set) var report = ImportReport()
    private let traffic: ObservedTraffic
    private let recorder: CaptureRecorder
    private let identity: DeviceIdentity
    private let config: ClientConfig
    private let store: IMStore
    private var core: ClientCore
    private var everConnected = false
    // Shadow expectations for the current connection.
    private var expectedOpens = 0
    private var expectedFrames: [Frame] = []
    private var expectedClose = false
    private var shadowOut: StreamDecoder
    private var capturedOut: StreamDecoder
    private var capturedIn: StreamDecoder
    private var conn = 0
    private var connOpen = false
    private var pingOutstanding = false
    /// Received chunks not fed yet: a packet on the wire is not yet a read by the client. They are
    /// fed when a client frame needs them, before any other event, and at the end; a timer or app
    /// call inferred from a frame goes before the chunks that arrived within `reorderWindowMs` of
    /// it (the wire order of a read and a write racing on the two sides of a socket does not say
    /// which one the SDK handled first; a chunk that makes the client answer is fed when the answer
    /// shows up). A chunk fed after a later call is recorded at the call's time (`t` never goes back).
    private var pendingIn: [(t: Int64, bytes: [UInt8], c: ObservedConnection)] = []
    public static let reorderWindowMs: Int64 = 50
    private var line = 1

    /// Identity: CONNECT / URL fields first, then the overrides; missing values are errors.
    public static func identity(of traffic: ObservedTraffic, overrides: IdentityOverrides) throws(ImportError) -> DeviceIdentity {
        let withId = traffic.connections.first { $0.clientId != nil }
        var platform = overrides.platform, deviceId = overrides.deviceId
        if let cid = withId?.clientId {
            if let colon = cid.firstIndex(of: ":"), let p = Platform(rawValue: String(cid[..<colon])) {
                platform = platform ?? p
                deviceId = deviceId ?? String(cid[cid.index(after: colon)...])
            } else {
                deviceId = deviceId ?? cid
            }
        }
        let userId = overrides.userId ?? traffic.connections.compactMap(\.userId).first
        guard let deviceId else { throw ImportError(.noIMTraffic, "no CONNECT names the device: give --device NAME") }
        guard let userId else { throw ImportError(.noIMTraffic, "no accepted CONNACK names the user: give --user NAME") }
        let appKey = overrides.appKey ?? traffic.connections.compactMap(\.appKey).first ?? "imsim-app"
        return DeviceIdentity(userId: userId, deviceId: deviceId, platform: platform ?? .mobile, appKey: appKey)
    }

    public init(traffic: ObservedTraffic, overrides: IdentityOverrides, sink: any CaptureSink) throws(ImportError) {
        self.traffic = traffic
        identity = try Self.identity(of: traffic, overrides: overrides)
        var c = ClientConfig()
        c.obfuscatedStream = traffic.obfuscated
        if let k = traffic.connections.compactMap(\.keepAlive).first, k > 0 { c.heartbeatInterval = .seconds(Int64(k)) }
        config = c
        let options = IMStore.Options(dedupByMessageUId: c.messageUIdDedup, recallDecrementsUnread: true)
        do { store = try IMStore(location: .memory, options: options) } catch {
            throw ImportError(.output, "cannot open an in-memory store: \(error)")
        }
        core = ClientCore(identity: identity, config: c, store: store)
        let startMs = traffic.connections.first?.events.first?.t ?? 0
        var header = CaptureHeader(identity: identity, config: c, storeOptions: options, startMs: startMs,
                                   sdk: "imsim-import \(traffic.origin)", app: nil, framing: traffic.framing, freshStore: true,
                                   source: traffic.source)
        header.imported = traffic.origin
        var ro = CaptureRecorder.Options()
        ro.frameSummaries = traffic.framing == .stream
        recorder = CaptureRecorder(header: header, sink: sink, options: ro)
        shadowOut = StreamDecoder(direction: .clientToServer, maxFrameSize: c.maxFrameSize, obfuscated: c.obfuscatedStream)
        capturedOut = shadowOut
        capturedIn = StreamDecoder(direction: .serverToClient, maxFrameSize: c.maxFrameSize, obfuscated: c.obfuscatedStream)
        report.source = traffic.source
        report.device = "\(identity.deviceId) (user \(identity.userId), \(identity.platform.rawValue), appKey \(identity.appKey))"
        report.connections = traffic.connections.map(\.label)
        report.notes = traffic.notes
        report.notes.append("not on the wire, defaults assumed: the SDK's bug switches (none), settings other than the heartbeat interval, a fresh database")
    }

    /// Builds the capture and finishes the sink (the file appears only if everything worked).
    public func run() throws(ImportError) -> ImportReport {
        let t0 = traffic.connections.first?.events.first?.t ?? 0
        record(.app(.start), t0, inferred: "the capture starts here; the app is assumed to start with it")
        for (i, c) in traffic.connections.enumerated() {
            conn = 0
            connOpen = false
            for e in c.events { handle(e, c, index: i) }
            flushIn()
            if connOpen {
                report.notes.append("\(c.label): still open when the capture ends")
            }
        }
        if !expectedFrames.isEmpty {
            report.notes.append("at the end the shadow core still had \(expectedFrames.count) frame(s) to send that the capture does not show (first: \(FrameText.headerLine(expectedFrames[0], direction: .clientToServer)))")
        }
        report.records = recorder.recordCount
        do { try recorder.finish() } catch { throw ImportError(.output, "\(error)") }
        return report
    }

    // MARK: - Events

    private func handle(_ e: ObservedEvent, _ c: ObservedConnection, index: Int) {
        guard stoppedAt == nil else { return }
        switch e {
        case .in, .out: break
        default: flushIn()
        }
        switch e {
        case .connect(let t):
            if expectedOpens == 0 {
                let state = core.connectionStateName
                if everConnected && (state == "reconnectWait") {
                    feed(.timerFired(.reconnect), t, inferred: "\(c.label) opened while the SDK waited to reconnect")
                } else if everConnected && state == "networkWait" {
                    feed(.networkChanged(available: true), t, inferred: "\(c.label) opened while the SDK waited for the network")
                } else {
                    let token = c.token ?? ""
                    if c.token == nil { report.notes.append("\(c.label): no token seen; the connect call is inferred with an empty token") }
                    feed(.api(.connect(token: token, timeLimitSeconds: 0)), t,
                         inferred: "\(c.label) opened (CONNECT \(c.clientId ?? "?"))")
                    everConnected = true
                }
            }
            if expectedOpens > 0 {
                expectedOpens -= 1
            } else {
                report.notInferred.append("t=\(t) \(c.label): the client opened a connection the shadow core did not ask for")
            }
            connCounter += 1
            conn = connCounter
            record(.open(conn: conn), t)
            connOpen = true
            capturedOut = StreamDecoder(direction: .clientToServer, maxFrameSize: config.maxFrameSize, obfuscated: config.obfuscatedStream)
            capturedIn = StreamDecoder(direction: .serverToClient, maxFrameSize: config.maxFrameSize, obfuscated: config.obfuscatedStream)
            pingOutstanding = false
        case .opened(let t):
            guard connOpen else { return }
            feed(.transport(.opened), t)
        case .refused(let t):
            guard connOpen else { return }
            feed(.transport(.closed(.refused)), t)
            connOpen = false
        case .in(let t, let bytes):
            guard connOpen else {
                report.notes.append("t=\(t) \(c.label): \(bytes.count) bytes arrived after the client closed (not fed)")
                return
            }
            pendingIn.append((t, bytes, c))
        case .out(let t, let bytes):
            guard connOpen else {
                report.notes.append("t=\(t) \(c.label): the client wrote \(bytes.count) bytes after it closed")
                return
            }
            guard let frames = outboundFrames(bytes, t: t, c) else { return }
            for f in frames { explain(f, t, c) }
            record(.bytesOut(conn: conn, bytes: bytes), t)
        case .clientClosed(let t):
            guard connOpen else { return }
            if !expectedClose {
                let state = core.connectionStateName
                if state == "awaitingConnack" {
                    feed(.timerFired(.connackTimeout), t, inferred: "the client closed while waiting for CONNACK")
                } else if pingOutstanding {
                    feed(.timerFired(.pingTimeout), t, inferred: "the client closed with a PINGREQ unanswered")
                } else {
                    feed(.api(.disconnect), t, inferred: "the client closed the connection with no protocol reason on the wire")
                }
            }
            if expectedClose {
                expectedClose = false
            } else {
                report.notInferred.append("t=\(t) \(c.label): the client closed; the shadow core did not")
            }
            record(.close(conn: conn), t)
            connOpen = false
        case .serverClosed(let t, let reset):
            guard connOpen else { return }
            if expectedClose {
                // The core already asked to close (a DISCONNECT, a refused CONNACK): its close is
                // what the client did; the peer's FIN crossed it.
                expectedClose = false
                record(.close(conn: conn), t)
            } else {
                feed(.transport(.closed(reset ? .reset : .closedByPeer)), t)
            }
            connOpen = false
        }
    }

    /// Feeds the pending received chunks (all, or those that arrived before `before`).
    private func flushIn(before: Int64? = nil) {
        while stoppedAt == nil, let first = pendingIn.first, before.map({ first.t < $0 }) ?? true {
            pendingIn.removeFirst()
            feedIn(first.t, first.bytes, first.c)
        }
    }

    private func feedIn(_ t: Int64, _ bytes: [UInt8], _ c: ObservedConnection) {
        guard let frames = inboundFrames(bytes, t: t, c) else { return }
        for f in frames {
            if case .pingResp = f { pingOutstanding = false }
        }
        report.framesIn += frames.count
        let streamBytes: [UInt8]
        if traffic.framing == .message {
            var b: [UInt8] = []
            for f in frames { try? StreamFraming.encode(f, direction: .serverToClient, obfuscated: false, into: &b) }
            streamBytes = b
        } else {
            streamBytes = bytes
        }
        feed(.transport(.bytes(streamBytes)), t, record: .bytesIn(conn: conn, bytes: bytes))
    }

    private var lastRecordedT: Int64 = .min
    private func record(_ e: CaptureEvent, _ t: Int64, inferred: String? = nil) {
        lastRecordedT = max(lastRecordedT, t)
        recorder.record(e, at: lastRecordedT, inferred: inferred)
    }

    private var connCounter = 0
    /// Set when bytes stop decoding: the capture ends before them (a strict reader refuses
    /// frames that do not decode, and nothing after them can be placed).
    private var stoppedAt: String?

    private func stop(_ why: String) {
        guard stoppedAt == nil else { return }
        stoppedAt = why
        pendingIn = []
        report.notes.append("the import stops here: \(why)")
    }

    /// Feeds the shadow core and records the input (and the shadow's expectations).
    private func feed(_ input: ClientInput, _ time: Int64, inferred: String? = nil, record given: CaptureEvent? = nil) {
        let t = max(time, lastRecordedT)
        let event: CaptureEvent
        if let given { event = given } else {
            switch input {
            case .api(let call): event = .api(call)
            case .transport(.opened): event = .opened(conn: conn)
            case .transport(.bytes(let b)): event = .bytesIn(conn: conn, bytes: b)
            case .transport(.closed(let r)): event = .closed(conn: conn, reason: r)
            case .timerFired(let tm): event = .timer(tm)
            case .lifecycle(let l): event = .app(l == .foreground ? .foreground : .background)
            case .networkChanged(let a): event = .network(available: a)
            }
        }
        record(event, t, inferred: inferred)
        if let inferred { report.inferred.append("t=\(t) \(RecordTextShim.describe(event)) — \(inferred)") }
        let effects = core.handle(input, now: DeviceTime(milliseconds: t))
        if case .transport(.closed) = input { expectedFrames = [] }
        for e in effects {
            switch e {
            case .openConnection:
                expectedOpens += 1
                expectedFrames = []
                shadowOut = StreamDecoder(direction: .clientToServer, maxFrameSize: config.maxFrameSize, obfuscated: config.obfuscatedStream)
            case .send(let b, _):
                if let fs = try? shadowOut.feed(b) { expectedFrames += fs }
            case .closeConnection:
                expectedClose = true
            default: break
            }
        }
    }


    // MARK: - Frames

    private func inboundFrames(_ bytes: [UInt8], t: Int64, _ c: ObservedConnection) -> [Frame]? {
        do {
            switch traffic.framing {
            case .stream:
                let frames = try capturedIn.feed(bytes)
                if let f = capturedIn.failure { throw f }
                return frames
            case .message: return [try MessageFraming.decode(bytes, direction: .serverToClient)]
            }
        } catch {
            stop("t=\(t) \(c.label): the server's bytes do not decode (\(error))")
            return nil
        }
    }

    private func outboundFrames(_ bytes: [UInt8], t: Int64, _ c: ObservedConnection) -> [Frame]? {
        do {
            switch traffic.framing {
            case .stream:
                let frames = try capturedOut.feed(bytes)
                if let f = capturedOut.failure { throw f }
                return frames
            case .message: return [try MessageFraming.decode(bytes, direction: .clientToServer)]
            }
        } catch {
            stop("t=\(t) \(c.label): the client's bytes do not decode (\(error))")
            return nil
        }
    }

    private static func same(_ a: Frame, _ b: Frame) -> Bool {
        (try? MessageFraming.encode(a, direction: .clientToServer)) == (try? MessageFraming.encode(b, direction: .clientToServer))
    }

    /// A frame the client sent: the shadow core's next frame, or the result of an inferred input.
    private func explain(_ f: Frame, _ t: Int64, _ c: ObservedConnection) {
        report.framesOut += 1
        if case .pingReq = f { pingOutstanding = true }
        if consumeExpected(f) { return }
        if let (input, basis) = infer(f, c) {
            // Chunks that arrived well before the frame were read first; the call may have
            // raced the most recent ones.
            flushIn(before: t - Self.reorderWindowMs)
            feed(input, t, inferred: basis)
            if consumeExpected(f) { return }
            flushIn()
            if consumeExpected(f) { return }
            let got = expectedFrames.first.map { FrameText.headerLine($0, direction: .clientToServer) } ?? "nothing"
            report.notInferred.append("t=\(t) \(FrameText.headerLine(f, direction: .clientToServer)): the inferred input made the shadow core send \(got)")
            return
        }
        // Perhaps the answer to a chunk not fed yet.
        flushIn()
        if consumeExpected(f) { return }
        report.notInferred.append("t=\(t) \(FrameText.headerLine(f, direction: .clientToServer))")
    }

    private func consumeExpected(_ f: Frame) -> Bool {
        guard let j = expectedFrames.firstIndex(where: { Self.same($0, f) }) else { return false }
        if j > 0 {
            report.notes.append("the shadow core sent \(j) frame(s) the client did not before \(FrameText.headerLine(f, direction: .clientToServer)) (first: \(FrameText.headerLine(expectedFrames[0], direction: .clientToServer)))")
        }
        expectedFrames.removeFirst(j + 1)
        return true
    }

    /// The input a frame implies, if any.
    private func infer(_ f: Frame, _ c: ObservedConnection) -> (ClientInput, String)? {
        switch f {
        case .pingReq:
            return (.timerFired(.heartbeat), "PINGREQ with no earlier cause: the heartbeat timer fired")
        case .publish(let p):
            guard let topic = p.knownTopic, let type = topic.conversationType,
                  let up = try? p.decodeBody(RMTPUpStreamMessage.self) else { return nil }
            let conv = ConversationKey(type, p.targetId)
            let content = String(decoding: up.contentBytes, as: UTF8.self)
            if up.classname == ReadNotificationContent.objectName, type == .privateChat,
               let time = (try? JSONValue.parse(content))?["lastMessageSendTime"]?.int64Value {
                return (.api(.sendReadReceipt(conversation: conv, lastMessageSentTime: time)),
                        "PUBLISH \(topic) #\(p.messageId) RC:ReadNtf to \(conv): a read receipt up to \(time)")
            }
            if up.classname == "RC:RcCmd" { return nil }   // recall: the local messageId is not on the wire
            let mentioned = UpStreamFlags(rawValue: up.sessionID).contains(.mentioned)
            return (.api(.send(conversation: conv, objectName: up.classname, content: content,
                               pushText: up.hasPushText ? up.pushText : nil, mentioned: mentioned)),
                    "PUBLISH \(topic) #\(p.messageId) \(up.classname) to \(conv)")
        case .query(let q):
            guard let topic = Topic(rawValue: q.topic) else { return nil }
            switch topic {
            case .joinChrm:
                let existing = ((try? q.decodeBody(RMTPChrmInput.self))?.nothing ?? 0) == 2
                let count = joinCount(q.targetId, c)
                let call: ClientAPICall = existing ? .joinExistChatroom(roomId: q.targetId, messageCount: count)
                                                   : .joinChatroom(roomId: q.targetId, messageCount: count)
                return (.api(call), "QUERY joinChrm \(q.targetId) (messageCount from the join's first chrmPull: \(count))")
            case .exitChrm:
                return (.api(.quitChatroom(roomId: q.targetId)), "QUERY exitChrm \(q.targetId)")
            case .qryPMsg, .qryGMsg, .qryCHMsg:
                guard let h = try? q.decodeBody(RMTPHistoryMsgInput.self) else { return nil }
                let type: ConversationType = topic == .qryPMsg ? .privateChat : topic == .qryGMsg ? .group : .chatroom
                let conv = ConversationKey(type, q.targetId)
                // order 1 asks for the messages after the time (im-semantics §6: before/after).
                if h.order == 1 {
                    return (.api(.getRemoteHistoryAfter(conversation: conv, afterTime: h.time, count: h.count)),
                            "QUERY \(topic) \(q.targetId) after \(h.time) count \(h.count)")
                }
                return (.api(.getRemoteHistory(conversation: conv, beforeTime: h.time, count: h.count)),
                        "QUERY \(topic) \(q.targetId) before \(h.time) count \(h.count)")
            case .updRRTime:
                guard let r = try? q.decodeBody(RMTPSessionMsgReadInput.self) else { return nil }
                let type = ConversationType(r.type)
                return (.api(.clearUnread(conversation: ConversationKey(type, r.channelID), upToSentTime: r.msgTime)),
                        "QUERY updRRTime \(r.channelID) up to \(r.msgTime)")
            default:
                return nil
            }
        default:
            return nil
        }
    }

    /// The join's messageCount is not in joinChrm: the first chrmPull with syncTime 0 for the room carries it.
    private func joinCount(_ roomId: String, _ c: ObservedConnection) -> Int32 {
        var d = StreamDecoder(direction: .clientToServer, maxFrameSize: config.maxFrameSize, obfuscated: config.obfuscatedStream)
        var seenJoin = false
        for case .out(_, let b) in c.events {
            let frames: [Frame] = traffic.framing == .stream ? ((try? d.feed(b)) ?? []) : [(try? MessageFraming.decode(b, direction: .clientToServer))].compactMap { $0 }
            for f in frames {
                guard case .query(let q) = f, q.targetId == roomId else { continue }
                if q.topic == Topic.joinChrm.rawValue { seenJoin = true }
                if seenJoin, q.topic == Topic.chrmPull.rawValue, let p = try? q.decodeBody(RMTPChrmPullMsg.self), p.syncTime == 0 {
                    return p.count
                }
            }
        }
        return 10
    }
}

/// One-line descriptions of records for the report.
enum RecordTextShim {
    static func describe(_ e: CaptureEvent) -> String {
        switch e {
        case .api(let call): "api \(call)"
        case .timer(let t): "timer \(t)"
        case .network(let a): "network available=\(a)"
        default: e.kind
        }
    }
}
