import IMClient
import IMStore
import IMWire
import IMWorld
import SimKernel

/// A scenario built from a capture, and how it was built.
public struct LiftedScenario: Sendable {
    /// The scenario as written (member order kept).
    public var json: JSONValue
    /// The same, parsed and validated.
    public var scenario: Scenario
    /// Estimates the lift rests on.
    public var oneWayLatencyMs: Int64
    public var clockOffsetMs: Int64
    public var epochMs: Int64
    /// Counts for the summary line.
    public var peerMessages: Int
    public var ownSteps: Int
    public var faultSteps: Int
    /// What could not be expressed exactly (approximations, skipped records).
    public var notes: [String]

    public var text: String { ScenarioText.format(json) }
}

/// Builds a full-world scenario from a capture: the server side is reconstructed from the
/// frames. Every message the device received becomes a scripted send by a peer device of its
/// sender, timed so the server accepts it at its captured `dataTime`; the device's own API calls
/// become script steps at their captured times; connection resets, silent links (ping / CONNACK
/// timeouts), network changes, app lifecycle and clock steps become scripted faults and actions.
/// Time: the scenario's server epoch is chosen so simulated time 0 lies a little before the
/// capture, and the device's clock offset is estimated from CONNACK timestamps and direct
/// deliveries (minus half the best round trip), so the device sees its inputs at (nearly) the
/// captured device times. The network is fixed at the estimated one-way latency.
///
/// Deterministic: the same capture gives the same scenario, byte for byte.
public enum Lifter {
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public var message: String
        public var description: String { message }
    }

    /// - Parameters:
    ///   - bugs: client bug switches of the lifted world (nil: the capture's).
    public static func lift(header: CaptureHeader, records: [CaptureRecord], name: String, bugs: ClientBugs? = nil,
                            origin: String = "capture") throws(Failure) -> LiftedScenario {
        var b = Builder(header: header, records: records, name: name, origin: origin)
        b.bugs = bugs ?? header.config.bugs
        return try b.build()
    }

    /// Reads a capture file and lifts it.
    public static func lift(path: String, name: String? = nil, bugs: ClientBugs? = nil,
                            maxLineLength: Int = CaptureReader.defaultMaxLineLength) throws -> LiftedScenario {
        let reader = try CaptureReader(path: path, maxLineLength: maxLineLength)
        let records = try reader.readAll()
        let base = name ?? defaultName(path)
        return try lift(header: reader.header, records: records, name: base, bugs: bugs, origin: path)
    }

    static func defaultName(_ path: String) -> String {
        var base = String(path.split(separator: "/").last ?? "capture")
        for ext in [".zst", ".jsonl", ".json"] where base.hasSuffix(ext) { base = String(base.dropLast(ext.count)) }
        return base.isEmpty ? "lifted" : base + "-lifted"
    }
}

// MARK: - The builder

private struct Step {
    var atMs: Int64
    var order: Int
    var json: JSONValue
}

private struct Builder {
    let header: CaptureHeader
    let records: [CaptureRecord]
    let name: String
    let origin: String
    var bugs: ClientBugs = []
    var notes: [String] = []
    var steps: [Step] = []
    var order = 0
    let user: String
    let device: String

    init(header: CaptureHeader, records: [CaptureRecord], name: String, origin: String) {
        self.header = header
        self.records = records
        self.name = name
        self.origin = origin
        user = header.identity.userId
        device = header.identity.deviceId
    }

    mutating func note(_ s: String) { if notes.count < 40 { notes.append(s) } }

    mutating func add(_ atMs: Int64, _ members: KeyValuePairs<String, JSONValue>) {
        order += 1
        var o = ObjectBuilder()
        o.add("at", .string(SimDuration.milliseconds(max(0, atMs)).description))
        for (k, v) in members { o.add(k, v) }
        steps.append(Step(atMs: max(0, atMs), order: order, json: o.value))
    }

