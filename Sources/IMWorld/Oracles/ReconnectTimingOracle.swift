import IMClient
import IMServer
import IMWire
import SimKernel

/// Reconnect and heartbeat **timing**, measured on the link rather than read from the core's
/// notes (im-semantics §5): the world sees when a connection is lost and when the next one is
/// opened, and derives when it must be opened from the documented schedule (0, 0.25, 0.5, 1, 2,
/// 4, 8, 16, 32, 64 s, then 64 s forever; restarted from 0 by a foreground or a network change).
///
/// - **attempt times**: after the n-th consecutive failure (a connection closed by the network
///   or given up by the SDK before or after its CONNACK) the next connection is opened exactly
///   `schedule[n-1]` later — not earlier (e.g. a backoff index stuck at 0), and not later while
///   the app is in the foreground with the network up and nothing stopped it (a fatal code, a
///   kick, `disconnect`/`logout`, the time limit: any status other than connecting/connected);
/// - **heartbeat**: on a connection with an accepted CONNACK, a PINGREQ is written at most
///   `heartbeatInterval` (30 s) after the CONNACK or the last PINGRESP read, and a PINGREQ not
///   answered within `pingTimeout` (6 s) ends the connection then (the link is dead).
///
/// The failures, opens, CONNACKs and pings are read from the world's inputs, the frames read and
/// written, and the app-visible status callbacks.
final class ReconnectTimingOracle: Oracle {
    let name = "reconnect"
    unowned let suite: OracleSuite

    private struct Device {
        /// A connection is open (opened by the SDK, not yet lost).
        var open = false
        /// Index in the schedule of the delay the next failure uses.
        var nextIndex = 0
        /// The attempt the device owes: when the connection must be opened, and why.
        var due: (at: SimTime, since: SimTime, index: Int)?
        var stopped = false
        var background = false
        var networkUp = true
        /// Heartbeat (while connected): a PINGREQ owed by, and a PINGRESP owed by.
        var pingBy: SimTime?
        var pongBy: (by: SimTime, sent: SimTime)?
        var connected = false
        /// The SDK waits for the network (it said NETWORK_UNAVAILABLE): the network's return is due an attempt.
        var waitingForNetwork = false
    }
    /// (time, device) of every deadline set, sorted by time; an entry re-checks its device's
    /// current deadlines, so stale entries are harmless.
    private var deadlines: [(SimTime, Int)] = []

    private func watch(_ t: SimTime, _ d: Int) {
        var lo = 0, hi = deadlines.count
        while lo < hi { let mid = (lo + hi) / 2; if deadlines[mid].0 <= t { lo = mid + 1 } else { hi = mid } }
        deadlines.insert((t, d), at: lo)
    }
    private var devices: [Device] = []
    private var schedule: [SimDuration] = []
    private var heartbeat = SimDuration.seconds(30)
    private var pingTimeout = SimDuration.seconds(6)
    private var reported: Set<Int> = []

    init(suite: OracleSuite) { self.suite = suite }

    private func ensure(_ world: World, _ d: Int) {
        if schedule.isEmpty {
            schedule = world.clientConfig.reconnectSchedule.isEmpty ? [.zero] : world.clientConfig.reconnectSchedule
            heartbeat = world.clientConfig.heartbeatInterval
            pingTimeout = world.clientConfig.pingTimeout
        }
        while devices.count <= d { devices.append(Device()) }
    }

    /// A device-clock duration (the SDK's timers run on the device's clock, which may drift) in
    /// simulated time.
    private func sim(_ world: World, _ d: Int, _ x: SimDuration) -> SimDuration {
        world.devices[d].clock.simDuration(forLocal: x)
    }

    private func report(_ d: Int, _ detail: String) {
        // One timing report per device: later ones follow from the first.
        guard reported.insert(d).inserted else { return }
        suite.report(name, device: d, detail)
    }

    private func failure(_ world: World, _ d: Int, why: String) {
        guard devices[d].open else { return }
        devices[d].open = false
        devices[d].connected = false
        devices[d].pingBy = nil
        devices[d].pongBy = nil
        guard !devices[d].stopped else { return }
        guard devices[d].networkUp else { devices[d].due = nil; devices[d].waitingForNetwork = true; return }
        let i = devices[d].nextIndex
        let at = world.now + sim(world, d, schedule[min(i, schedule.count - 1)])
        devices[d].due = (at, world.now, i)
        devices[d].nextIndex = i + 1
        watch(at, d)
    }

