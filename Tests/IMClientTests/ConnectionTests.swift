import IMStore
import IMWire
import SimKernel
import Testing
@testable import IMClient

@Suite("Connection machine")
struct ConnectionTests {
    @Test("connect: dbOpened, CONNECTING, CONNECT frame, CONNACK → CONNECTED, connected(userId), heartbeat, pull")
    func happyPath() {
        var h = Harness()
        h.api(.connect(token: "tok-alice", timeLimitSeconds: 0))
        guard case .dbOpened(0)? = h.effects.callbacks.first else { Issue.record("dbOpened first"); return }
        #expect(h.effects.opens == 1)
        #expect(h.effects.timersSet[.connackTimeout] == .seconds(5))
        #expect(h.effects.statuses == [.connecting])
        #expect(h.core.connectionStateName == "opening")

        h.feed(.transport(.opened))
        guard case .connect(let c)? = h.frames.first else { Issue.record("CONNECT expected"); return }
        #expect(c.keepAlive == 30)
        #expect(c.clientId == "mobile:phone")
        #expect(c.token == "tok-alice")
        #expect(c.appKey == "imsim-app")
        #expect(!c.isReconnect)
        #expect(!c.reconnectKickEnable)

        h.server(.connack(Frame.Connack(status: .accepted, session: .init(userId: "alice", sessionId: "S1", timestamp: 5000))))
        #expect(h.effects.statuses == [.connected])
        #expect(h.effects.callbacks.contains { if case .connected("alice") = $0 { true } else { false } })
        #expect(h.effects.cancelled.contains(.connackTimeout))
        #expect(h.effects.timersSet[.heartbeat] == .seconds(30))
        let pull = try! h.lastQuery(.pullMsg)!.decodeBody(RMTPSyncRequestMsg.self)
        #expect(h.lastQuery(.pullMsg)!.targetId == "alice")
        #expect(pull.syncTime == 0 && pull.sendBoxSyncTime == 0 && pull.isPullSend && !pull.ispolling)
        #expect(h.core.isConnected && h.core.isPulling)
    }

    /// Drops the connection and fails every attempt with `.refused`, collecting the delays.
    static func failingDelays(_ h: inout Harness, attempts: Int) -> [SimDuration] {
        var delays: [SimDuration] = []
        for _ in 0..<attempts {
            h.fire(.reconnect)
            #expect(h.effects.opens == 1)
            h.feed(.transport(.closed(.refused)))
            if let d = h.effects.reconnectDelay { delays.append(d) }
        }
        return delays
    }

    static let schedule: [SimDuration] = [
        .zero, .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(8),
        .seconds(16), .seconds(32), .seconds(64), .seconds(64), .seconds(64),
    ]

    @Test("the whole reconnect schedule: 0, 0.25, 0.5, 1, 2, 4, 8, 16, 32, 64, 64… s; reset by a success")
    func reconnectSchedule() {
        var h = Harness()
        h.connectInSync()
        h.feed(.transport(.closed(.reset)))
        #expect(h.effects.statuses == [.connecting])
        var delays = [h.effects.reconnectDelay!]
        delays += Self.failingDelays(&h, attempts: 11)
        #expect(delays == Self.schedule)
        // Every attempt after the first success is flagged as a reconnect.
        h.fire(.reconnect)
        h.feed(.transport(.opened))
        guard case .connect(let c)? = h.frames.first else { Issue.record("CONNECT"); return }
        #expect(c.isReconnect)
        // A success resets the schedule.
        h.server(.connack(Frame.Connack(status: .accepted, session: .init(userId: "alice", sessionId: "S9", timestamp: 1))))
        #expect(h.core.reconnectBackoffIndex == 0)
        h.feed(.transport(.closed(.reset)))
        #expect(h.effects.reconnectDelay == .zero)
    }

