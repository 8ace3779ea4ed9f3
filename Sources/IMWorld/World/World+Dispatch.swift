import IMClient
import IMServer
import IMWire
import SimKernel

extension World {
    /// Schedules app starts, the script, workloads, random faults and the liveness phase.
    func scheduleStart() {
        for d in devices.indices {
            let spec = startSpec(d)
            var startRng = sim.streams.stream(StreamKey.start(device: devices[d].identity.deviceId))
            let at = spec?.duration ?? SimDuration(nanoseconds: startRng.uniform(0...3_000_000_000))
            sim.schedule(.appStart(device: Int32(d)), to: node(d), at: SimTime.zero + at)
        }
        for (i, step) in scenario.script.enumerated() {
            sim.schedule(.script(step: Int32(i), repeatIndex: 0), to: worldNode, at: SimTime.zero + step.at.duration)
        }
        scheduleWorkload()
        scheduleFaults()
        sim.schedule(.heal, to: worldNode, at: healAt)
        note(.phase(.active))
    }

    private func startSpec(_ d: Int) -> DurationValue? {
        let id = devices[d].identity.deviceId
        for u in scenario.users { for dev in u.devices where dev.id == id { return dev.startAt } }
        return nil
    }

    var serverNode: NodeID { NodeID(UInt32(devices.count)) }
    /// World-level events (script, heal, …) are addressed to the server node too; only the
    /// digest sees node ids.
    var worldNode: NodeID { serverNode }
    func node(_ d: Int) -> NodeID { NodeID(UInt32(d)) }

    func dispatch(_ event: SimEvent<WorldEvent>) {
        forEachObserver { $0.world(self, dispatching: event) }
        switch event.payload {
        case .appStart(let d):
            appStart(Int(d))
        case .script(let step, let rep):
            runScript(step: Int(step), repeatIndex: Int(rep))
        case .deliver(let c, let toServer):
            deliver(connection: Int(c), toServer: toServer)
        case .connectArrive(let c):
            connectArrive(Int(c))
        case .connectComplete(let c):
            connectComplete(Int(c))
        case .closeNotice(let c, let toServer, let reason):
            closeNotice(connection: Int(c), toServer: toServer, reason: reason)
        case .clientTimer(let d, let timer):
            let d = Int(d)
            devices[d].timers[timer] = nil
            clientInput(d, .timerFired(timer))
        case .serverTimer(let timer):
            server.timers[timer] = nil
            if server.up { serverInput(.timerFired(timer)) }
        case .workload(let u, let kind):
            workload(user: Int(u), kind: kind)
        case .faultStart(let kind, let d):
            faultStart(kind, device: Int(d))
        case .faultEnd(let kind, let d):
            faultEnd(kind, device: Int(d))
        case .network(let d, let up):
            if phase == .active || up { setNetwork(Int(d), up: up) }
        case .serverRestart:
            serverRestart()
        case .heal:
            heal()
        case .convergenceCheck:
            convergenceCheck()
        case .end:
            finish()
            sim.requestStop()
        }
    }
}
