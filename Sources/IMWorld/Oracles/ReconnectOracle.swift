import IMClient
import IMServer
import IMWire
import SimKernel

/// Reconnect attempts follow the schedule (0, 0.25, 0.5, 1, 2, 4, 8, 16, 32, 64, 64… s), which
/// restarts from 0 after the app comes to the foreground or the network changes; attempts stop
/// after a fatal connect error, a deliberate disconnect/logout, the time limit, or a kick; and a
/// device reconnecting from a stale session does not kick the device in active use.
final class ReconnectOracle: Oracle {
    let name = "reconnect"
    unowned let suite: OracleSuite
    private var expectReset: [Bool] = []
    private var stopped: [String?] = []      // why the device must not reconnect on its own
    // Server-side session history, per deviceId.
    private var lastApiConnect: [Int: SimTime] = [:]
    private var lastSessionEnd: [String: SimTime] = [:]
    private var sessionStart: [String: SimTime] = [:]

    init(suite: OracleSuite) { self.suite = suite }

    private func ensure(_ d: Int) {
        while expectReset.count <= d { expectReset.append(false); stopped.append(nil) }
    }

    func world(_ world: World, device d: Int, input: ClientInput, localMs: Int64) {
        ensure(d)
        switch input {
        case .lifecycle(.foreground), .networkChanged(available: true):
            expectReset[d] = true
        case .api(.connect):
            stopped[d] = nil
            lastApiConnect[d] = world.now
        case .api(.disconnect):
            stopped[d] = "disconnect()"
        case .api(.logout):
            stopped[d] = "logout()"
        default:
            break
        }
    }

    func world(_ world: World, device d: Int, effects: [ClientEffect]) {
        ensure(d)
        let schedule = world.clientConfig.reconnectSchedule
        for e in effects {
            switch e {
            case .note(.reconnectScheduled(let attempt, let delay)):
                if expectReset[d] && attempt != 0 {
                    suite.report(name, device: d, "reconnect attempt \(attempt) (delay \(delay)) after a foreground/network change: the schedule should have restarted from 0")
                    expectReset[d] = false
                    continue
                }
                expectReset[d] = false
                let want = schedule.isEmpty ? .zero : schedule[min(attempt, schedule.count - 1)]
                if delay != want {
                    suite.report(name, device: d, "reconnect attempt \(attempt) scheduled after \(delay), the schedule says \(want)")
                }
            case .openConnection:
                if let why = stopped[d] {
                    suite.report(name, device: d, "opened a connection by itself after \(why)")
                    stopped[d] = nil
                }
            case .callback(.connectError(let code)):
                stopped[d] = "connect error \(code)"
            case .callback(.connectionStatus(.kickedOfflineByOtherClient)):
                stopped[d] = "being kicked by another device"
            case .callback(.connected):
                expectReset[d] = false
            default:
                break
            }
        }
    }

    func world(_ world: World, serverEffects: [ServerEffect]) {
        for case .event(let e) in serverEffects {
            switch e {
            case .sessionOpened(_, _, let dev, _, _):
                sessionStart[dev] = world.now
            case .sessionClosed(_, _, let dev, _):
                lastSessionEnd[dev] = world.now
            case .kicked(_, _, let victim, let by):
                // A stale reconnect: `by` reconnected on its own (no connect() since its last
                // session ended) and the victim logged in after that session ended.
                guard let byIndex = world.deviceIndex(by), let byEnd = lastSessionEnd[by] else { continue }
                let reconnecting = (lastApiConnect[byIndex] ?? .zero) < byEnd
                if reconnecting, let vStart = sessionStart[victim], vStart > byEnd {
                    suite.report(name, device: byIndex,
                                 "stale reconnect of \(by) (session ended at \(byEnd)) kicked \(victim), which logged in at \(vStart)")
                }
            default:
                break
            }
        }
    }

    func finalCheck(_ world: World) {}
}
