import IMWire
import SimKernel

/// The server model (issue 6; Docs/server.md): auth and sessions, routing of private / group /
/// system messages, offline inboxes, pulls, chatrooms with their drop policy, KV and kick rules,
/// recall, receipts and the server API.
///
/// A sans-IO value: `handle` takes one input at server time `now` (epoch ms) and returns the
/// effects; nothing else reads a clock or does I/O. Deterministic: no randomness, and no decision
/// depends on Dictionary/Set iteration order (fan-out is by sorted userId, then mobile, desktop,
/// web).
public struct ServerCore: Sendable {
    public let config: ServerConfig
    /// Who exists, as server-API calls have changed it.
    public internal(set) var directory: ServerDirectory
    /// Server restarts so far (part of every messageUId and sessionId).
    public internal(set) var generation: UInt32 = 0

    let rules: RoutingRules
    var groups: [String: GroupState] = [:]
    var admin = AdminState()
    var store = PersistentStore()
    var connections: [ConnectionID: Connection] = [:]
    var online: [String: OnlineUser] = [:]
    var sessionCounter: UInt64 = 0
    var expiryTimerArmed = false
    /// Effects of the input being handled.
    var effects: [ServerEffect] = []
    /// Storage for the frames of one read (empty between inputs).
    private var receivedFrames = FrameScratch()
    /// Where the buffers of this core's writes come from (`WriteBufferPool`); nil: fresh arrays.
    public var writeBuffers: WriteBufferPool?

    public init(config: ServerConfig, directory: ServerDirectory) {
        self.config = config
        self.directory = directory
        rules = RoutingRules(config)
        for g in directory.groups.keys.sorted() {
            var s = GroupState()
            for u in directory.groups[g]! { s.add(u, at: .min) }
            groups[g] = s
        }
        admin.keptAlive = Set(directory.chatrooms)
        admin.chatroomWhitelistTypes = rules.whitelistTypes
        for (room, users) in directory.chatroomWhitelists { admin.chatroomWhitelists[room] = Set(users) }
        for r in directory.chatrooms { store.rooms[r] = Chatroom(id: r, now: 0) }
    }

    /// Handles one input at server time `now` (ms) and returns what to do.
    public mutating func handle(_ input: ServerInput, now: Int64) -> [ServerEffect] {
        switch input {
        case .connectionAccepted(let id): accept(id, now: now)
        case .bytes(let id, let bytes): receive(bytes, on: id, now: now)
        case .connectionClosed(let id, _): endConnection(id, reason: .transportClosed, now: now, closeTransport: false)
        case .timerFired(let t): timerFired(t, now: now)
        case .api(let call): api(call, now: now)
        }
        return takeEffects()
    }

    /// Server crash: every session and all in-flight state is lost (the driver closes the sockets;
    /// the core emits `sessionClosed(.serverRestart)` for each and cancels its timers). Persistent
    /// state — offline inboxes, sendboxes, cloud history, chatrooms (history, KV, membership — every
    /// member offline from `now`), conversation clocks, the uid counter, idempotency keys, device
    /// records — is kept when `config.persistAcrossCrash`, else lost. Server-API configuration
    /// (groups, mutes, bans, whitelists, kept-alive rooms) and the generation counter always
    /// survive, so messageUIds stay unique.
    public mutating func crashAndRestart(now: Int64) -> [ServerEffect] {
        for id in connections.keys.sorted() {
            let c = connections[id]!
            cancelConnectionTimers(c)
            emit(.sessionClosed(id, userId: c.session?.userId ?? "", deviceId: c.session?.deviceId ?? "", reason: .serverRestart))
        }
        connections = [:]
        online = [:]
        for r in store.rooms.keys.sorted() where store.rooms[r]!.autoDestroyArmed {
            effect(.cancelTimer(.chatroomAutoDestroy(roomId: r)))
            store.rooms[r]!.autoDestroyArmed = false
        }
        if expiryTimerArmed {
            effect(.cancelTimer(.offlineExpiry))
            expiryTimerArmed = false
        }
        generation &+= 1
        sessionCounter = 0
        if config.persistAcrossCrash {
            for r in store.rooms.keys.sorted() {
                for u in store.rooms[r]!.allOffline(now: now) { removeAutoDeleteKeys(room: r, user: u, now: now) }
            }
        } else {
            store = PersistentStore()
        }
        emit(.restarted(keptPersistentState: config.persistAcrossCrash))
        for r in admin.keptAlive.sorted() where store.rooms[r] == nil {
            store.rooms[r] = Chatroom(id: r, now: now)
            emit(.chatroomCreated(roomId: r, byUserId: nil))
        }
        for r in store.rooms.keys.sorted() { armAutoDestroy(r, now: now) }
        armExpiryAfterRestart(now: now)
        return takeEffects()
    }