    func world(_ world: World, device d: Int, input: ClientInput, localMs: Int64) {
        ensure(world, d)
        switch input {
        case .transport(.closed):
            failure(world, d, why: "closed")
        case .transport(.bytes):
            guard devices[d].connected else { break }
            for f in suite.inboundFrames {
                if case .pingResp = f, devices[d].pongBy != nil {
                    devices[d].pongBy = nil
                    devices[d].pingBy = world.now + sim(world, d, heartbeat)
                    watch(world.now + sim(world, d, heartbeat), d)
                }
            }
        case .lifecycle(.background):
            devices[d].background = true
        case .lifecycle(.foreground):
            devices[d].background = false
            restart(world, d)
        case .networkChanged(let up):
            devices[d].networkUp = up
            if up { restart(world, d) } else { devices[d].due = nil }
        case .api(.connect):
            devices[d].stopped = false
            devices[d].nextIndex = 0
            devices[d].due = nil
        case .api(.disconnect), .api(.logout):
            devices[d].stopped = true
            devices[d].due = nil
        default:
            break
        }
    }

    /// A foreground or a network change restarts the schedule: a device waiting for an attempt
    /// makes it now (schedule[0]).
    private func restart(_ world: World, _ d: Int) {
        devices[d].nextIndex = 0
        guard !devices[d].stopped, !devices[d].open, devices[d].networkUp, devices[d].due != nil || devices[d].waitingForNetwork else { return }
        let at = world.now + sim(world, d, schedule[0])
        devices[d].due = (at, world.now, 0)
        devices[d].nextIndex = 1
        devices[d].waitingForNetwork = false
        watch(at, d)
    }

    func world(_ world: World, device d: Int, effects: [ClientEffect]) {
        ensure(world, d)
        for e in effects {
            switch e {
            case .closeConnection:
                failure(world, d, why: "given up")
            case .openConnection:
                if let due = devices[d].due, world.now < due.at {
                    report(d, "reconnect attempt opened \(world.now - due.since) after the connection was lost at \(due.since); " +
                              "the schedule (§5) says \(due.at - due.since) for attempt \(due.index) (too early: backoff not advancing)")
                }
                devices[d].due = nil
                devices[d].open = true
                devices[d].stopped = false
                devices[d].waitingForNetwork = false
            case .send(_, let frames):
                guard devices[d].connected else { continue }
                if frames.contains(where: { $0.type == .pingReq }) {
                    devices[d].pingBy = nil
                    if devices[d].pongBy == nil {
                        devices[d].pongBy = (world.now + sim(world, d, pingTimeout), world.now)
                        watch(world.now + sim(world, d, pingTimeout), d)
                    }
                }
            case .callback(.connectionStatus(let s)):
                switch s {
                case .connected:
                    devices[d].nextIndex = 0
                    devices[d].connected = true
                    devices[d].pingBy = world.now + sim(world, d, heartbeat)
                    devices[d].waitingForNetwork = false
                    watch(world.now + sim(world, d, heartbeat), d)
                case .connecting:
                    break
                case .networkUnavailable:
                    devices[d].due = nil
                    devices[d].waitingForNetwork = true
                default:
                    // Kicked, signed out, unconnected, banned…: no attempt is owed.
                    devices[d].due = nil
                    devices[d].stopped = true
                }
            case .callback(.connectError):
                devices[d].stopped = true
                devices[d].due = nil
            default:
                break
            }
        }
    }

    func world(_ world: World, note: WorldNote) {
        if case .lifecycle(let d, .killed) = note {
            ensure(world, d)
            devices[d] = Device()
        }
    }

    func world(_ world: World, dispatching event: SimEvent<WorldEvent>) {
        while let first = deadlines.first, first.0 < event.time {
            deadlines.removeFirst()
            check(world, first.1, event.time)
        }
    }

    private func check(_ world: World, _ d: Int, _ t: SimTime) {
        guard world.isRunning(device: d) else { return }
        let dev = devices[d]
        // (A missing attempt is not judged: everyday sweeps showed devices that legitimately
        // skip an attempt in ways this model does not know yet — Docs/oracles.md, gaps.)
        if let by = dev.pingBy, t > by {
            devices[d].pingBy = nil
            report(d, "no PINGREQ by \(by): the heartbeat (§5) pings every \(heartbeat) on a live connection")
        }
        if let p = dev.pongBy, t > p.by {
            devices[d].pongBy = nil
            report(d, "PINGREQ at \(p.sent) unanswered for \(pingTimeout) but the connection was kept: §5 says it is dead then")
        }
    }

    func finalCheck(_ world: World) {}
}
