import IMServer
import IMWire
import SimKernel

extension World {
    func serverInput(_ input: ServerInput) {
        let ms = server.clock.ms(at: sim.now)
        forEachObserver { $0.world(self, serverInput: input, serverMs: ms) }
        let effects = server.core.handle(input, now: ms)
        applyServerEffects(effects)
    }

    /// Applies the effects, then tells observers what was applied.
    func applyServerEffects(_ effects: [ServerEffect]) {
        var events = 0
        applyThenPublish({
            for effect in effects {
                switch effect {
                case .send(let conn, let bytes, _):
                    serverWrite(conn, bytes)
                case .close(let conn):
                    network.close(server: conn)
                case .setTimer(let timer, let after):
                    server.timers[timer] = sim.rearm(server.timers[timer], .serverTimer(timer), to: serverNode, after: after)
                case .cancelTimer(let timer):
                    if let old = server.timers.removeValue(forKey: timer) { sim.cancel(old) }
                case .event:
                    events += 1
                }
            }
        }, {
            let applied = AppliedServerEffects(effects, eventCount: events)
            forEachObserver { $0.world(self, serverApplied: applied) }
        })
    }

    /// The server process dies: every connection's server side vanishes (the host's kernel sends
    /// RST), timers die, and it restarts after `downFor` with volatile state lost.
    func serverCrash(downFor: SimDuration) {
        guard server.up else { return }
        server.up = false
        counters.serverCrashes += 1
        note(.serverDown)
        for id in server.timers.armedBySchedule { sim.cancel(id) }
        server.timers = ServerTimerTable()
        network.serverCrashed()
        sim.schedule(.serverRestart, to: serverNode, after: downFor)
    }

    func serverRestart() {
        guard !server.up else { return }
        server.up = true
        note(.serverUp)
        applyServerEffects(server.core.crashAndRestart(now: server.clock.ms(at: sim.now)))
    }
}
