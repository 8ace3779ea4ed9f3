import IMClient
import IMWire
import SimKernel

/// Reconnect, heartbeat and stop rules of im-semantics §5, judged from one device's stream alone
/// — the inputs it was fed (app calls, bytes read, lifecycle, network), the frames it read, the
/// effects it produced (connections opened and given up, frames written) and the app callbacks —
/// never from the core's `reconnectScheduled` note (its own attempt index proves nothing). The
/// world's `reconnect` oracle and `imsim replay` (ReplayChecks) feed the same rule, with times in
/// nanoseconds of any one clock (the world's simulated time, or the capture's ms × 10⁶).
///
/// - **attempt times**: after the n-th consecutive failure (a connection closed by the network,
///   or given up by the SDK — ping or CONNACK timeout, refused CONNACK — before or after its
///   CONNACK) the next connection is opened exactly `schedule[n-1]` later (0, 0.25, 0.5, 1, 2,
///   4, 8, 16, 32, 64 s, then 64 s forever). n restarts at an accepted CONNACK, at `connect()`
///   (not a second one while the first is in effect: the SDK ignores it),
///   and at a foreground / network change, which owes a waiting device an attempt at once — also
///   a device whose SDK closed the connection in the background (§5's iOS background close:
///   "messages reach the user only by push until foreground"; the schedule restarts from 0 there).
///   Opened earlier than due → `too early` (a backoff index stuck at 0); not opened by
///   due + `lateTolerance` while the app is in the foreground, the network is up and nothing
///   stopped it → `late` (a backoff that skips, a missing restart — B11 —, a lost timer);
/// - **heartbeat**: on a connection with an accepted CONNACK, a PINGREQ is written at most
///   `heartbeatInterval` after the CONNACK or the last PINGRESP read, and a PINGREQ unanswered for
///   `pingTimeout` ends the connection then (the link is dead: found within 30 s + 6 s);
/// - **stop**: no connection opened by the SDK itself after `disconnect()`, `logout()`, a connect
///   error, a kick (the status callback, or a DISCONNECT with status 1 / 2 read on the link), a
///   CONNACK with a fatal status (4, 8, 9, 10 = 31004, 31008, 31009, 31020), or after the
///   `connect(timeLimit:)` ran out without an accepted CONNACK.
///
/// Durations in the rule are the device's (its monotonic clock, which may drift by `driftPpm`);
/// they are converted to the caller's clock.
public struct ReconnectRule: Sendable {
    public enum Kind: Sendable, Equatable {
        /// Timing (one per device): early / late attempt, heartbeat, ping timeout.
        case timing
        /// A connection opened while the SDK must not retry.
        case stop
    }

    public struct Finding: Sendable, Equatable {
        public var kind: Kind
        public var at: Int64
        /// Text with `{t:N}` placeholders for times (ns), rendered by `detail(_:)`.
        var parts: [Part]

        enum Part: Sendable, Equatable {
            case text(String)
            case time(Int64)
        }

        /// The report text, with times printed by `time`.
        public func detail(_ time: (Int64) -> String) -> String {
            parts.map { if case .text(let s) = $0 { s } else if case .time(let t) = $0 { time(t) } else { "" } }.joined()
        }
    }

    /// CONNACK statuses the SDK never retries after (§5: 31004, 31008, 31009, 31020).
    public static let fatalConnack: Set<UInt8> = [4, 8, 9, 10]
    /// How late an attempt may be before it counts as missing (timers fire on whole device
    /// milliseconds; the kernel orders events of one instant).
    public static let lateTolerance: Int64 = 100_000_000

    let schedule: [Int64]
    let heartbeat: Int64
    let pingTimeout: Int64
    let driftPpm: Int64