    mutating func takeEffects() -> [ServerEffect] {
        let out = effects
        effects = []
        return out
    }

    // MARK: - Output

    /// Room the first effect of an input reserves (1.33 buffers per `handle` on mixed-1k when
    /// grown from empty). The array is handed to the driver, so each input needs its own.
    static let initialEffectCapacity = 4

    @inline(__always) mutating func effect(_ e: ServerEffect) {
        if effects.capacity == 0 { effects.reserveCapacity(Self.initialEffectCapacity) }
        effects.append(e)
    }

    @inline(__always) mutating func emit(_ e: ServerEvent) { effect(.event(e)) }

    /// The bytes of a body built here (`ProtoBody.encodeBuilt`); one built without a required
    /// field is reported (`incompleteBody`) and sent as built.
    mutating func built(_ message: some BodyMessage, file: StaticString = #fileID, line: UInt = #line) -> [UInt8] {
        let b = ProtoBody.encodeBuilt(message, file: file, line: line)
        if let i = b.incomplete { emit(.incompleteBody(i)) }
        return b.bytes
    }

    /// `built` where the core cannot emit yet (inside an access to its own state): the problem is
    /// kept in `incomplete` for the caller to emit.
    static func built(_ message: some BodyMessage, _ incomplete: inout IncompleteBody?,
               file: StaticString = #fileID, line: UInt = #line) -> [UInt8] {
        let b = ProtoBody.encodeBuilt(message, file: file, line: line)
        if let i = b.incomplete { incomplete = i }
        return b.bytes
    }

    static func summary(_ f: Frame) -> FrameSummary {
        switch f {
        case .publish(let p): FrameSummary(type: .publish, messageId: p.messageId, dup: p.flags.dup, topic: p.topic)
        case .puback(let p): FrameSummary(type: .puback, messageId: p.messageId)
        case .queryAck(let q): FrameSummary(type: .queryAck, messageId: q.messageId, dup: q.flags.dup)
        default: FrameSummary(type: f.type, dup: f.flags.dup)
        }
    }

    /// Writes one frame to a connection as a `.send` (most writes: no array of one frame).
    /// `consuming`: the frame is moved into its encoding (frames are built at the call).
    mutating func write(_ id: ConnectionID, _ frame: consuming Frame) {
        let summary = Self.summary(frame)
        var bytes = writeBuffers?.take() ?? []
        guard encode(consume frame, for: id, into: &bytes) else { return }
        effect(.send(id, bytes, frames: [summary]))
    }

    /// Writes frames to a connection as one `.send`.
    mutating func write(_ id: ConnectionID, _ frames: [Frame]) {
        var bytes = writeBuffers?.take() ?? []
        for f in frames {
            guard encode(f, for: id, into: &bytes) else { return }
        }
        effect(.send(id, bytes, frames: frames.map(Self.summary)))
    }

    /// Appends a frame's bytes; false (and a `protocolError` event) when it cannot be encoded.
    private mutating func encode(_ frame: consuming Frame, for id: ConnectionID, into bytes: inout [UInt8]) -> Bool {
        do {
            try StreamFraming.encode(consume frame, direction: .serverToClient, obfuscated: config.obfuscatedStreams, into: &bytes)
            return true
        } catch {
            // Only strings over 65,535 bytes fail, and every string here came from a u16-prefixed
            // field or from the server itself; report rather than crash.
            emit(.protocolError(id, description: "cannot encode a reply: \(error)"))
            return false
        }
    }

    // Connection access without copying the `Connection` value: `connections[id]` returns a copy
    // (decoder buffers, session strings, arrays: a dozen retains and releases) — ~5% of a world run.

    /// True while `id` is an open connection.
    @inline(__always) func hasConnection(_ id: ConnectionID) -> Bool { connections.index(forKey: id) != nil }

    /// The session of an open, authenticated connection.
    @inline(__always) func session(of id: ConnectionID) -> Session? {
        guard let i = connections.index(forKey: id) else { return nil }
        return connections.values[i].session
    }

    /// The next server message id on a connection.
    mutating func nextMessageId(_ id: ConnectionID) -> UInt16 {
        guard let i = connections.index(forKey: id) else { return 1 }
        return connections.values[i].messageIds.next()
    }

    /// The next message id and the device of an authenticated connection (one dictionary access).
    mutating func nextMessageIdAndDevice(_ id: ConnectionID) -> (UInt16, (deviceId: String, deviceIndex: Int32)) {
        Self.nextIdAndDevice(&connections.values[connections.index(forKey: id)!])
    }