    @Test("foreground and network change restart the schedule at 0", arguments: ["foreground", "network"])
    func backoffReset(trigger: String) {
        var h = Harness()
        h.connectInSync()
        h.feed(.transport(.closed(.reset)))
        _ = Self.failingDelays(&h, attempts: 8)          // waiting 32 s now
        #expect(h.core.reconnectBackoffIndex == 9)
        if trigger == "foreground" {
            h.feed(.lifecycle(.background))
            h.feed(.lifecycle(.foreground))
        } else {
            h.feed(.networkChanged(available: true))
        }
        #expect(h.effects.cancelled.contains(.reconnect))
        #expect(h.effects.reconnectDelay == .zero)
        #expect(h.core.reconnectBackoffIndex == 1)
    }

    @Test("foreground / network change during an attempt in flight: the attempt runs on; if it fails the next waits 0 s (B11: 64 s)",
          arguments: [false, true])
    func resetDuringAttempt(b11: Bool) {
        var config = ClientConfig()
        if b11 { config.bugs = [.b11] }
        var h = Harness(config: config)
        h.connectInSync()
        h.feed(.transport(.closed(.reset)))
        _ = Self.failingDelays(&h, attempts: 8)          // waiting 32 s now
        h.fire(.reconnect)
        #expect(h.effects.opens == 1)                    // attempt 9 in flight
        h.feed(.networkChanged(available: true))
        #expect(h.effects.opens == 0)                    // the attempt is not replaced
        #expect(!h.effects.cancelled.contains(.reconnect))
        h.feed(.transport(.closed(.refused)))
        #expect(h.effects.reconnectDelay == (b11 ? .seconds(64) : .zero))
    }

    @Test("B11: foreground / network change do not reset the backoff", arguments: ["foreground", "network"])
    func b11NoReset(trigger: String) {
        var config = ClientConfig()
        config.bugs = [.b11]
        var h = Harness(config: config)
        h.connectInSync()
        h.feed(.transport(.closed(.reset)))
        _ = Self.failingDelays(&h, attempts: 8)
        if trigger == "foreground" {
            h.feed(.lifecycle(.background))
            h.feed(.lifecycle(.foreground))
        } else {
            h.feed(.networkChanged(available: true))
        }
        // The 32 s timer keeps running; the next failure waits 64 s.
        #expect(!h.effects.cancelled.contains(.reconnect))
        #expect(h.effects.reconnectDelay == nil)
        #expect(h.core.reconnectBackoffIndex == 9)
        #expect(Self.failingDelays(&h, attempts: 1) == [.seconds(64)])
    }

    @Test("network lost → NETWORK_UNAVAILABLE, no attempts; back → reconnect at 0 (B11: at the old position)",
          arguments: [false, true])
    func networkWait(b11: Bool) {
        var config = ClientConfig()
        if b11 { config.bugs = [.b11] }
        var h = Harness(config: config)
        h.connectInSync()
        h.feed(.transport(.closed(.reset)))
        _ = Self.failingDelays(&h, attempts: 4)          // delays so far 0…2 s; next 4 s
        h.feed(.networkChanged(available: false))
        #expect(h.effects.statuses == [.networkUnavailable])
        #expect(h.effects.cancelled.contains(.reconnect))
        #expect(h.core.connectionStateName == "networkWait")
        h.feed(.networkChanged(available: true))
        #expect(h.effects.reconnectDelay == (b11 ? .seconds(4) : .zero))
        #expect(h.effects.statuses == [.connecting])
    }

    @Test("network lost while connected closes the connection; connect without network waits")
    func networkLostWhileConnected() {
        var h = Harness()
        h.connectInSync()
        h.feed(.networkChanged(available: false))
        #expect(h.effects.closes == 1)
        #expect(h.effects.statuses == [.networkUnavailable])
        #expect(!h.core.isConnected)

        var g = Harness()
        g.feed(.networkChanged(available: false))
        g.api(.connect(token: "t", timeLimitSeconds: 0))
        #expect(g.effects.opens == 0)
        #expect(g.effects.statuses == [.networkUnavailable])
        g.feed(.networkChanged(available: true))
        #expect(g.effects.reconnectDelay == .zero)
    }

