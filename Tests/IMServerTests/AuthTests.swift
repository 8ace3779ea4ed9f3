import IMWire
import SimKernel
import Testing
@testable import IMServer

@Suite struct AuthTests {
    /// CONNACK status for each way a CONNECT can be wrong (im-semantics §5).
    @Test(arguments: [
        ("valid", ConnackStatus.accepted),
        ("expired", .tokenExpired),
        ("revoked", .tokenIncorrect),
        ("unknown", .tokenIncorrect),
        ("banned", .userBlocked),
        ("appBlocked", .appBlocked),
        ("badVersion", .badProtocolVersion),
        ("badClientId", .identifierRejected),
        ("wrongAppKey", .notAuthorized),
    ])
    func connackStatus(_ scenario: String, _ expected: ConnackStatus) throws {
        var d = Harness.directory()
        d.addUser("xavier", token: "tok-x-expired", state: .expired)
        d.addUser("yves", token: "tok-y-revoked", state: .revoked)
        if scenario == "banned" { d.bannedUsers.insert("alice") }
        if scenario == "appBlocked" { d.appBlocked = true }
        var h = Harness(directory: d)
        let c = h.newConnection()
        var connect = Frame.Connect(keepAlive: 30, clientId: "mobile:a1", appKey: h.core.config.appKey, token: "tok-alice")
        switch scenario {
        case "expired": connect.token = "tok-x-expired"
        case "revoked": connect.token = "tok-y-revoked"
        case "unknown": connect.token = "nope"
        case "badVersion": connect.protocolVersion = 2
        case "badClientId": connect.clientId = "toaster:a1"
        case "wrongAppKey": connect.appKey = "other-app"
        default: break
        }
        let out = h.send(c, .connect(connect))
        let ack = try #require(out.connack(c))
        #expect(ack.status == expected)
        if expected == .accepted {
            let s = try #require(ack.session)
            #expect(s.userId == "alice")
            #expect(s.timestamp == h.now)
            #expect(s.sessionId == "S0-00000001")
            #expect(!out.closed(c))
            #expect(out.has(.sessionOpened(c, userId: "alice", deviceId: "a1", platform: .mobile, sessionId: "S0-00000001")))
        } else {
            #expect(ack.session == nil)
            #expect(out.closed(c))
            #expect(out.has(.connectRejected(c, status: expected)))
            #expect(h.core.session(on: c) == nil)
        }
    }

    @Test func sessionIdsAreDeterministicAndDistinct() {
        var h = Harness()
        let a = h.online("alice")
        let b = h.online("bob")
        #expect(h.core.session(on: a)?.sessionId == "S0-00000001")
        #expect(h.core.session(on: b)?.sessionId == "S0-00000002")
    }

    /// One session per platform class: a newer login on the same platform kicks the older one with
    /// DISCONNECT status 1; other platforms coexist.
    @Test func newerLoginKicksOlderOnSamePlatform() throws {
        var h = Harness()
        let phone = h.online("alice", device: "phone", platform: .mobile)
        let desk = h.online("alice", device: "desk", platform: .desktop)
        let web = h.online("alice", device: "browser", platform: .web)
        #expect(h.core.onlineSessions(of: "alice").map(\.deviceId) == ["phone", "desk", "browser"])
        let (tablet, out) = h.connect("alice", device: "tablet", platform: .mobile)
        #expect(out.connack(tablet)?.status == .accepted)
        #expect(out.frames(phone) == [.disconnect(Frame.Disconnect(status: .kickedByOtherDevice))])
        #expect(out.closed(phone))
        #expect(out.has(.kicked(victim: phone, userId: "alice", victimDeviceId: "phone", byDeviceId: "tablet")))
        #expect(out.has(.sessionClosed(phone, userId: "alice", deviceId: "phone", reason: .kicked)))
        #expect(out.frames(desk).isEmpty && out.frames(web).isEmpty)
        #expect(h.core.onlineSessions(of: "alice").map(\.deviceId) == ["tablet", "desk", "browser"])
    }

    /// The same device connecting again replaces its (half-open) old connection without a DISCONNECT.
    @Test func sameDeviceReplacesItsOldConnection() {
        var h = Harness()
        let old = h.online("alice", device: "phone")
        let (new, out) = h.connect("alice", device: "phone", reconnect: true)
        #expect(out.connack(new)?.status == .accepted)
        #expect(out.frames(old).isEmpty)
        #expect(out.closed(old))
        #expect(out.has(.sessionClosed(old, userId: "alice", deviceId: "phone", reason: .replaced)))
        #expect(h.core.onlineSessions(of: "alice").map(\.connection) == [new])
    }