    /// Reads connection `i` in place, through the dictionary's `_modify`: reading
    /// `connections.values[i].field` copies the whole `Connection` first (~300 instructions).
    @inline(__always) mutating func inPlace<R>(_ i: Dictionary<ConnectionID, Connection>.Index, _ body: (inout Connection) -> R) -> R {
        body(&connections.values[i])
    }

    private static func nextIdAndDevice(_ c: inout Connection) -> (UInt16, (deviceId: String, deviceIndex: Int32)) {
        (c.messageIds.next(), (c.session!.deviceId, c.session!.deviceIndex))
    }

    @inline(__always) static func seconds(_ ms: Int64) -> UInt32 { UInt32(truncatingIfNeeded: max(0, ms) / 1000) }

    /// A QUERYACK: qos 1 (kept until QUERYCON, re-sent every `queryAckRetry`) for responses that
    /// carry data, qos 0 otherwise.
    mutating func queryAck(_ id: ConnectionID, messageId: UInt16, status: Int32 = 0, body: [UInt8] = [],
                           reliable: Bool, now: Int64) {
        let ack = Frame.QueryAck(flags: reliable ? .atLeastOnce : .none, messageId: messageId, date: Self.seconds(now),
                                 status: UInt16(truncatingIfNeeded: status), body: body)
        write(id, .queryAck(ack))
        guard reliable, let i = connections.index(forKey: id) else { return }
        let wasPending = connections.values[i].pendingQueryAcks.updateValue(ack, forKey: messageId) != nil
        if wasPending { effect(.cancelTimer(.queryAckRetry(id, messageId: messageId))) }
        effect(.setTimer(.queryAckRetry(id, messageId: messageId), after: config.queryAckRetry))
    }

    mutating func rejectQuery(_ id: ConnectionID, _ q: Frame.Query, code: Int32, now: Int64) {
        emit(.queryRejected(id, userId: session(of: id)?.userId ?? "", topic: q.topic, targetId: q.targetId, code: code))
        queryAck(id, messageId: q.messageId, status: code, reliable: false, now: now)
    }

    // MARK: - Connections

    mutating func accept(_ id: ConnectionID, now: Int64) {
        guard connections[id] == nil else { return }
        var c = Connection(id: id, decoder: StreamDecoder(direction: .clientToServer, maxFrameSize: config.maxFrameSize,
                                                          obfuscated: config.obfuscatedStreams), now: now)
        c.connectDeadlineArmed = true
        c.idleTimerArmed = true
        connections[id] = c
        effect(.setTimer(.connectDeadline(id), after: config.connectDeadline))
        effect(.setTimer(.sessionIdle(id), after: config.sessionIdleTimeout))
    }

    mutating func receive(_ bytes: [UInt8], on id: ConnectionID, now: Int64) {
        guard let i = connections.index(forKey: id) else { return }
        var frames = receivedFrames.take()
        defer { receivedFrames.putBack(&frames) }
        // Handling frames never touches the decoder: its failure after the feed is the one to
        // report after them (read now, no lookup later when there is none).
        let failure: WireError?
        do {
            failure = try Self.feed(&connections.values[i], bytes, now: now, into: &frames)
        } catch {
            protocolViolation(id, "\(error)", now: now)
            return
        }
        // Each frame moved out of the array for `dispatch` (not inlined, mutating `self`): read
        // in place it was copied for the call, and destroyed again when the array was emptied.
        // The connection is open for the first frame (found above); a frame may close it.
        for k in frames.indices {
            if k > 0, !hasConnection(id) { return }
            dispatch(FrameScratch.moveOut(&frames, at: k), on: id, now: now)
        }
        if let failure { protocolViolation(id, "\(failure)", now: now) }
    }

    /// Feeds the connection's decoder; answers its failure when the bytes completed frames
    /// before a bad one (`feed` throws only when they completed none).
    private static func feed(_ c: inout Connection, _ bytes: [UInt8], now: Int64, into frames: inout [Frame]) throws -> WireError? {
        c.lastActivity = now
        try c.decoder.feed(bytes, into: &frames)
        return c.decoder.failure
    }

    mutating func protocolViolation(_ id: ConnectionID, _ description: String, now: Int64) {
        guard hasConnection(id) else { return }
        emit(.protocolError(id, description: description))
        endConnection(id, reason: .protocolError, now: now, closeTransport: true)
    }