    /// What one SDK instance's connection machinery is doing (reset when the app restarts).
    private struct Link: Sendable {
        /// A connection is open (opened by the SDK, not yet lost).
        var open = false
        var connected = false
        /// Index in the schedule of the delay the next failure uses.
        var nextIndex = 0
        /// The attempt the device owes: when, since when, which index, why ("lost" / the restart's cause).
        var due: (at: Int64, since: Int64, index: Int, why: String)?
        var stopped: String?
        /// A `connect()` is in effect: called, and nothing stopped the SDK since (disconnect,
        /// logout, a connect error, a kick, a fatal CONNACK). §5: connect once per app
        /// lifetime — a second call meanwhile changes nothing (the SDK ignores it).
        var callActive = false
        /// The SDK said it stopped on its own (a status other than connecting/connected): no attempt owed.
        var quiet = false
        /// The SDK went quiet with UNCONNECTED while the app was in the background, nothing
        /// stopped it: the iOS background close (§5). The next foreground owes an attempt at once.
        var suspended = false
        var background = false
        var waitingForNetwork = false
        /// A foreground / network change restarted the schedule while nothing was owed (the SDK
        /// suspended, or connected): if the SDK resumes at once, that attempt is the restarted
        /// schedule's first (`schedule[0]`), so the failure after it waits `schedule[1]`.
        var restartedQuietly = false
        var pingBy: Int64?
        var pongBy: (by: Int64, sent: Int64)?
        var giveUpAt: Int64?
    }
    private var link = Link()
    private var networkUp = true
    private var timingReported = false

    public init(schedule: [SimDuration], heartbeat: SimDuration, pingTimeout: SimDuration, driftPpm: Int64 = 0) {
        self.driftPpm = driftPpm
        func conv(_ d: SimDuration) -> Int64 {
            driftPpm == 0 ? d.nanoseconds : Int64(clamping: Int128(d.nanoseconds) * 1_000_000 / Int128(1_000_000 + driftPpm))
        }
        self.schedule = (schedule.isEmpty ? [.zero] : schedule).map(conv)
        self.heartbeat = conv(heartbeat)
        self.pingTimeout = conv(pingTimeout)
    }

    /// im-semantics §5: "Reconnect backoff: 0, 0.25, 0.5, 1, 2, 4, 8, 16, 32, 64 s, then 64 s
    /// forever". Written here from the spec, not read from the core's `ClientConfig` (a wrong
    /// default there must show as a wrong attempt time); a scenario cannot change it.
    public static let documentedSchedule: [SimDuration] = [
        .zero, .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(8),
        .seconds(16), .seconds(32), .seconds(64),
    ]

    /// The rule of a simulated device: the documented schedule, the heartbeat and ping timeout
    /// the scenario sets (defaults: §5's 30 s and 6 s).
    public init(scenario client: ClientSettings, driftPpm: Int64 = 0) {
        self.init(schedule: Self.documentedSchedule, heartbeat: client.heartbeatInterval.duration,
                  pingTimeout: client.pingTimeout.duration, driftPpm: driftPpm)
    }

    /// The rule of a captured SDK: the configuration its capture recorded.
    public init(config: ClientConfig, driftPpm: Int64 = 0) {
        self.init(schedule: config.reconnectSchedule, heartbeat: config.heartbeatInterval, pingTimeout: config.pingTimeout,
                  driftPpm: driftPpm)
    }

    private func local(seconds s: Int64) -> Int64 {
        let ns = s * 1_000_000_000
        return driftPpm == 0 ? ns : Int64(clamping: Int128(ns) * 1_000_000 / Int128(1_000_000 + driftPpm))
    }

    /// The earliest time a deadline of this rule falls (nil: none).
    public var nextDeadline: Int64? {
        var next: Int64?
        func take(_ t: Int64?) { if let t, next.map({ t < $0 }) ?? true { next = t } }
        if let d = link.due { take(d.at + Self.lateTolerance) }
        take(link.pingBy)
        take(link.pongBy?.by)
        return timingReported ? nil : next
    }

    /// A new SDK instance (app start or kill): its connection machinery starts afresh.
    public mutating func appRestarted() {
        link = Link()
    }

