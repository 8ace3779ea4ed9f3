import IMStore
import IMWire

/// A sync echo (server PUBLISH with the dup bit on a send topic) waiting for the PUBACK that gives
/// it date/millis/messageUId (wire-protocol §1.5).
struct PendingEcho: Sendable {
    var topic: Topic
    var targetId: String
    var message: RMTPUpStreamMessage
}

// What the rest of the core does when the connection machine reports something.
extension ClientCore {
    mutating func process(_ events: [LinkEvent]) {
        for event in events {
            switch event {
            case .opening:
                // A fresh connection: new stream decoder, message ids from 1 (wire-protocol §1.3).
                decoder = StreamDecoder(direction: .serverToClient, maxFrameSize: config.maxFrameSize,
                                        obfuscated: config.obfuscatedStream)
                messageIds.reset()
            case .sendConnect(let connect):
                write(.connect(connect))
            case .sendPing:
                write(.pingReq())
            case .pongReceived:
                if sync.state == .linkCheck {
                    syncChange("PINGRESP (link checked)") { $0.linkChecked() }
                    connectionEstablished()
                }
            case .sessionStarted(let s, let firstOfCall):
                sessionStarted(s, firstOfCall: firstOfCall)
            case .linkLost(let failure, let wasConnected):
                linkLost(failure, wasConnected: wasConnected)
            case .stopped(let reason):
                stopped(reason)
            }
        }
    }

    /// CONNACK accepted. The web SDK first checks the link with one PINGREQ (knob); then the
    /// inbox pull starts and, after a reconnect, every remembered chatroom is rejoined.
    private mutating func sessionStarted(_ s: ConnectedState, firstOfCall: Bool) {
        session = s
        isReconnectSession = !firstOfCall
        let linkCheck = config.pingBeforeFirstPull
        syncChange("CONNACK") { $0.sessionStarted(linkCheck: linkCheck) }
        if let poll = config.pollInterval { out.setTimer(.poll, after: poll) }
        if config.pingBeforeFirstPull {
            process(link.ping(&out))
        } else {
            connectionEstablished()
        }
    }

    /// The link is usable: pull, and rejoin rooms if this session is a reconnect ("after every
    /// reconnect"; a fresh `connect` after `disconnect` starts without rooms — unless B7 left
    /// stale ones, which are then silently not rejoined).
    private mutating func connectionEstablished() {
        startPull(reason: "connected")
        if isReconnectSession { rejoinChatrooms() }
    }

    /// The connection is gone: requests in flight fail (or are retried by the next session, for
    /// pulls and rejoins), joined rooms need a rejoin.
    private mutating func linkLost(_ failure: ConnectFailure, wasConnected: Bool) {
        if failure.code == IMErrorCode.pingTimeout.rawValue { forgetRejoinsAfterPingTimeout() }
        if sync.isOnline, config.pollInterval != nil { out.cancelTimer(.poll) }
        syncChange("connection lost") { $0.linkLost() }
        session = nil
        pendingEchoes.removeAll()
        for (id, request) in requests.removeAll() {
            out.cancelTimer(.requestTimeout(messageId: id))
            failRequest(request, code: failure.code, reason: "connection lost: \(failure.reason)")
        }
        chatroomsLinkLost(wasConnected: wasConnected)
    }

    /// The connect call ended (disconnect, logout, fatal error): chatroom state and KV caches are
    /// cleared — except with B7 on a deliberate disconnect/logout.
    private mutating func stopped(_ reason: StoppedState.Reason) {
        syncChange("stopped") { $0.linkLost() }
        session = nil
        switch reason {
        case .disconnected, .loggedOut:
            if config.bugs.contains(.b7) {
                // B7: disconnect leaves the chatroom state and KV caches behind (fixed in 4.1.0).
                for room in rooms.rooms {
                    out.note(.ignored(input: "disconnect", reason: "B7: chatroom \(room.roomId) state kept (stale membership)"))
                }
                return
            }
            clearChatrooms(reason: reason == .loggedOut ? "logout()" : "disconnect()", callback: true)
        case .failed:
            clearChatrooms(reason: "connect call ended", callback: true)
        }
    }

    mutating func pollFired() {
        guard hasSession, let poll = config.pollInterval else { return }
        out.setTimer(.poll, after: poll)
        if sync.canStartPull { startPull(reason: "poll") }
    }

    /// A request got no reply in 30 s.
    mutating func requestTimedOut(_ id: UInt16) {
        guard let request = requests.remove(id) else {
            out.note(.ignored(input: "timer requestTimeout(#\(id))", reason: "request already answered"))
            return
        }
        out.note(.requestTimedOut(messageId: id, what: request.what))
        failRequest(request, code: IMErrorCode.requestTimeout.rawValue, reason: "no reply in \(config.requestTimeout)")
    }

    /// Ends a request that will get no (usable) reply: sends become FAILED, callbacks report the
    /// code, pulls stop (the next trigger restarts them), rejoins wait for the next connection.
    mutating func failRequest(_ request: PendingRequest, code: Int32, reason: String) {
        switch request {
        case .message(let s):
            sendFailed(s, code: code)
        case .recall(let messageId, _, _, _):
            out.callback(.recallResult(messageId: messageId, error: code))
        case .command(let name, let c):
            out.note(.ignored(input: "\(name) to \(c)", reason: "not confirmed: \(reason)"))
        case .pull:
            syncChange("pull failed: \(reason)") { $0.pullEnded(synced: false) }
            // Timed out on a connection that is still up: what the pull was for (an s_msg dropped
            // while it ran, a notify) is still owed and no other trigger may come — pull again.
            // (A lost connection pulls after the next CONNACK; a refusal is not retried in a loop.)
            if hasSession, code == IMErrorCode.requestTimeout.rawValue {
                startPull(reason: "retry after timeout")
            }
        case .join(let roomId, let kind):
            joinFailed(roomId, kind: kind, code: code, reason: reason)
        case .quit:
            break
        case .chatroomPull(let roomId, _):
            rooms.update(roomId) { $0.pullInFlight = nil }
            // Timed out on a live connection: the notify it answered may be the room's last, so
            // pull again on the heartbeat, as after a page that could not be stored
            // (everyday-storage --swarm seed 5272: a latency spike, a quiet room, a lost message).
            if hasSession, code == IMErrorCode.requestTimeout.rawValue { roomsToRepull.insert(roomId) }
        case .pullKV(let roomId, _):
            rooms.update(roomId) { $0.kvPullInFlight = nil }
        case .changeKV(let roomId, let key, _):
            out.callback(.chatroomKVResult(roomId: roomId, key: key, error: code))
        case .remoteHistory(let conversation):
            out.callback(.remoteHistory(conversation: conversation, messages: [], error: code))
        case .readTime(let conversation):
            out.note(.ignored(input: "updRRTime \(conversation)", reason: "not confirmed: \(reason)"))
        }
    }
}
