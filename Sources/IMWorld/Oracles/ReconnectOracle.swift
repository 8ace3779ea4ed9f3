import IMClient
import IMServer
import IMWire
import SimKernel

/// Reconnect attempts follow the schedule (0, 0.25, 0.5, 1, 2, 4, 8, 16, 32, 64, 64… s), which
/// restarts from 0 after the app comes to the foreground or the network changes; attempts stop
/// after a fatal connect error, a deliberate disconnect/logout, the time limit, or a kick. (The
/// kick policy of a retry is ReconnectKickPolicyOracle's.)
final class ReconnectOracle: Oracle {
    let name = "reconnect"
    unowned let suite: OracleSuite
    private var expectReset: [Bool] = []
    private var stopped: [String?] = []      // why the device must not reconnect on its own
    /// The reconnect attempt a device is waiting for (schedule index, delay, since when).
    private var waiting: [(attempt: Int, delay: SimDuration, since: SimTime)?] = []
    /// A foreground / network change arrived while waiting: its effects must restart the schedule.
    private var resetDue: [String?] = []
    // Server-side session history, per deviceId.
    private var lastApiConnect: [Int: SimTime] = [:]
    /// Devices that connected since their last `connect()` (their retries carry the reconnect flag).
    private var connectedSinceApiConnect: Set<Int> = []
    private var lastSessionEnd: [String: SimTime] = [:]
    private var sessionStart: [String: SimTime] = [:]

    /// Per device: when the running `connect(timeLimit:)` gives up (sim time), until a CONNACK
    /// accepted is read from the link.
    private var giveUpAt: [Int: SimTime] = [:]
    /// CONNACK statuses the SDK never retries after (im-semantics §5: 31004, 31008, 31009, 31020).
    static let fatalConnack: Set<UInt8> = [4, 8, 9, 10]

    /// Attempt and heartbeat timing measured on the link (its own file; reports as `reconnect`).
    private let timing: ReconnectTimingOracle

    init(suite: OracleSuite) {
        self.suite = suite
        timing = ReconnectTimingOracle(suite: suite)
    }

    func world(_ world: World, dispatching event: SimEvent<WorldEvent>) {
        timing.world(world, dispatching: event)
    }

    private func ensure(_ d: Int) {
        while expectReset.count <= d { expectReset.append(false); stopped.append(nil); waiting.append(nil); resetDue.append(nil) }
    }

    func world(_ world: World, device d: Int, input: ClientInput, localMs: Int64) {
        timing.world(world, device: d, input: input, localMs: localMs)
        ensure(d)
        // What the device read decides too, not only what its core said about it: a fatal
        // CONNACK status or a kick / ban DISCONNECT ends retrying (§5).
        for f in suite.inboundFrames {
            switch f {
            case .connack(let c) where c.statusCode == 0:
                giveUpAt[d] = nil
            case .connack(let c) where Self.fatalConnack.contains(c.statusCode):
                stopped[d] = "CONNACK status \(c.statusCode) (fatal, read at \(world.now))"
                waiting[d] = nil
            case .disconnect(let x) where x.statusCode == 1 || x.statusCode == 2:
                stopped[d] = "DISCONNECT status \(x.statusCode) (\(x.statusCode == 1 ? "kicked" : "blocked"), read at \(world.now))"
                waiting[d] = nil
            default:
                break
            }
        }
        switch input {
        case .api(.connect(_, let limit)):
            giveUpAt[d] = limit > 0 ? world.now + .seconds(Int64(limit)) : nil
        default:
            break
        }
        switch input {
        case .lifecycle(.foreground), .networkChanged(available: true):
            // An attempt already due at once (index 0) is the start of the schedule: nothing to restart.
            if let w = waiting[d], w.attempt == 0 { break }
            expectReset[d] = true
            if waiting[d] != nil {
                if case .lifecycle = input { resetDue[d] = "the app came to the foreground" } else { resetDue[d] = "the network changed" }
            }
        case .networkChanged(available: false):
            waiting[d] = nil
        case .api(.connect):
            connectedSinceApiConnect.remove(d)
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
        timing.world(world, device: d, effects: effects)
        ensure(d)
        if let why = resetDue[d] {
            // Waiting for a reconnect attempt, the schedule restarts: an attempt at once (index 0).
            resetDue[d] = nil
            let restarted = effects.contains {
                if case .note(.reconnectScheduled(0, _)) = $0 { return true }
                if case .openConnection = $0 { return true }
                return false
            }
            if !restarted, let w = waiting[d] {
                expectReset[d] = false
                suite.report(name, device: d,
                             "\(why) while waiting \(w.delay) for reconnect attempt \(w.attempt) (scheduled at \(w.since)): the schedule " +
                             "should restart from 0 (an attempt now), but the device keeps waiting")
            }
        }
        for e in effects {
            switch e {
            case .note(.reconnectScheduled(let attempt, let delay)):
                if expectReset[d] && attempt != 0 {
                    suite.report(name, device: d, "reconnect attempt \(attempt) (delay \(delay)) after a foreground/network change: the schedule should have restarted from 0")
                    expectReset[d] = false
                    continue
                }
                expectReset[d] = false
                waiting[d] = (attempt, delay, world.now)
                // The delay itself is judged by ReconnectTimingOracle from when connections are
                // actually opened (a note's own attempt index proves nothing).
            case .openConnection:
                waiting[d] = nil
                if let limit = giveUpAt[d], world.now > limit {
                    giveUpAt[d] = nil
                    suite.report(name, device: d, "opened a connection after the connect time limit ran out at \(limit) with no connection (34006)")
                }
                if let why = stopped[d] {
                    suite.report(name, device: d, "opened a connection by itself after \(why)")
                    stopped[d] = nil
                }
            case .callback(.connectError(let code)):
                stopped[d] = "connect error \(code)"
                waiting[d] = nil
            case .callback(.connectionStatus(.kickedOfflineByOtherClient)):
                stopped[d] = "being kicked by another device"
                waiting[d] = nil
            case .callback(.connectionStatus(.unconnected)), .callback(.connectionStatus(.signOut)):
                waiting[d] = nil
            case .callback(.connectionStatus(.connected)):
                expectReset[d] = false
                waiting[d] = nil
                connectedSinceApiConnect.insert(d)
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
            // Whether a retry may kick the device in use is reconnectKickEnable's to decide
            // (issue 22): checked by ReconnectKickPolicyOracle.
            default:
                break
            }
        }
    }

    func world(_ world: World, note: WorldNote) {
        timing.world(world, note: note)
        if case .lifecycle(let d, .killed) = note {
            ensure(d)
            waiting[d] = nil
            resetDue[d] = nil
        }
    }

    func finalCheck(_ world: World) {}
}
