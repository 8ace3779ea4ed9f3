import IMClient
import IMServer
import IMWire
import SimKernel
import Testing
@testable import IMWorld

/// A core's incomplete body (`ProtoBody.encodeBuilt`) reaches the run's report as a `wire`
/// violation, whatever oracles are enabled (issue 29).
@Suite struct IncompleteBodyReportTests {
    @Test func clientAndServerIncompleteBodiesAreReported() throws {
        let hook = Hook()
        let (run, _) = try runOracles(try Scenario.load(pathOrName: "quickstart").0, stop: false, enabled: [],
                                      observers: [hook], until: SimTime.zero + .seconds(5)) { run in
            var done = false
            let suite = try #require(run.suite)
            hook.onDispatch = { world, event in
                guard !done, event.time >= SimTime.zero + .seconds(3) else { return }
                done = true
                let i = IncompleteBody(message: "ChrmPullMsg", field: "syncTime", site: "IMClient/x.swift:1")
                suite.world(world, device: 1, applied: AppliedClientEffects([.note(.incompleteBody(i))]))
                suite.world(world, serverApplied: AppliedServerEffects([.event(.incompleteBody(i))]))
            }
        }
        let wire = run.violations.filter { $0.oracle == OracleSuite.wireOracle }
        #expect(wire.count == 2)
        #expect(wire.first?.device == run.world.deviceId(1))
        #expect(wire.first?.detail == "client core built an incomplete body: ChrmPullMsg built without required field syncTime at IMClient/x.swift:1")
        #expect(wire.last?.device == nil)
        #expect(wire.last?.detail.hasPrefix("server core built an incomplete body") == true)
    }
}
