import Foundation
import SimKernel
import Testing
@testable import IMWorld

/// Issue 23, item 8: the determinism digest sees content (bytes delivered, what the app is
/// told), so two runs that `trace diff` tells apart also differ in digest.
@Suite struct DigestContentTests {
    static func clockStepRun(_ by: String) throws -> String {
        let s = try scenario(#"""
            {"name": "step", "duration": "1m", "users": [{"id": "alice"}, {"id": "bob"}],
             "network": {"latency": {"fixed": "40ms"}},
             "script": [
               {"at": "10s", "device": "alice-phone", "action": "clockStep", "by": "\#(by)"},
               {"at": "20s", "device": "bob-phone", "action": "send", "to": "private:alice", "text": "hi"},
               {"at": "30s", "device": "alice-phone", "action": "send", "to": "private:bob", "text": "back"}]}
            """#)
        let run = try ScenarioRun(scenario: s, seed: 7)
        run.run()
        return run.world.sim.digest.description
    }

    @Test func clockStepsOfFiveSecondsAndOneHourGiveDifferentDigests() throws {
        let five = try Self.clockStepRun("5s")
        let hour = try Self.clockStepRun("1h")
        #expect(five != hour)
        // …and the digest is still a pure function of the run.
        #expect(try Self.clockStepRun("5s") == five)
    }

    @Test func callbackKeysSeeTimesAndContent() {
        let a = World.digestKey(.sendResult(messageId: 1, messageUId: "BK00-0000-0000-0001", sentTime: 5_000, error: nil))
        let b = World.digestKey(.sendResult(messageId: 1, messageUId: "BK00-0000-0000-0001", sentTime: 5_001, error: nil))
        let c = World.digestKey(.sendResult(messageId: 1, messageUId: "BK00-0000-0000-0001", sentTime: 5_000, error: 30003))
        #expect(a != b)
        #expect(a != c)
        #expect(World.digestKey(.chatroomJoined(roomId: "a")) != World.digestKey(.chatroomJoined(roomId: "b")))
    }
}