    @Test("timeLimit: no success within it → 34006, TIMEOUT, no more attempts; a success cancels it")
    func timeLimit() {
        var h = Harness()
        h.api(.connect(token: "t", timeLimitSeconds: 10))
        #expect(h.effects.timersSet[.connectTimeLimit] == .seconds(10))
        h.feed(.transport(.closed(.refused)))
        _ = Self.failingDelays(&h, attempts: 5)
        h.fire(.connectTimeLimit)
        #expect(h.effects.connectErrors == [IMErrorCode.connectTimeLimit.rawValue])
        #expect(h.effects.statuses == [.timeout])
        #expect(h.effects.cancelled.contains(.reconnect))
        #expect(h.core.connectionStateName == "stopped")
        h.fire(.reconnect)
        #expect(h.effects.opens == 0)

        var g = Harness()
        g.connect(timeLimit: 10)
        #expect(g.effects.cancelled.contains(.connectTimeLimit))
        g.fire(.connectTimeLimit)                         // stale: ignored
        #expect(g.effects.connectErrors.isEmpty && g.core.isConnected)
    }

    @Test("timeLimit while an attempt is open closes it")
    func timeLimitDuringAttempt() {
        var h = Harness()
        h.api(.connect(token: "t", timeLimitSeconds: 3))
        h.feed(.transport(.opened))
        h.fire(.connectTimeLimit)
        #expect(h.effects.closes == 1)
        #expect(h.effects.connectErrors == [34006])
    }

    static let fatal: [(wire: UInt8, code: Int32, status: ConnectionStatus)] = [
        (1, 31001, .unconnected), (2, 31002, .unconnected), (4, 31004, .tokenIncorrect), (5, 31005, .unconnected),
        (8, 31008, .unconnected), (9, 31009, .disconnException), (10, 31020, .tokenIncorrect),
        (23, 31023, .kickedOfflineByOtherClient),
    ]

    @Test("fatal CONNACK codes: connectError once, status, stopped, no retry", arguments: Self.fatal.indices)
    func fatalCodes(_ i: Int) {
        let (wire, code, status) = Self.fatal[i]
        var h = Harness()
        h.api(.connect(token: "t", timeLimitSeconds: 0))
        h.feed(.transport(.opened))
        h.server(.connack(Frame.Connack(statusCode: wire)))
        #expect(h.effects.connectErrors == [code])
        #expect(h.effects.statuses == [status])
        #expect(h.effects.closes == 1)
        #expect(h.effects.reconnectDelay == nil)
        #expect(h.core.connectionStateName == "stopped")
    }

    @Test("a fatal code on a reconnect: status only (the connect call already succeeded)")
    func fatalOnReconnect() {
        var h = Harness()
        h.connectInSync()
        h.feed(.transport(.closed(.reset)))
        h.fire(.reconnect)
        h.feed(.transport(.opened))
        h.server(.connack(Frame.Connack(statusCode: 10)))
        #expect(h.effects.connectErrors.isEmpty)
        #expect(h.effects.statuses == [.tokenIncorrect])
        #expect(h.core.connectionStateName == "stopped")
    }

    static let temporary: [(name: String, code: Int32)] = [
        ("connack3", 31003), ("connack6", 31006), ("connackTimeout", 31000), ("refused", 32061),
        ("closedByPeer", 30011), ("reset", 30011),
        // Issue 22 item 8: unknown statuses → 39001, never 30000 + n (11 → 30011 = socket closed).
        ("connack11", 39001), ("connack15", 39001), ("connack7", 39001), ("connack255", 39001),
    ]