    /// A retry (flag 0x04) that finds another device in its platform slot, under
    /// reconnectKickEnable × B12 (im-semantics §5, §8 as corrected for issue 22). Seed rule: the
    /// setting decides — off (the default) the retry kicks the device in use; on it is refused;
    /// B12 = the setting not honoured.
    @Test(arguments: [
        (false, false, true),  // default: the documented race — A's retry kicks B
        (true, false, false),  // kickEnable: refused (31023), B keeps its session
        (true, true, true),    // B12: kickEnable not honoured — A kicks B
        (false, true, true),   // B12 changes nothing with the setting off
    ])
    func staleReconnect(kickEnable: Bool, b12: Bool, kicks: Bool) throws {
        var cfg = ServerConfig()
        if b12 { cfg.bugs = [.b12] }
        var h = Harness(config: cfg)
        let a = h.online("alice", device: "A")
        h.close(a) // A loses its connection and keeps retrying
        let b = h.online("alice", device: "B")
        let (a2, out) = h.connect("alice", device: "A", reconnect: true, kickEnable: kickEnable)
        let ack = try #require(out.connack(a2))
        if kicks {
            #expect(ack.status == .accepted)
            #expect(out.frames(b) == [.disconnect(Frame.Disconnect(status: .kickedByOtherDevice))])
            #expect(out.has(.kicked(victim: b, userId: "alice", victimDeviceId: "B", byDeviceId: "A")))
            #expect(h.core.onlineSessions(of: "alice").map(\.deviceId) == ["A"])
        } else {
            #expect(ack.statusCode == Frame.Connack.otherDeviceLoggedInStatusCode)
            #expect(ack.session == nil)
            #expect(out.closed(a2))
            #expect(out.frames(b).isEmpty)
            #expect(out.has(.reconnectRefused(a2, userId: "alice", deviceId: "A", activeDeviceId: "B")))
            #expect(h.core.onlineSessions(of: "alice").map(\.deviceId) == ["B"])
        }
    }

    /// A fresh login (no reconnect flag) always kicks, whatever reconnectKickEnable says.
    @Test func freshLoginKicksEvenWithKickEnable() {
        var h = Harness()
        let b = h.online("alice", device: "B")
        let (a, out) = h.connect("alice", device: "A", kickEnable: true)
        #expect(out.connack(a)?.status == .accepted)
        #expect(out.closed(b))
    }

    @Test func pingAndIdleTimeout() throws {
        var h = Harness()
        let c = h.online("alice")
        #expect(h.send(c, .pingReq()).frames(c) == [.pingResp()])
        // Idle timer armed at accept (90 s); activity at +60 s re-arms it lazily when it fires.
        h.now = Harness.t0 + 60_000
        _ = h.send(c, .pingReq())
        let early = h.fire(.sessionIdle(c), at: Harness.t0 + 90_000)
        #expect(!early.closed(c))
        #expect(early.effects.contains(.setTimer(.sessionIdle(c), after: .seconds(60))))
        let late = h.fire(.sessionIdle(c), at: Harness.t0 + 150_000)
        #expect(late.closed(c))
        #expect(late.has(.sessionClosed(c, userId: "alice", deviceId: "alice-mobile", reason: .idleTimeout)))
        #expect(h.core.onlineSessions(of: "alice").isEmpty)
    }

    @Test func connectDeadlineClosesSilentConnections() {
        var h = Harness()
        let c = h.newConnection()
        let out = h.fire(.connectDeadline(c), at: Harness.t0 + 10_000)
        #expect(out.closed(c))
        #expect(out.has(.sessionClosed(c, userId: "", deviceId: "", reason: .connectTimeout)))
        // After CONNECT the deadline is cancelled and a stale firing does nothing.
        let d = h.online("bob")
        #expect(!h.fire(.connectDeadline(d)).closed(d))
    }

    /// Garbage bytes, frames before CONNECT, and undecodable bodies close the connection.
    @Test(arguments: ["badChecksum", "publishBeforeConnect", "badBody", "connackFromClient"])
    func protocolErrorsClose(_ kind: String) {
        var h = Harness()
        let c: ConnectionID
        let out: Output
        switch kind {
        case "badChecksum":
            c = h.online("alice")
            out = h.run(.bytes(c, [0x30, 0x00, 0x01, 0x00]))
        case "publishBeforeConnect":
            c = h.newConnection()
            out = h.send(c, .publish(Frame.Publish(topic: .ppMsgP, targetId: "bob", messageId: 1, body: [])))
        case "badBody":
            c = h.online("alice")
            out = h.send(c, .publish(Frame.Publish(topic: .ppMsgP, targetId: "bob", messageId: 1, body: [0xFF, 0xFF])))
        default:
            c = h.online("alice")
            out = h.send(c, .connack(Frame.Connack(status: .accepted)))
        }
        #expect(out.closed(c))
        #expect(out.events.contains { if case .protocolError(c, _) = $0 { true } else { false } })
        #expect(out.events.contains { if case .sessionClosed(c, _, _, .protocolError) = $0 { true } else { false } })
    }

    @Test func blockUserDisconnectsAndRefuses() {
        var h = Harness()
        let c = h.online("alice")
        let out = h.run(.api(.blockUser(userId: "alice", blocked: true)))
        #expect(out.frames(c) == [.disconnect(Frame.Disconnect(status: .blocked))])
        #expect(out.closed(c))
        let (c2, again) = h.connect("alice")
        #expect(again.connack(c2)?.status == .userBlocked)
        h.run(.api(.blockUser(userId: "alice", blocked: false)))
        #expect(h.connect("alice").1.connack(ConnectionID(h.nextConnection - 1))?.status == .accepted)
    }
}

/// Issue 22 item 5. Seed rule (im-semantics §5): iOS and Android are both "mobile" for the
/// one-mobile-session rule — a newer Android login kicks the iPhone, not a desktop.
@Suite struct PlatformClassTests {
    @Test func iosAndAndroidShareTheMobileSlot() {
        var h = Harness()
        let iphone = h.online("alice", device: "iphone", platform: .ios)
        let desktop = h.online("alice", device: "mac", platform: .desktop)
        let (android, out) = h.connect("alice", device: "pixel", platform: .android)
        #expect(out.connack(android)?.status == .accepted)
        #expect(out.closed(iphone))
        #expect(!out.closed(desktop))
        #expect(h.core.onlineSessions(of: "alice").map(\.deviceId).sorted() == ["mac", "pixel"])
    }
}