    /// The caller's clock stepped by `delta` (a capture's times are the device's wall clock):
    /// pending deadlines move with it, so a step is neither an early nor a late attempt.
    public mutating func clockStepped(by delta: Int64) {
        if let d = link.due { link.due = (d.at + delta, d.since + delta, d.index, d.why) }
        link.pingBy = link.pingBy.map { $0 + delta }
        link.pongBy = link.pongBy.map { ($0.by + delta, $0.sent + delta) }
        link.giveUpAt = link.giveUpAt.map { $0 + delta }
    }

    private mutating func timing(_ at: Int64, _ parts: [Finding.Part], into out: inout [Finding]) {
        guard !timingReported else { return }
        timingReported = true
        out.append(Finding(kind: .timing, at: at, parts: parts))
    }

    private mutating func failure(at t: Int64, why: String) {
        guard link.open else { return }
        link.open = false
        link.connected = false
        link.pingBy = nil
        link.pongBy = nil
        guard link.stopped == nil, !link.quiet else { return }
        guard networkUp else { link.due = nil; link.waitingForNetwork = true; return }
        let i = link.nextIndex
        link.due = (t + schedule[min(i, schedule.count - 1)], t, i, why)
        link.nextIndex = i + 1
    }

    /// A foreground or a network change restarts the schedule: a waiting device attempts now.
    private mutating func restart(at t: Int64, why: String) {
        link.nextIndex = 0
        guard link.stopped == nil, !link.quiet, !link.open, networkUp, link.due != nil || link.waitingForNetwork else {
            link.restartedQuietly = !link.open
            return
        }
        link.due = (t + schedule[0], t, 0, why)
        link.nextIndex = 1
        link.waitingForNetwork = false
    }

    /// An input about to be fed to the core; `inbound` = the frames its bytes completed.
    public mutating func input(_ input: ClientInput, inbound: [Frame], at t: Int64) {
        for f in inbound {
            switch f {
            case .connack(let c) where c.statusCode == 0:
                link.giveUpAt = nil
            case .connack(let c) where Self.fatalConnack.contains(c.statusCode):
                link.stopped = "CONNACK status \(c.statusCode) (fatal)"
                link.callActive = false
                link.due = nil
            case .disconnect(let x) where x.statusCode == 1 || x.statusCode == 2:
                link.stopped = "DISCONNECT status \(x.statusCode) (\(x.statusCode == 1 ? "kicked" : "blocked"))"
                link.callActive = false
                link.due = nil
            case .pingResp where link.connected && link.pongBy != nil:
                link.pongBy = nil
                link.pingBy = t + heartbeat
            default:
                break
            }
        }
        switch input {
        case .transport(.closed):
            failure(at: t, why: "lost")
        case .lifecycle(.background):
            link.background = true
        case .lifecycle(.foreground):
            link.background = false
            if link.suspended {
                link.suspended = false
                if link.stopped == nil, !link.open {
                    link.quiet = false
                    link.waitingForNetwork = true
                }
            }
            restart(at: t, why: "the app came to the foreground")
        case .networkChanged(let up):
            networkUp = up
            if up { restart(at: t, why: "the network changed") } else { link.due = nil }
        case .api(.connect(_, let limit)):
            // Seen in everyday-storage --swarm seed 254: the app's own reconnect call during
            // the SDK's retries was taken for a restart of the schedule.
            guard !link.callActive else { break }
            link.callActive = true
            link.restartedQuietly = false
            link.suspended = false
            link.stopped = nil
            link.quiet = false
            link.nextIndex = 0
            link.due = nil
            link.giveUpAt = limit > 0 ? t + local(seconds: Int64(limit)) : nil
        case .api(.disconnect):
            link.stopped = "disconnect()"
            link.callActive = false
            link.due = nil
        case .api(.logout):
            link.stopped = "logout()"
            link.callActive = false
            link.due = nil
        default:
            break
        }
    }