    mutating func build() throws(Lifter.Failure) -> LiftedScenario {
        // 1. The wire, decoded once.
        var tap = FrameTap(userId: user, maxFrameSize: header.config.maxFrameSize, obfuscated: header.config.obfuscatedStream)
        var lastInByConn: [Int: Int64] = [:]
        var openedAt: [Int: Int64] = [:]
        var openAt: [Int: Int64] = [:]
        for r in records {
            switch r.event {
            case .open(let c): tap.open(); openAt[c] = r.t
            case .opened(let c): openedAt[c] = r.t
            case .bytesIn(let c, let b): tap.inbound(b, t: r.t, line: r.line); lastInByConn[c] = r.t
            case .bytesOut(_, let b): tap.outbound(b, t: r.t, line: r.line)
            case .closed, .close: tap.close()
            default: break
            }
        }

        // 2. Latency and clock offset.
        let rtts = tap.roundTrips.filter { $0 >= 0 }.sorted()
        let oneWay = min(500, max(2, (rtts.first ?? 80) / 2))
        // Wall-clock steps recorded before a line shift its device times: undo them.
        var clockSteps: [(line: Int, total: Int64)] = []
        var total: Int64 = 0
        for r in records { if case .clock(let s) = r.event { total += s; clockSteps.append((r.line, total)) } }
        func stepped(_ line: Int) -> Int64 { clockSteps.last { $0.line <= line }?.total ?? 0 }
        var offsetSamples: [Int64] = tap.connacks.map { $0.t - $0.serverMs - stepped($0.line) }
        for m in tap.messages where m.via == .direct { offsetSamples.append(m.t - m.dataTime - stepped(m.line)) }
        let offset = (offsetSamples.min() ?? oneWay) - oneWay
        if offsetSamples.isEmpty { note("no CONNACK or direct delivery to estimate the device clock: offset assumed 0") }
        let setupSamples = openAt.keys.sorted().compactMap { c -> Int64? in
            guard let a = openAt[c], let b = openedAt[c] else { return nil }
            return b - a - 2 * oneWay
        }
        let setup = min(1000, max(1, setupSamples.min() ?? 10))

        // 3. Classify received messages (first arrival of each messageUId).
        let ownTag = ClientCore.deviceTag(userId: user, deviceId: device)
        var seen: Set<String> = []
        var peerMessages: [WireMessage] = []
        for m in tap.messages where m.via != .history {
            if let uid = m.messageUId, !seen.insert(uid).inserted { continue }
            // Own copies (this device's clientUniqueId tag) and the user's own commands without a
            // clientUniqueId (read receipts, read sync the server derives from this device's calls)
            // come from the device's own API calls, lifted below.
            if m.senderUserId == user || m.direction == .send {
                guard let c = m.clientUniqueId, c > 0, c >> 31 != ownTag, m.senderUserId == user else { continue }
            }
            peerMessages.append(m)
        }

        // 4. People and places.
        var peers: [String] = []
        var groups: [String: [String]] = [:]
        var rooms: [String: [String]] = [:]
        var usesOtherDevice = false
        var systemSenders: Set<String> = []
        func addMember(_ dict: inout [String: [String]], _ key: String, _ u: String) {
            if !dict[key, default: []].contains(u) { dict[key, default: []].append(u) }
        }
        for m in peerMessages {
            let sender = m.senderUserId
            if m.direction == .send || sender == user {
                usesOtherDevice = true
                if m.conversation.type == .privateChat, m.conversation.targetId != user, !peers.contains(m.conversation.targetId) {
                    peers.append(m.conversation.targetId)
                }
            } else if m.conversation.type == .system {
                systemSenders.insert(sender)
            } else if !peers.contains(sender) {
                peers.append(sender)
            }
            switch m.conversation.type {
            case .group:
                addMember(&groups, m.conversation.targetId, user)
                if sender != user { addMember(&groups, m.conversation.targetId, sender) }
            case .chatroom:
                rooms[m.conversation.targetId, default: []] = rooms[m.conversation.targetId, default: []]
                if sender != user { addMember(&rooms, m.conversation.targetId, sender) }
            default: break
            }
        }
        for r in records {
            guard case .api(let call) = r.event else { continue }
            switch call {
            case .send(let conv, _, _, _, _), .sendReadReceipt(let conv, _), .clearUnread(let conv, _):
                switch conv.type {
                case .privateChat: if conv.targetId != user && !peers.contains(conv.targetId) { peers.append(conv.targetId) }
                case .group: addMember(&groups, conv.targetId, user)
                case .chatroom: rooms[conv.targetId] = rooms[conv.targetId] ?? []
                default: break
                }
            case .joinChatroom(let room, _), .joinExistChatroom(let room, _), .quitChatroom(let room):
                rooms[room] = rooms[room] ?? []
            default: break
            }
        }
        for g in groups.keys.sorted() where groups[g]!.count < 2 {
            // The server refuses a group of one to nobody; give it a silent peer.
            let filler = "\(g)-member"
            groups[g]!.append(filler)
            if !peers.contains(filler) { peers.append(filler) }
        }
        peers = peers.filter { $0 != user }
        for (i, s) in systemSenders.sorted().enumerated() where i == 0 {
            note("system messages (from \(s)) are sent through the server API (systemMessage)")
        }

        // 5. Time mapping: sim ms = device t - offset(t) - epoch.
        let otherPlatform: Platform = header.identity.platform == .mobile ? .desktop : .mobile
        let otherDevice = "\(user)-other"
        let peerConnectMs = 4 * oneWay + 2 * setup + 200
        // Messages older than the capture's first record go out (in order) just after the peers connect.
        let firstT = records.first?.t ?? header.startMs
        let earlyCount = Int64(peerMessages.filter { $0.dataTime - (firstT - offset) < peerConnectMs }.count)
        let lead = max(2000, peerConnectMs + 3 * earlyCount + 500)
        let epoch = (firstT - offset) - lead
        var earlySlot = peerConnectMs

        var peerSendCount = 0
        for m in peerMessages {
            var at = m.dataTime - epoch - oneWay
            if at < peerConnectMs {
                at = earlySlot
                earlySlot += 3
            }
            let senderDevice: String
            if m.direction == .send || m.senderUserId == user {
                senderDevice = otherDevice
            } else if m.conversation.type == .system {
                let text = textOf(m.content) ?? String(decoding: m.content, as: UTF8.self)
                add(at, ["action": .string("systemMessage"), "user": .string(user), "text": .string(text)])
                peerSendCount += 1
                continue
            } else {
                senderDevice = "\(m.senderUserId)-phone"
            }
            let to: ConversationKey = switch m.conversation.type {
            case .privateChat: m.direction == .send ? m.conversation : ConversationKey(.privateChat, user)
            default: m.conversation
            }
            switch m.objectName {
            case RecallCommandContent.objectName:
                add(at, ["device": .string(senderDevice), "action": .string("recall")])
                note("a recall by \(m.senderUserId) recalls that device's last sent message in the lifted world")
            case ReadNotificationContent.objectName:
                add(at, ["device": .string(senderDevice), "action": .string("read"), "conversation": .string(to.description)])
            case SyncReadStatusContent.objectName:
                add(at, ["device": .string(senderDevice), "action": .string("clearUnread"), "conversation": .string(to.description)])
            default:
                add(at, ["device": .string(senderDevice), "action": .string("send"), "to": .string(to.description),
                         "type": .string(m.objectName), "content": .string(String(decoding: m.content, as: UTF8.self))])
            }
            peerSendCount += 1
        }

        // 6. The device's own inputs.
        var stepOffset = offset
        var started = false
        var startAtMs = lead
        var ownSteps = 0
        var faultSteps = 0
        var autoStartConsumed = false
        var currentConn: Int?
        // App reactions: API calls made in a callback of the input just before (same t). A join
        // made when `connected` is reported is the app's "join my room on connect" — lifted as
        // room membership, which the world's app joins at the same moment; other reactions go
        // 1 ms after the input that caused them (a script step at the same ms would run first).
        var lastInput: (t: Int64, isAPI: Bool)?
        var connectedReported = false
        var autoJoin: (room: String, count: Int32)?
        var lastRead: (Int64, ConversationKey)?
        for r in records {
            let sim = r.t - stepOffset - epoch
            if r.event.isOutput {
                switch r.event {
                case .callback(.connectionStatus(.connected)): connectedReported = true
                case .open(let c): currentConn = c
                case .close: currentConn = nil
                default: break
                }
                continue
            }
            let reaction: Bool
            if case .api = r.event, let l = lastInput, !l.isAPI, l.t == r.t { reaction = true } else { reaction = false }
            let wasConnected = connectedReported
            if case .api = r.event {} else {
                lastInput = (r.t, false)
                connectedReported = false
            }
            if reaction, wasConnected, case .api(.joinChatroom(let room, let n)) = r.event, autoJoin == nil || autoJoin?.room == room {
                autoJoin = (room, n)
                continue
            }
            switch r.event {
            case .app(.start):
                if !started {
                    started = true
                    startAtMs = max(0, sim)
                    autoStartConsumed = true
                } else {
                    add(sim, ["device": .string(device), "action": .string("restart")]); ownSteps += 1
                }
            case .app(.kill):
                add(sim, ["device": .string(device), "action": .string("kill")]); ownSteps += 1
            case .app(.foreground):
                add(sim, ["device": .string(device), "action": .string("foreground")]); ownSteps += 1
            case .app(.background):
                add(sim, ["device": .string(device), "action": .string("background")]); ownSteps += 1
            case .clock(let step):
                // The step is applied at the time before it (the record carries the time after).
                stepOffset += step
                add(r.t - stepOffset - epoch, ["device": .string(device), "action": .string("clockStep"),
                                               "by": .string(SimDuration.milliseconds(step).description)])
                ownSteps += 1
            case .network(let available):
                add(sim, ["device": .string(device), "action": .string("network"), "state": .string(available ? "wifi" : "none")])
                ownSteps += 1
            case .api(.clearUnread(let conv, _)) where lastRead?.0 == r.t && lastRead?.1 == conv:
                // The world's `read` step already clears unread.
                continue
            case .api(let call):
                if case .sendReadReceipt(let conv, _) = call { lastRead = (r.t, conv) }
                if !started {
                    started = true
                    startAtMs = max(0, sim)
                    autoStartConsumed = true
                }
                if let s = apiStep(call) {
                    add(reaction ? sim + 1 : sim, s)
                    ownSteps += 1
                }
            case .closed(let c, let reason):
                switch reason {
                case .reset, .closedByPeer:
                    // The world tells the device of a reset after 0…one-way latency: half on average.
                    add(sim - oneWay / 2, ["device": .string(device), "action": .string("reset")])
                    faultSteps += 1
                    if reason == .closedByPeer && !tap.disconnects.contains(where: { $0.t <= r.t && $0.t >= (openedAt[c] ?? 0) }) {
                        note("line \(r.line): the server closed connection \(c); lifted as a reset")
                    }
                case .timeout:
                    let from = (openAt[c] ?? r.t) - stepOffset - epoch
                    add(from, ["action": .string("partition"), "target": .string(device),
                               "for": .string(SimDuration.milliseconds(max(1000, r.t - (openAt[c] ?? r.t) + 500)).description)])
                    faultSteps += 1
                case .refused:
                    note("line \(r.line): connection \(c) refused (server down?) — not lifted")
                case .networkDown, .localClose:
                    break
                }
                currentConn = nil
            case .timer(.pingTimeout):
                // The link went silent after its last inbound bytes: a half-open connection. Half a
                // one-way latency after them, so what the device wrote in reaction is lost too
                // (and a reset notice that arrives up to half a latency off still lands before).
                if let c = currentConn, let last = lastInByConn[c] {
                    add(last - stepOffset - epoch + max(1, oneWay / 2), ["device": .string(device), "action": .string("halfOpen")])
                    faultSteps += 1
                }
            case .timer(.connackTimeout):
                if let c = currentConn, let o = openedAt[c] {
                    add(o - stepOffset - epoch + max(1, oneWay / 2), ["device": .string(device), "action": .string("halfOpen")])
                    faultSteps += 1
                }
            case .timer(.requestTimeout(let id)):
                note("line \(r.line): request #\(id) timed out — its lost answer is left to the neighbours (random faults)")
            default:
                break
            }
        }
        _ = autoStartConsumed
        if !tap.disconnects.isEmpty { note("the server sent DISCONNECT (kick/block) \(tap.disconnects.count)× — not lifted") }

        // 7. The scenario.
        let lastStep = steps.map(\.atMs).max() ?? startAtMs
        let lastRecord = (records.last?.t ?? firstT) - stepOffset - epoch
        let durationMs = max(lastStep, lastRecord, startAtMs) + 5_000
        steps.sort { ($0.atMs, $0.order) < ($1.atMs, $1.order) }

        var users: [JSONValue] = []
        var me = ObjectBuilder()
        me.add("id", user)
        var myDevice = ObjectBuilder()
        myDevice.add("id", device)
        myDevice.add("platform", header.identity.platform.rawValue)
        myDevice.add("clockOffset", SimDuration.milliseconds(offset).description)
        myDevice.add("autoConnect", false)
        myDevice.add("startAt", SimDuration.milliseconds(startAtMs).description)
        var myDevices: [JSONValue] = [myDevice.value]
        if usesOtherDevice {
            var o = ObjectBuilder()
            o.add("id", otherDevice); o.add("platform", otherPlatform.rawValue); o.add("startAt", "0s")
            myDevices.append(o.value)
        }
        me.add("devices", .array(myDevices))
        users.append(me.value)
        for p in peers {
            var u = ObjectBuilder()
            u.add("id", p)
            var d = ObjectBuilder()
            d.add("id", "\(p)-phone"); d.add("startAt", "0s")
            u.add("devices", .array([d.value]))
            users.append(u.value)
        }
        if users.count == 1 {
            // A world needs nobody else, but the server needs a private peer to exist for sends.
            note("the capture names no other user")
        }

        var s = ObjectBuilder()
        s.add("name", name)
        s.add("description", "Lifted from \(origin) (device \(device)): \(peerSendCount) message(s) from \(peers.count) peer(s)" +
              (usesOtherDevice ? " and the user's other device" : "") + ", \(ownSteps) own step(s), \(faultSteps) fault(s).")
        s.add("duration", SimDuration.milliseconds(durationMs).description)
        s.add("seed", 1)
        s.add("epochMs", epoch)
        s.add("users", .array(users))
        if !groups.isEmpty {
            s.add("groups", .array(groups.keys.sorted().map { g in
                var o = ObjectBuilder(); o.add("id", g); o.add("members", .array(groups[g]!.map { .string($0) })); return o.value
            }))
        }
        if let a = autoJoin {
            rooms[a.room] = [user] + (rooms[a.room] ?? [])
            note("the app joined \(a.room) when connected: lifted as membership (the world's app joins its room on connect)")
        }
        if !rooms.isEmpty {
            // The auto-joined room first: the world's app joins the first room its user is in.
            let order = rooms.keys.sorted { ($0 == autoJoin?.room ? 0 : 1, $0) < ($1 == autoJoin?.room ? 0 : 1, $1) }
            s.add("chatrooms", .array(order.map { r in
                var o = ObjectBuilder(); o.add("id", r); o.add("members", .array(rooms[r]!.map { .string($0) }))
                o.add("joinCount", r == autoJoin?.room ? autoJoin!.count : 10); o.add("keepAlive", true); return o.value
            }))
        }
        var net = ObjectBuilder()
        net.add("latency", .object(["fixed": .string(SimDuration.milliseconds(oneWay).description)]))
        net.add("bandwidthBytesPerSecond", .null)
        net.add("splitProbability", .int(0))
        net.add("connectSetup", .object(["fixed": .string(SimDuration.milliseconds(setup).description)]))
        s.add("network", net.value)
        var server = ObjectBuilder()
        server.add("delivery", tap.sawDirect || !tap.sawInboxNotify ? "direct" : "notify")
        server.add("rateLimitPerSecond", 1000)
        let low = header.config.registry.customObjectNames.filter { header.config.registry.flags(for: $0)?.chatroomPriority == .low }
        if !low.isEmpty {
            var room = ObjectBuilder()
            room.add("lowPriorityTypes", .array(low.map { .string($0) }))
            server.add("chatroom", room.value)
        }
        s.add("server", server.value)
        var client = ObjectBuilder()
        let c = header.config
        client.add("heartbeatInterval", c.heartbeatInterval.description)
        client.add("pingTimeout", c.pingTimeout.description)
        client.add("connackTimeout", c.connackTimeout.description)
        client.add("requestTimeout", c.requestTimeout.description)
        client.add("backgroundCloseAfter", c.backgroundCloseAfter.description)
        if let p = c.pollInterval { client.add("pollInterval", p.description) }
        client.add("reconnectKickEnable", c.reconnectKickEnable)
        client.add("storeDedup", header.storeOptions.dedupByMessageUId)
        client.add("recallDecrementsUnread", header.storeOptions.recallDecrementsUnread)
        client.add("bugs", .array(BugSwitch.allCases.filter { $0.side == .client && bugs.contains(ClientBugs([$0])) }.map { .string($0.rawValue) }))
        s.add("client", client.value)
        if c.pingBeforeFirstPull { note("pingBeforeFirstPull is not a scenario knob: the lifted SDK pulls without the link check") }
        if c.reconnectSchedule != ClientConfig().reconnectSchedule { note("a custom reconnect schedule is not a scenario knob") }
        s.add("script", .array(steps.map(\.json)))
        s.add("liveness", .object(["deadline": .string("1m")]))
        let json = s.value
        let scenario: Scenario
        do { scenario = try ScenarioText.scenario(json) } catch {
            throw Lifter.Failure(message: "the lifted scenario does not load (a lifter bug): \(error)")
        }
        return LiftedScenario(json: json, scenario: scenario, oneWayLatencyMs: oneWay, clockOffsetMs: offset, epochMs: epoch,
                              peerMessages: peerSendCount, ownSteps: ownSteps, faultSteps: faultSteps, notes: notes)
    }

