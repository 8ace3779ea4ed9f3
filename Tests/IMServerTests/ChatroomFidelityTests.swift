import IMWire
import SimKernel
import Testing
@testable import IMServer

/// Issue 22 items 2 and 6 on the server (im-semantics §6).
@Suite struct ChatroomFidelityTests {
    static func harness(_ configure: (inout ServerConfig) -> Void = { _ in }) -> Harness {
        var cfg = ServerConfig()
        cfg.rateLimitPerSecond = 0
        configure(&cfg)
        return Harness(config: cfg)
    }

    /// alice and bob join at t0, bob leaves at t0 + 30 min; the auto-destroy timer fires at t0 + 1 h.
    static func leaveThenTimer(countsLeaving: Bool) -> (Harness, Output) {
        var h = harness { $0.chatroom.autoDestroyCountsLeaving = countsLeaving }
        let a = h.online("alice")
        let b = h.online("bob")
        _ = h.join(a, room: "r")
        _ = h.join(b, room: "r")
        h.now = Harness.t0 + 1_800_000
        _ = h.query(b, .exitChrm, target: "r", RMTPChrmInput.with { $0.nothing = 0 })
        let out = h.fire(.chatroomAutoDestroy(roomId: "r"), at: Harness.t0 + 3_600_000)
        return (h, out)
    }

    /// Seed rule (§6): "Auto-destroy after 1 hour with no messages and no joins" — leaving is not activity.
    @Test func leavingIsNotActivityByDefault() {
        let (h, out) = Self.leaveThenTimer(countsLeaving: false)
        #expect(out.has(.chatroomDestroyed(roomId: "r", reason: "inactive")))
        #expect(!h.core.chatroomExists("r"))
    }

    /// Seed rule (§6): "One passage of the guide also counts members entering or leaving as activity: a knob".
    @Test func theKnobCountsLeavingAsActivity() {
        let (h, out) = Self.leaveThenTimer(countsLeaving: true)
        #expect(!out.has(.chatroomDestroyed(roomId: "r", reason: "inactive")))
        #expect(out.effects.contains(.setTimer(.chatroomAutoDestroy(roomId: "r"), after: .milliseconds(1_800_000))))
        #expect(h.core.chatroomExists("r"))
    }

    /// Seed rule (§6): a failed join (23410, 23411) leaves the user in the room they were in, still receiving it.
    @Test func aFailedJoinKeepsTheOldRoom() throws {
        var h = Self.harness { $0.chatroom.memberLimit = 1 }
        let a = h.online("alice")
        let b = h.online("bob")
        _ = h.join(a, room: "r1")
        _ = h.join(b, room: "full")
        let missing = h.join(a, room: "nope", existingOnly: true)
        #expect(missing.queryAck(a)?.status == UInt16(IMErrorCode.chatroomNotExist.rawValue))
        let full = h.join(a, room: "full")
        #expect(full.queryAck(a)?.status == UInt16(IMErrorCode.chatroomMemberLimit.rawValue))
        #expect(h.core.chatrooms(of: "alice") == ["r1"])
        // A successful join moves her.
        _ = h.join(a, room: "r2")
        #expect(h.core.chatrooms(of: "alice") == ["r2"])
    }
}