    /// The effects the core returned for the last input.
    public mutating func effects(_ effects: [ClientEffect], at t: Int64) -> [Finding] {
        var out: [Finding] = []
        for e in effects {
            switch e {
            case .closeConnection:
                failure(at: t, why: "given up")
            case .openConnection:
                if let limit = link.giveUpAt, t > limit {
                    link.giveUpAt = nil
                    out.append(Finding(kind: .stop, at: t, parts: [
                        .text("opened a connection after the connect time limit ran out at "), .time(limit),
                        .text(" with no connection (34006)")]))
                }
                if let why = link.stopped {
                    out.append(Finding(kind: .stop, at: t, parts: [.text("opened a connection by itself after \(why)")]))
                    link.stopped = nil
                }
                if let d = link.due, t < d.at {
                    timing(t, [.text("reconnect attempt opened \(SimDuration(nanoseconds: t - d.since)) after " +
                                     (d.why == "lost" || d.why == "given up" ? "the connection was lost at " : "\(d.why) at ")),
                               .time(d.since),
                               .text("; the schedule (§5) says \(SimDuration(nanoseconds: d.at - d.since)) for attempt \(d.index) " +
                                     "(too early: backoff not advancing)")], into: &out)
                }
                if link.restartedQuietly, link.due == nil, link.nextIndex == 0 { link.nextIndex = 1 }
                link.restartedQuietly = false
                link.due = nil
                link.open = true
                link.quiet = false
                link.suspended = false
                link.waitingForNetwork = false
            case .send(_, let frames):
                guard link.connected, frames.contains(where: { $0.type == .pingReq }) else { continue }
                link.pingBy = nil
                if link.pongBy == nil { link.pongBy = (t + pingTimeout, t) }
            case .callback(.connectionStatus(let s)):
                switch s {
                case .connected:
                    link.nextIndex = 0
                    link.connected = true
                    link.pingBy = t + heartbeat
                    link.waitingForNetwork = false
                case .connecting:
                    break
                case .networkUnavailable:
                    link.due = nil
                    link.waitingForNetwork = true
                case .kickedOfflineByOtherClient:
                    link.stopped = "being kicked by another device"
                    link.callActive = false
                    link.due = nil
                default:
                    // Unconnected (suspended in the background, signed out…), banned: the SDK
                    // says it stopped retrying; nothing is owed until it opens again — or, for
                    // the background close, until the app comes to the foreground.
                    link.due = nil
                    link.quiet = true
                    link.suspended = s == .unconnected && link.background && link.stopped == nil && !link.open
                    if !link.suspended { link.callActive = false }
                }
            case .callback(.connectError(let code)):
                link.stopped = "connect error \(code)"
                link.callActive = false
                link.due = nil
            default:
                break
            }
        }
        return out
    }

    /// Deadlines passed by `t` (the time of the next event), for a device that is running.
    public mutating func due(at t: Int64) -> [Finding] {
        var out: [Finding] = []
        if let d = link.due, t > d.at + Self.lateTolerance, !link.background, networkUp, link.stopped == nil, !link.quiet {
            link.due = nil
            timing(t, [.text("no reconnect attempt by "), .time(d.at + Self.lateTolerance), .text(": " +
                              (d.why == "lost" || d.why == "given up" ? "the connection was \(d.why) at " : "\(d.why) at ")),
                       .time(d.since),
                       .text(" and the schedule (§5) says attempt \(d.index) after \(SimDuration(nanoseconds: d.at - d.since))" +
                             (d.index == 0 && d.why != "lost" && d.why != "given up" ? ": the schedule should restart from 0 (an attempt at once)" : "") +
                             " (late: backoff too long or no attempt)")], into: &out)
        } else if let d = link.due, t > d.at + Self.lateTolerance {
            link.due = nil
        }
        if let by = link.pingBy, t > by {
            link.pingBy = nil
            timing(t, [.text("no PINGREQ by "), .time(by),
                       .text(": the heartbeat (§5) pings every \(SimDuration(nanoseconds: heartbeat)) on a live connection")], into: &out)
        }
        if let p = link.pongBy, t > p.by {
            link.pongBy = nil
            timing(t, [.text("PINGREQ at "), .time(p.sent),
                       .text(" unanswered for \(SimDuration(nanoseconds: pingTimeout)) but the connection was kept: §5 says it is dead then")],
                   into: &out)
        }
        return out
    }
}
