import IMClient
import IMWire
import SimKernel

extension World {
    /// The liveness phase begins: every fault heals, every device comes back to the foreground
    /// with network, the server is up; the workload stops. The run continues until every device
    /// converged or the deadline passes.
    func heal() {
        guard phase == .active else { return }
        phase = .liveness
        note(.phase(.liveness))
        network.healServer()
        if !server.up { serverRestart() }
        for d in devices.indices {
            network.heal(device: d)
            healStorage(d)
            switch devices[d].lifecycle {
            case .killed: appStart(d)
            case .running(foreground: false): appForeground(d)
            default: break
            }
            if !network.isInterfaceUp(device: d) { setNetwork(d, up: true) }
        }
        runPendingAppCalls()
        sim.schedule(.convergenceCheck, to: worldNode, after: .seconds(1))
        sim.schedule(.end, to: worldNode, at: deadline)
    }

    /// Devices expected to be online at the end: started, not deliberately offline, not given up
    /// for a fatal reason, not kicked by another device.
    public func expectedOnline(_ d: Int) -> Bool {
        devices[d].isRunning && !deliberatelyOffline.contains(d) && !devices[d].gaveUp
            && devices[d].status != .kickedOfflineByOtherClient && devices[d].status != .signOut
    }

    public var isConverged: Bool {
        for d in devices.indices where expectedOnline(d) && devices[d].status != .connected { return false }
        if network.bytesInFlight > 0 { return false }
        return convergenceChecks.allSatisfy { $0(self) == nil }
    }

    /// What the oracles' convergence conditions still wait for (empty once they are met).
    public var convergenceWaits: [String] { convergenceChecks.compactMap { $0(self) } }

    func convergenceCheck() {
        guard phase == .liveness else { return }
        if isConverged {
            convergedAt = sim.now
            finish()
            sim.requestStop()
            return
        }
        if sim.now + .seconds(1) <= deadline {
            sim.schedule(.convergenceCheck, to: worldNode, after: .seconds(1))
        }
    }
}
