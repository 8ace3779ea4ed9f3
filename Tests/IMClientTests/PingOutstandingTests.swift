import IMWire
import Testing
@testable import IMClient

/// The outstanding-PINGREQ flag lives in the machine, not in `ConnectedState` (branch `copies12`):
/// it must mean what the state's field meant — set by a ping on this session, cleared by its
/// PINGRESP and by every transition.
@Suite("Ping outstanding")
struct PingOutstandingTests {
    @Test("a second heartbeat while a PINGREQ is outstanding sends nothing; a stray PINGRESP is ignored")
    func oneAtATime() {
        var h = Harness()
        h.connectInSync()
        h.server(.pingResp())
        #expect(h.effects.notes.contains { if case .ignored("PINGRESP", _) = $0 { true } else { false } })
        #expect(h.effects.timersSet[.heartbeat] == nil)
        h.fire(.heartbeat)
        #expect(h.frames == [.pingReq()])
        h.fire(.heartbeat)
        #expect(h.frames.isEmpty)
        #expect(h.effects.timersSet[.pingTimeout] == nil)
        h.server(.pingResp())
        #expect(h.effects.timersSet[.heartbeat] == .seconds(30))
        h.fire(.pingTimeout)
        #expect(h.effects.closes == 0)
        #expect(h.core.connectionStateName == "connected")
    }

    @Test("a PINGREQ outstanding when the link drops is not outstanding on the next session")
    func clearedByReconnect() {
        var h = Harness()
        h.connectInSync()
        h.fire(.heartbeat)
        #expect(h.frames == [.pingReq()])
        h.feed(.transport(.closed(.reset)))
        #expect(h.effects.cancelled.contains(.pingTimeout))
        h.reconnect(timestamp: 2_000_000)
        #expect(h.core.connectionStateName == "connected")
        h.server(.pingResp())
        #expect(h.effects.notes.contains { if case .ignored("PINGRESP", _) = $0 { true } else { false } })
        h.fire(.pingTimeout)
        #expect(h.effects.closes == 0)
        h.fire(.heartbeat)
        #expect(h.frames == [.pingReq()])
        // A link lost with no ping outstanding cancels the heartbeat only.
        h.server(.pingResp())
        h.feed(.transport(.closed(.reset)))
        #expect(!h.effects.cancelled.contains(.pingTimeout))
        #expect(h.effects.cancelled.contains(.heartbeat))
    }
}
