import Foundation
import IMStore
import SimKernel
import Testing
@testable import IMWorld

// Issue 28 in the world: device stores on the simulated-storage VFS, storage faults.

private func quickstart(store: ClientSettings.StoreMode, faults: String? = nil) throws -> Scenario {
    var (s, _) = try Scenario.load(pathOrName: "quickstart")
    s.client.store = store
    if let faults {
        // Added to the scenario's own faults (kinds given here replace its rate for that kind).
        let extra = try JSONDecoder().decode(FaultSpec.self, from: Data(faults.utf8))
        var spec = s.faults ?? FaultSpec()
        for kind in extra.enabledKinds { spec.random[kind] = extra.random[kind] }
        s.faults = spec
    }
    return s
}

private let storageFaults = #"{"random": {"powerLossTorn": {"rate": "1/40s"}, "powerLoss": {"rate": "1/60s"}, "ioError": {"rate": "1/30s", "duration": ["1s", "5s"]}, "diskFull": {"rate": "1/30s", "duration": ["1s", "5s"]}, "kill": {"rate": "1/40s"}}}"#

@Suite struct StorageFaultWorldTests {
    /// Without faults the VFS changes nothing the users see: the same ledger. (Not the same
    /// digest: device stores start the clientUniqueId counter at the device clock, and
    /// clientUniqueIds go on the wire.)
    @Test func deviceStoreRunsLikeMemoryWithoutFaults() throws {
        func once(_ mode: ClientSettings.StoreMode) throws -> (String, Ledger) {
            let s = try quickstart(store: mode)
            let run = try ScenarioRun(scenario: s, seed: 7, oracles: OracleOptions(scenarioArgument: "quickstart"))
            run.run(until: SimTime.zero + .seconds(90))
            #expect(run.violations.isEmpty)
            return (run.world.sim.digest.description, run.ledger())
        }
        let m = try once(.memory), d = try once(.device)
        #expect(m.1 == d.1)
    }

    /// Same scenario and seed with storage faults on: same digest; the faults really fired; every
    /// store sound afterwards (integrity_check, unread counts against the rows).
    @Test func storageFaultsAreDeterministicAndLeaveSoundStores() throws {
        let s = try quickstart(store: .device, faults: storageFaults)
        func once(_ seed: UInt64) throws -> (String, ScenarioRun) {
            let run = try ScenarioRun(scenario: s, seed: seed, oracles: OracleOptions(scenarioArgument: "quickstart"))
            run.run(until: SimTime.zero + .seconds(240))
            return (run.world.sim.digest.description, run)
        }
        let (a, run) = try once(3)
        let (b, _) = try once(3)
        #expect(a == b)
        let (c, _) = try once(4)
        #expect(a != c)
        var powerLosses: UInt64 = 0, failedWrites: UInt64 = 0
        for d in 0..<run.world.deviceCount {
            let disk = try #require(run.world.disk(ofDevice: d))
            powerLosses += disk.stats.powerLosses
            failedWrites += disk.stats.writeErrors + disk.stats.fullErrors
            let store = run.world.store(ofDevice: d)
            guard store.isOpen else { continue }
            #expect(try store.integrityProblems() == [], "device \(d)")
            for conv in try store.conversationList() {
                #expect(try store.countUnreadCandidates(in: conv.key) == conv.unreadCount, "device \(d) \(conv.key)")
            }
        }
        #expect(powerLosses > 0)
        #expect(failedWrites > 0)
    }

    /// Synced copies are kept only where a power loss can come (a power-loss fault kind or a
    /// script step); without them the run is the same run: same digest, same ledger.
    @Test func devicesKeepSyncedCopiesOnlyWhenPowerCanBeLost() throws {
        func disks(_ s: Scenario) throws -> [Bool] {
            let run = try ScenarioRun(scenario: s, seed: 7)
            return try (0..<run.world.deviceCount).map { try #require(run.world.disk(ofDevice: $0)).tracksPowerLoss }
        }
        #expect(try disks(quickstart(store: .device)).allSatisfy { !$0 })
        #expect(try disks(quickstart(store: .device, faults: #"{"random": {"powerLoss": {"rate": "1/60s"}}}"#)).allSatisfy { $0 })
        #expect(try disks(quickstart(store: .device, faults: #"{"random": {"powerLossTorn": {"rate": "1/60s"}}}"#)).allSatisfy { $0 })
        var scripted = try quickstart(store: .device)
        scripted.script.append(ScriptStep(at: SimDuration.seconds(30), device: scripted.users[0].devices[0].id,
                                          action: .powerLoss(torn: false, downFor: .seconds(3))))
        #expect(try disks(scripted).allSatisfy { $0 })

        // The same run with every device forced to keep its synced copies.
        let s = try quickstart(store: .device, faults: #"{"random": {"kill": {"rate": "1/20s"}, "ioError": {"rate": "1/30s", "duration": ["1s", "5s"]}}}"#)
        func once(tracked: Bool) throws -> (String, Ledger) {
            let run = try ScenarioRun(scenario: s, seed: 11, oracles: OracleOptions(scenarioArgument: "quickstart"))
            for d in 0..<run.world.deviceCount where tracked { run.world.disk(ofDevice: d)?.tracksPowerLoss = true }
            run.run(until: SimTime.zero + .seconds(180))
            #expect(run.violations.isEmpty)
            #expect(run.world.stats.appKills > 0)
            return (run.world.sim.digest.description, run.ledger())
        }
        let lean = try once(tracked: false), exact = try once(tracked: true)
        #expect(lean.0 == exact.0)
        #expect(lean.1 == exact.1)
    }

    @Test func storageFaultsNeedDeviceStoresAndMoveNoOtherDraw() throws {
        // With `store: memory` the storage kinds schedule nothing: the digest is the no-fault one.
        let plain = try ScenarioRun(scenario: quickstart(store: .memory), seed: 5)
        plain.run(until: SimTime.zero + .seconds(60))
        let withKinds = try ScenarioRun(scenario: quickstart(store: .memory, faults: #"{"random": {"powerLoss": {"rate": "1/10s"}, "diskFull": {"rate": "1/10s"}}}"#), seed: 5)
        withKinds.run(until: SimTime.zero + .seconds(60))
        #expect(plain.world.sim.digest == withKinds.world.sim.digest)
        // Swarm picks the storage kinds from their own stream: the other kinds' picks stay.
        var swarmPlain = try quickstart(store: .memory)
        swarmPlain.swarm = true
        var swarmKinds = try quickstart(store: .memory, faults: #"{"random": {"powerLossTorn": {"rate": "1/10s"}, "ioError": {"rate": "1/10s"}}}"#)
        swarmKinds.swarm = true
        for seed in UInt64(1)...4 {
            let a = try ScenarioRun(scenario: swarmPlain, seed: seed), b = try ScenarioRun(scenario: swarmKinds, seed: seed)
            a.run(until: SimTime.zero + .seconds(60)); b.run(until: SimTime.zero + .seconds(60))
            #expect(a.world.sim.digest == b.world.sim.digest, "seed \(seed)")
        }
    }
}
