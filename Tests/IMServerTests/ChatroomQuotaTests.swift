import IMWire
import SimKernel
import Testing
@testable import IMServer

/// The drop policy of im-semantics §6: per 200 ms window, 40 slots = 20 reserved for high
/// priority + 20 shared. Messages are sent in one window in the order given; the test asserts
/// exactly which of them the other member is notified of.
@Suite struct ChatroomQuotaTests {
    /// One message class per character: H high (RC:TxtMsg), L low (app:Like), W whitelisted type (app:Gift).
    static func run(_ order: String, b13: Bool = false, notifySender: Bool = false) -> (fanned: String, dropped: String, statuses: [UInt16]) {
        var cfg = ServerConfig()
        cfg.rateLimitPerSecond = 0
        cfg.chatroom.lowPriorityTypes = ["app:Like"]
        cfg.chatroom.whitelistTypes = ["app:Gift"]
        cfg.chatroom.dropNotifiesSender = notifySender
        if b13 { cfg.bugs = [.b13] }
        var h = Harness(config: cfg)
        let a = h.online("alice")
        let b = h.online("bob")
        _ = h.join(a, room: "r")
        _ = h.join(b, room: "r")
        h.now = 1_700_000_000_000 // a window boundary (multiple of 200)
        var fanned = "", dropped = "", statuses: [UInt16] = []
        for (i, ch) in order.enumerated() {
            h.now = 1_700_000_000_000 + Int64(i) * 4 // 50 messages fit in 200 ms
            let type = ch == "H" ? "RC:TxtMsg" : (ch == "L" ? "app:Like" : "app:Gift")
            let out = h.sendRaw(a, to: "r", objectName: type, bytes: Array(#"{"content":"x"}"#.utf8), topic: .chatMsg).1
            statuses.append(out.puback(a)!.status)
            let toBob = out.publishes(b, topic: .s_ntf).count
            let drop = out.drops.contains { $0.reason == .chatroomQuota && $0.user == nil }
            #expect(toBob + (drop ? 1 : 0) == 1, "message \(i) is either notified or dropped")
            fanned.append(toBob == 1 ? ch : "-")
            dropped.append(drop ? ch : "-")
        }
        return (fanned, dropped, statuses)
    }

    static func s(_ parts: (String, Int)...) -> String { parts.map { String(repeating: $0.0, count: $0.1) }.joined() }

    @Test(arguments: [
        // The issue's mix, 25 high + 10 low + 5 whitelisted = 40 = capacity: whatever the order, all pass.
        ("10L 25H 5W", s(("L", 10), ("H", 25), ("W", 5)), s(("L", 10), ("H", 25), ("W", 5)), s(("L", 10), ("H", 25), ("W", 5))),
        ("25H 5W 10L", s(("H", 25), ("W", 5), ("L", 10)), s(("H", 25), ("W", 5), ("L", 10)), s(("H", 25), ("W", 5), ("L", 10))),
        ("5W 10L 25H", s(("W", 5), ("L", 10), ("H", 25)), s(("W", 5), ("L", 10), ("H", 25)), s(("W", 5), ("L", 10), ("H", 25))),
        // Over capacity: high takes 20 reserved + the 5 shared left; the last 5 high are dropped;
        // whitelisted still pass.
        ("15L 30H 5W", s(("L", 15), ("H", 30), ("W", 5)), s(("L", 15), ("H", 25), ("-", 5), ("W", 5)),
         s(("L", 15), ("H", 25), ("-", 5), ("W", 5))),
        // High first fills reserved and half the shared slots; low gets the rest of shared.
        ("30H 15L 5W", s(("H", 30), ("L", 15), ("W", 5)), s(("H", 30), ("L", 10), ("-", 5), ("W", 5)),
         s(("H", 30), ("L", 10), ("-", 5), ("W", 5))),
        // B13 shows: low overflows into the reserved high slots and high messages are dropped.
        ("25L 25H", s(("L", 25), ("H", 25)), s(("L", 20), ("-", 5), ("H", 20), ("-", 5)),
         s(("L", 25), ("H", 15), ("-", 10))),
        // Whitelisted take shared first, so low runs out sooner.
        ("5W 20L 20H", s(("W", 5), ("L", 20), ("H", 20)), s(("W", 5), ("L", 15), ("-", 5), ("H", 20)),
         s(("W", 5), ("L", 20), ("H", 15), ("-", 5))),
        // Whitelisted are never dropped, even with every slot gone.
        ("20H 20L 3W", s(("H", 20), ("L", 20), ("W", 3)), s(("H", 20), ("L", 20), ("W", 3)), s(("H", 20), ("L", 20), ("W", 3))),
    ])
    func dropTable(_ name: String, order: String, expected: String, expectedB13: String) {
        let off = Self.run(order)
        #expect(off.fanned == expected, "\(name), B13 off")
        #expect(off.statuses.allSatisfy { $0 == 0 }, "silent drop: PUBACK success")
        let on = Self.run(order, b13: true)
        #expect(on.fanned == expectedB13, "\(name), B13 on")
    }

    @Test func dropNotifiesSenderKnob() {
        let r = Self.run(Self.s(("H", 42)), notifySender: true)
        #expect(r.fanned == Self.s(("H", 40), ("-", 2)))
        #expect(r.statuses == Array(repeating: 0, count: 40) + [20604, 20604])
    }

    /// A new window starts with fresh slots; the user whitelist counts as whitelisted.
    @Test func windowsAndUserWhitelist() {
        var cfg = ServerConfig()
        cfg.rateLimitPerSecond = 0
        cfg.chatroom.quotaCapacity = 2
        cfg.chatroom.quotaReservedHigh = 1
        var h = Harness(config: cfg)
        let a = h.online("alice")
        let b = h.online("bob")
        _ = h.join(a, room: "r")
        _ = h.join(b, room: "r")
        h.run(.api(.setChatroomUserWhitelist(roomId: "r", userIds: ["bob"])))
        func send(_ c: ConnectionID, at t: Int64) -> Bool {
            h.now = 1_700_000_000_000 + t
            return !h.sendText(c, to: "r", "x", topic: .chatMsg).1.drops.contains { $0.reason == .chatroomQuota }
        }
        #expect([send(a, at: 0), send(a, at: 50), send(a, at: 199), send(b, at: 199), send(a, at: 200)] == [true, true, false, true, true])
    }
    /// The message-type whitelist changed at run time (issue 22, server API): with a full window
    /// a gift is dropped before its type is whitelisted, passes after, and is dropped again once
    /// the whitelist is emptied.
    @Test func messageWhitelistChangedAtRunTime() {
        var cfg = ServerConfig()
        cfg.rateLimitPerSecond = 0
        cfg.chatroom.quotaCapacity = 1
        cfg.chatroom.quotaReservedHigh = 1
        var h = Harness(config: cfg)
        let a = h.online("alice")
        let b = h.online("bob")
        _ = h.join(a, room: "r")
        _ = h.join(b, room: "r")
        func passes(_ type: String, window: Int64) -> Bool {
            // The window's one slot goes to a text first; then the message under test.
            h.now = 1_700_000_000_000 + window * 200
            _ = h.sendRaw(a, to: "r", objectName: "RC:TxtMsg", bytes: Array(#"{"content":"x"}"#.utf8), topic: .chatMsg)
            h.now += 1
            let out = h.sendRaw(a, to: "r", objectName: type, bytes: Array(#"{"gift":1}"#.utf8), topic: .chatMsg).1
            return !out.drops.contains { $0.reason == .chatroomQuota }
        }
        #expect(h.core.chatroomWhitelistTypes.isEmpty)
        #expect(!passes("app:Gift", window: 0))
        h.run(.api(.setChatroomMessageWhitelist(objectNames: ["app:Gift"])))
        #expect(h.core.chatroomWhitelistTypes == ["app:Gift"])
        #expect(passes("app:Gift", window: 1))
        #expect(!passes("app:Rose", window: 2), "only the listed types")
        h.run(.api(.setChatroomMessageWhitelist(objectNames: [])))
        #expect(!passes("app:Gift", window: 3))
    }
}