    @Test("temporary failures: reconnect scheduled, no callback error", arguments: Self.temporary.indices)
    func temporaryCodes(_ i: Int) {
        let (name, code) = Self.temporary[i]
        var h = Harness()
        h.api(.connect(token: "t", timeLimitSeconds: 0))
        switch name {
        case _ where name.hasPrefix("connack") && name != "connackTimeout":
            h.feed(.transport(.opened))
            h.server(.connack(Frame.Connack(statusCode: UInt8(name.dropFirst(7))!)))
        case "connackTimeout":
            h.feed(.transport(.opened))
            h.fire(.connackTimeout)
            #expect(h.effects.closes == 1)
        case "refused": h.feed(.transport(.closed(.refused)))
        case "closedByPeer": h.feed(.transport(.closed(.closedByPeer)))
        default:
            h.feed(.transport(.opened))
            h.feed(.transport(.closed(.reset)))
        }
        #expect(h.effects.connectErrors.isEmpty)
        #expect(h.effects.reconnectDelay == .zero)
        #expect(h.core.connectionStateName == "reconnectWait")
        #expect(h.effects.stateNotes.last?.reason.hasPrefix("\(code) ") == true)
    }

    @Test("heartbeat: PINGREQ every 30 s; PINGRESP re-arms; no PINGRESP in 6 s → 30013 → reconnect at 0")
    func heartbeatAndPingTimeout() {
        var h = Harness()
        h.connectInSync()
        h.fire(.heartbeat)
        #expect(h.frames == [.pingReq()])
        #expect(h.effects.timersSet[.pingTimeout] == .seconds(6))
        h.server(.pingResp())
        #expect(h.effects.cancelled.contains(.pingTimeout))
        #expect(h.effects.timersSet[.heartbeat] == .seconds(30))
        h.fire(.heartbeat)
        h.fire(.pingTimeout)
        #expect(h.effects.closes == 1)
        #expect(h.effects.reconnectDelay == .zero)
        #expect(h.effects.statuses == [.connecting])
        #expect(h.effects.stateNotes.last?.reason.hasPrefix("30013") == true)
    }

    @Test("DISCONNECT 1 → KICKED_OFFLINE_BY_OTHER_CLIENT, no reconnect; DISCONNECT 2 → DISCONN_EXCEPTION")
    func kicked() {
        for (status, expected) in [(DisconnectStatus.kickedByOtherDevice, ConnectionStatus.kickedOfflineByOtherClient),
                                   (.blocked, .disconnException)] {
            var h = Harness()
            h.connectInSync()
            h.server(.disconnect(Frame.Disconnect(status: status)))
            #expect(h.effects.statuses == [expected])
            #expect(h.effects.closes == 1)
            #expect(h.effects.reconnectDelay == nil)
            #expect(h.effects.connectErrors.isEmpty)
            #expect(h.core.connectionStateName == "stopped")
        }
    }

    @Test("reconnectKickEnable: flag 0x20 on CONNECT; CONNACK 23 on a reconnect → gives up (31023, status 6)")
    func reconnectKickEnable() {
        var config = ClientConfig()
        config.reconnectKickEnable = true
        var h = Harness(config: config)
        h.connectInSync()
        h.feed(.transport(.closed(.reset)))
        h.fire(.reconnect)
        h.feed(.transport(.opened))
        guard case .connect(let c)? = h.frames.first else { Issue.record("CONNECT"); return }
        #expect(c.reconnectKickEnable && c.isReconnect)
        h.server(.connack(Frame.Connack(statusCode: Frame.Connack.otherDeviceLoggedInStatusCode)))
        #expect(h.effects.statuses == [.kickedOfflineByOtherClient])
        #expect(h.effects.reconnectDelay == nil)
        #expect(h.effects.stateNotes.last?.reason.hasPrefix("31023") == true)
    }

