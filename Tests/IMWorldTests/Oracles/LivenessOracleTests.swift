import Foundation
import IMClient
import IMServer
import IMStore
import IMWire
import SimKernel
import Testing
@testable import IMWorld

/// liveness: after the heal every device expected online converges before the deadline.
@Suite struct LivenessOracleTests {
    /// bob's access network takes 5 minutes each way — a path that is still effectively cut when
    /// the 20 s deadline after the heal passes (the heal ends scripted partitions, not a network
    /// this slow): his connects time out and he never gets online.
    func slow(_ cut: Bool) throws -> Scenario {
        try duo("liveness-cut", bob: cut ? #""startAt": "0s", "network": {"latency": {"fixed": "5m"}}"# : #""startAt": "0s""#,
                script: #"{"at": "5s", "device": "alice-phone", "action": "send", "to": "private:bob", "text": "hi"}"#,
                deadline: "20s")
    }

    @Test func neverConvergedIsReportedAtTheDeadline() throws {
        let (run, tap) = try runOracles(slow(true), enabled: ["liveness"])
        let v = try onlyViolation(run)
        #expect(run.world.convergedAt == nil)
        #expect(run.world.deadlineTime == SimTime.zero + .seconds(40))
        let last = try #require(tap.events.last)
        #expect(last.time == run.world.deadlineTime)
        expectReport(v, oracle: "liveness", device: "bob-phone", conversation: nil,
                     index: last.index, time: run.world.deadlineTime, scenario: "liveness-cut")
        #expect(v.detail.contains("not converged 20s after the heal"), "\(v.detail)")
        #expect(v.detail.contains("not connected: bob-phone"), "\(v.detail)")
        #expect(!v.detail.contains("alice-phone"))
        #expect(v.path.isEmpty && v.messageUId == nil)
    }

    /// A run held back by an oracle's convergence condition says which and what it waits for,
    /// not only that the world did not converge.
    @Test func theReportSaysWhatConvergenceWaitsFor() throws {
        let (run, _) = try runOracles(slow(false), enabled: ["liveness"]) { run in
            run.world.convergenceChecks.append { _ in "test waits for the moon" }
        }
        let v = try onlyViolation(run)
        #expect(run.world.convergedAt == nil)
        #expect(v.detail.contains("not converged 20s after the heal; test waits for the moon"), "\(v.detail)")
        #expect(!v.detail.contains("not connected"), "\(v.detail)")
        #expect(run.world.convergenceWaits.contains("test waits for the moon"))
    }

    @Test func convergedRunIsClean() throws {
        let (run, _) = try runOracles(slow(false))
        expectClean(run)
        let t = try #require(run.world.convergedAt)
        #expect(t >= run.world.healTime && t < run.world.deadlineTime)
    }
}