    /// The script step for one of the device's own API calls (nil: no script action for it).
    mutating func apiStep(_ call: ClientAPICall) -> KeyValuePairs<String, JSONValue>? {
        let d = JSONValue.string(device)
        switch call {
        case .connect(_, let limit):
            return limit == 0 ? ["device": d, "action": .string("connect")]
                : ["device": d, "action": .string("connect"), "timeLimit": .int(limit)]
        case .disconnect: return ["device": d, "action": .string("disconnect")]
        case .logout: return ["device": d, "action": .string("logout")]
        case .send(let conv, let objectName, let content, _, let mentioned):
            return mentioned
                ? ["device": d, "action": .string("send"), "to": .string(conv.description), "type": .string(objectName),
                   "content": .string(content), "mention": .bool(true)]
                : ["device": d, "action": .string("send"), "to": .string(conv.description), "type": .string(objectName),
                   "content": .string(content)]
        case .resend: return ["device": d, "action": .string("resend")]
        case .recall: return ["device": d, "action": .string("recall")]
        case .sendReadReceipt(let conv, _): return ["device": d, "action": .string("read"), "conversation": .string(conv.description)]
        case .clearUnread(let conv, _): return ["device": d, "action": .string("clearUnread"), "conversation": .string(conv.description)]
        case .joinChatroom(let r, let n): return ["device": d, "action": .string("join"), "room": .string(r), "count": .int(n)]
        case .joinExistChatroom(let r, let n): return ["device": d, "action": .string("joinExist"), "room": .string(r), "count": .int(n)]
        case .quitChatroom(let r): return ["device": d, "action": .string("quit"), "room": .string(r)]
        case .setChatroomKV(let r, let k, let v, let a, let f):
            return ["device": d, "action": .string("setKV"), "room": .string(r), "key": .string(k), "value": .string(v),
                    "autoDelete": .bool(a), "force": .bool(f)]
        case .removeChatroomKV(let r, let k, let f):
            return ["device": d, "action": .string("removeKV"), "room": .string(r), "key": .string(k), "force": .bool(f)]
        case .getHistory(let conv, _, let n):
            return ["device": d, "action": .string("history"), "conversation": .string(conv.description), "count": .int(n)]
        case .getChatroomKV, .getRemoteHistory, .getRemoteHistoryAfter:
            note("\(call) has no script action — not lifted")
            return nil
        }
    }

    func textOf(_ content: [UInt8]) -> String? {
        (try? JSONValue.parse(content))?["content"]?.stringValue
    }
}