    /// Seed rule (im-semantics §5, issue 22): a device in automatic retry "whether it lost an earlier
    /// connection or never completed its first connect" — the first CONNECT of a call is a login,
    /// every retry of the call carries the reconnect flag, connected before or not.
    @Test("a retry of a first connect that never completed carries the reconnect flag")
    func retryOfAFirstConnectIsAReconnect() {
        var config = ClientConfig()
        config.reconnectKickEnable = true
        var h = Harness(config: config)
        h.api(.connect(token: "tok-alice", timeLimitSeconds: 0))
        h.feed(.transport(.opened))
        guard case .connect(let first)? = h.frames.first else { Issue.record("CONNECT"); return }
        #expect(!first.isReconnect)
        h.feed(.transport(.closed(.reset)))           // no CONNACK: the first connect never completed
        h.fire(.reconnect)
        h.feed(.transport(.opened))
        guard case .connect(let retry)? = h.frames.first else { Issue.record("CONNECT"); return }
        #expect(retry.isReconnect && retry.reconnectKickEnable)
        h.server(.connack(Frame.Connack(statusCode: Frame.Connack.otherDeviceLoggedInStatusCode)))
        #expect(h.effects.statuses == [.kickedOfflineByOtherClient])
        #expect(h.effects.reconnectDelay == nil)     // refused: stops retrying
    }

    @Test("background: close after 2 minutes, UNCONNECTED, no reconnect; foreground → reconnect at 0")
    func background() {
        var h = Harness()
        h.connectInSync()
        h.feed(.lifecycle(.background))
        #expect(h.effects.timersSet[.backgroundClose] == .minutes(2))
        h.fire(.backgroundClose)
        #expect(h.effects.closes == 1)
        #expect(h.effects.statuses == [.unconnected])
        #expect(h.core.connectionStateName == "suspended")
        h.fire(.reconnect)
        #expect(h.effects.opens == 0)
        h.feed(.lifecycle(.foreground))
        #expect(h.effects.reconnectDelay == .zero)
        #expect(h.effects.statuses == [.connecting])
        // Foreground before the 2 minutes: the timer is cancelled, the connection stays.
        var g = Harness()
        g.connectInSync()
        g.feed(.lifecycle(.background))
        g.feed(.lifecycle(.foreground))
        #expect(g.effects.cancelled.contains(.backgroundClose))
        #expect(g.core.isConnected)
    }

    @Test("disconnect → UNCONNECTED, logout → SIGN_OUT; both end reconnection", arguments: [false, true])
    func deliberate(logout: Bool) {
        var h = Harness()
        h.connectInSync()
        h.api(logout ? .logout : .disconnect)
        #expect(h.effects.statuses == [logout ? .signOut : .unconnected])
        #expect(h.effects.closes == 1)
        #expect(h.core.connectionStateName == "stopped")
        // While waiting to reconnect, too.
        var g = Harness()
        g.connectInSync()
        g.feed(.transport(.closed(.reset)))
        g.api(logout ? .logout : .disconnect)
        #expect(g.effects.cancelled.contains(.reconnect))
        #expect(g.effects.closes == 0)
        g.fire(.reconnect)
        #expect(g.effects.opens == 0)
        // A new connect call works again.
        g.api(.connect(token: "t", timeLimitSeconds: 0))
        #expect(g.effects.opens == 1)
    }

    @Test("message ids restart at 1 on every connection; connect while connecting is ignored")
    func messageIdsReset() {
        var h = Harness()
        h.connect()
        #expect(h.lastQuery(.pullMsg)?.messageId == 1)
        h.api(.connect(token: "t", timeLimitSeconds: 0))
        #expect(h.effects.opens == 0)
        h.api(.send(conversation: ConversationKey(.privateChat, "bob"), objectName: "RC:TxtMsg", content: text("a"),
                    pushText: nil, mentioned: false))
        #expect(h.publishes.first?.messageId == 2)
        h.feed(.transport(.closed(.reset)))
        h.reconnect(timestamp: 2)
        #expect(h.lastQuery(.pullMsg)?.messageId == 1)
    }

    @Test("a bad stream (checksum) closes the connection and reconnects")
    func protocolError() {
        var h = Harness()
        h.connectInSync()
        h.feed(.transport(.bytes([0x30, 0xFF, 0x01, 0x00])))
        #expect(h.effects.closes == 1)
        #expect(h.effects.reconnectDelay == .zero)
    }
}
