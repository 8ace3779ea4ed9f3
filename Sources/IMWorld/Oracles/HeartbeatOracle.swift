import IMClient
import IMWire
import SimKernel

/// heartbeat: the lower bounds of the heartbeat of im-semantics §5 ("PINGREQ every 30 s; no
/// PINGRESP within 6 s → connection considered dead"), measured on the link. ReconnectTimingOracle
/// judges the upper bounds (a PINGREQ owed, a dead link kept); this one judges the other side:
///
/// - **not early**: on a connection whose CONNACK (status 0) the device read, a PINGREQ is written
///   no sooner than `heartbeatInterval` after that CONNACK or the last PINGRESP read — except the
///   web SDK's link check, written in the very input that read the CONNACK (wire §4);
/// - **not declared dead early**: the SDK gives a live connection up on its own (a
///   `closeConnection` while handling a timer, in the foreground) only when a PINGREQ has gone
///   unanswered for `pingTimeout` — not sooner, and not with no PINGREQ outstanding.
///
/// The two durations are the scenario's (`client.heartbeatInterval` / `pingTimeout`, the spec's
/// 30 s / 6 s by default), converted to simulated time through the device's clock drift; never the
/// core's configuration. Frames read come from the suite's decoding of the delivered bytes.
final class HeartbeatOracle: Oracle {
    static let oracleName = "heartbeat"
    let name = HeartbeatOracle.oracleName
    let hooks: OracleHooks = [.input, .applied, .note]
    let appliedKinds: AppliedKinds = [.send, .closeConnection]
    unowned let suite: OracleSuite

    private struct Device {
        /// A CONNACK with status 0 was read on the open connection.
        var connected = false
        /// When the heartbeat was last (re)armed: the CONNACK or the last PINGRESP read.
        var armedAt: SimTime?
        /// The PINGREQ awaiting its PINGRESP.
        var pingSentAt: SimTime?
        var background = false
        /// The input being handled read the CONNACK (a PINGREQ in its effects is the link check).
        var connackThisInput = false
        /// The input being handled is a timer.
        var timerThisInput = false
    }
    private var devices: [Device] = []
    private var reported: Set<Int> = []
    /// Timers fire at the exact converted time; this only absorbs nanosecond rounding.
    private let slack = SimDuration.milliseconds(1)

    init(suite: OracleSuite) { self.suite = suite }

    private func ensure(_ d: Int) { while devices.count <= d { devices.append(Device()) } }

    private func sim(_ world: World, _ d: Int, _ x: SimDuration) -> SimDuration {
        world.devices[d].clock.simDuration(forLocal: x)
    }

    private func lost(_ d: Int) {
        devices[d].connected = false
        devices[d].armedAt = nil
        devices[d].pingSentAt = nil
    }

    private func report(_ d: Int, _ detail: String) {
        guard reported.insert(d).inserted else { return }
        suite.report(name, device: d, detail)
    }

    func world(_ world: World, device d: Int, input: ClientInput, localMs: Int64) {
        ensure(d)
        devices[d].connackThisInput = false
        devices[d].timerThisInput = false
        switch input {
        case .transport(.closed):
            lost(d)
        case .transport(.bytes):
            for f in suite.inboundFrames {
                switch f {
                case .connack(let c) where c.statusCode == 0:
                    devices[d].connected = true
                    devices[d].armedAt = world.now
                    devices[d].pingSentAt = nil
                    devices[d].connackThisInput = true
                case .pingResp where devices[d].connected && devices[d].pingSentAt != nil:
                    devices[d].pingSentAt = nil
                    devices[d].armedAt = world.now
                default:
                    break
                }
            }
        case .timerFired:
            devices[d].timerThisInput = true
        case .lifecycle(.background):
            devices[d].background = true
        case .lifecycle(.foreground):
            devices[d].background = false
        default:
            break
        }
    }

    func world(_ world: World, device d: Int, applied effects: AppliedClientEffects) {
        ensure(d)
        for e in effects {
            switch e {
            case .send(_, let frames) where devices[d].connected && frames.contains(where: { $0.type == .pingReq }):
                if devices[d].pingSentAt == nil, !devices[d].connackThisInput, let armed = devices[d].armedAt {
                    let interval = world.scenario.client.heartbeatInterval.duration
                    let due = armed + sim(world, d, interval)
                    if world.now + slack < due {
                        report(d, "PINGREQ written \(world.now - armed) after the CONNACK or PINGRESP read at \(armed): "
                               + "the heartbeat (§5) pings every \(interval), not sooner")
                    }
                }
                if devices[d].pingSentAt == nil { devices[d].pingSentAt = world.now }
            case .closeConnection:
                if devices[d].connected, devices[d].timerThisInput, !devices[d].background {
                    let timeout = world.scenario.client.pingTimeout.duration
                    if let sent = devices[d].pingSentAt {
                        if world.now + slack < sent + sim(world, d, timeout) {
                            report(d, "connection given up as dead \(world.now - sent) after the PINGREQ at \(sent): "
                                   + "§5 waits \(timeout) for the PINGRESP")
                        }
                    } else {
                        report(d, "a live connection (CONNACK read, no PINGREQ outstanding, app in the foreground) "
                               + "given up on a timer: only an unanswered PINGREQ (§5) ends it")
                    }
                }
                lost(d)
            default:
                break
            }
        }
    }

    func world(_ world: World, note: WorldNote) {
        if case .lifecycle(let d, let change) = note {
            ensure(d)
            switch change {
            case .killed, .started:
                lost(d)
                devices[d].background = false
            default:
                break
            }
        }
    }

    func finalCheck(_ world: World) {}
}