    mutating func dispatch(_ frame: consuming Frame, on id: ConnectionID, now: Int64) {
        if case .connect(let c) = frame {
            handleConnect(c, on: id, now: now)
            return
        }
        guard let session = inPlace(connections.index(forKey: id)!, { $0.session }) else {
            protocolViolation(id, "\(frame.type) before CONNECT", now: now)
            return
        }
        switch frame {
        case .pingReq:
            write(id, .pingResp())
        case .publish(let p):
            handlePublish(p, on: id, session: session, now: now)
        case .query(let q):
            handleQuery(q, on: id, session: session, now: now)
        case .queryConfirm(let q):
            if connections.values[connections.index(forKey: id)!].pendingQueryAcks.removeValue(forKey: q.messageId) != nil {
                effect(.cancelTimer(.queryAckRetry(id, messageId: q.messageId)))
            }
        case .puback, .pingResp, .subscribeFamily:
            // PUBACK of an s_msg: the message is in the inbox either way (no re-send needed).
            break
        case .disconnect:
            endConnection(id, reason: .clientDisconnect, now: now, closeTransport: true)
        case .connect, .connack, .queryAck:
            protocolViolation(id, "\(frame.type) is not a client frame here", now: now)
        }
    }

    /// Cancels the connection's armed timers: idle, CONNECT deadline, then QUERYACK retries by
    /// message id.
    mutating func cancelConnectionTimers(_ c: Connection) {
        if c.idleTimerArmed { effect(.cancelTimer(.sessionIdle(c.id))) }
        if c.connectDeadlineArmed { effect(.cancelTimer(.connectDeadline(c.id))) }
        for m in c.pendingQueryAcks.keys.sorted() { effect(.cancelTimer(.queryAckRetry(c.id, messageId: m))) }
    }

    /// Ends a connection: timers cancelled, `.close` if the server closes it, the session detached
    /// (platform slot, joined chatrooms → member offline, auto-delete KV), `sessionClosed`.
    mutating func endConnection(_ id: ConnectionID, reason: SessionCloseReason, now: Int64, closeTransport: Bool) {
        guard let c = connections.removeValue(forKey: id) else { return }
        cancelConnectionTimers(c)
        if closeTransport { effect(.close(id)) }
        guard let s = c.session else {
            emit(.sessionClosed(id, userId: "", deviceId: "", reason: reason))
            return
        }
        if var o = online[s.userId] {
            if o.slots[s.platform.rank] == id { o.slots[s.platform.rank] = nil }
            online[s.userId] = o.isEmpty ? nil : o
        }
        emit(.sessionClosed(id, userId: s.userId, deviceId: s.deviceId, reason: reason))
        for room in c.rooms { detachFromRoom(room, user: s.userId, connection: id, now: now) }
    }

    /// Online connections of a user, mobile first.
    func onlineConnections(_ userId: String) -> [ConnectionID] { online[userId]?.connections ?? [] }

    // MARK: - Timers

    mutating func timerFired(_ t: ServerTimer, now: Int64) {
        switch t {
        case .sessionIdle(let id):
            guard let i = connections.index(forKey: id), inPlace(i, { $0.idleTimerArmed }) else { return }
            let lastActivity = inPlace(i) { c in
                c.idleTimerArmed = false
                return c.lastActivity
            }
            let idle = now - lastActivity
            if idle >= rules.idleTimeoutMs {
                endConnection(id, reason: .idleTimeout, now: now, closeTransport: true)
            } else {
                // Re-armed lazily: bytes only move `lastActivity`, never touch the timer.
                connections.values[i].idleTimerArmed = true
                effect(.setTimer(.sessionIdle(id), after: .milliseconds(rules.idleTimeoutMs - idle)))
            }
        case .connectDeadline(let id):
            guard let i = connections.index(forKey: id), inPlace(i, { $0.connectDeadlineArmed }) else { return }
            let authenticated = inPlace(i) { c in
                c.connectDeadlineArmed = false
                return c.hasSession
            }
            if !authenticated { endConnection(id, reason: .connectTimeout, now: now, closeTransport: true) }
        case .queryAckRetry(let id, let m):
            guard let i = connections.index(forKey: id), var ack = inPlace(i, { $0.pendingQueryAcks[m] }) else { return }
            ack.flags.dup = true
            connections.values[i].pendingQueryAcks[m] = ack
            write(id, .queryAck(ack))
            effect(.setTimer(.queryAckRetry(id, messageId: m), after: config.queryAckRetry))
        case .chatroomAutoDestroy(let room):
            autoDestroyFired(room, now: now)
        case .offlineExpiry:
            guard expiryTimerArmed else { return }
            expiryTimerArmed = false
            sweepExpired(now: now)
        case .chatroomBanEnds, .chatroomMuteEnds:
            // Bans and mutes are checked against their end time when used; nothing to do.
            break
        }
    }
}
