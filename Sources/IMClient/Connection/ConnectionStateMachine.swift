import IMWire
import SimKernel

/// What the connection machine asks the rest of the core to do.
enum LinkEvent: Sendable {
    /// A new transport connection is being opened: fresh decoder, message ids from 1.
    case opening
    /// Write this CONNECT.
    case sendConnect(Frame.Connect)
    /// Write a PINGREQ.
    case sendPing
    /// A PINGREQ was answered (the link check before the first pull may go on).
    case pongReceived
    /// CONNACK accepted: start syncing, rejoin chatrooms.
    case sessionStarted(ConnectedState, firstOfCall: Bool)
    /// The connection or the attempt is gone (`wasConnected`: a session was up): requests in
    /// flight fail, pulls stop, joined chatrooms need a rejoin.
    case linkLost(ConnectFailure, wasConnected: Bool)
    /// The connect call ended for good (disconnect, logout, fatal error).
    case stopped(StoppedState.Reason)
}

/// Connection, heartbeat and reconnect (im-semantics §5): an enum of states, one struct per state,
/// one `mutating func` per input. Plain effects (timers, open/close, status callbacks, notes) go
/// straight into the effect buffer; everything that concerns the rest of the core comes back as
/// `LinkEvent`s.
struct ConnectionStateMachine: Sendable {
    enum State: Sendable, Hashable {
        case idle(IdleState)
        case opening(OpeningState)
        case awaitingConnack(AwaitingConnackState)
        case connected(ConnectedState)
        case reconnectWait(ReconnectWaitState)
        case networkWait(NetworkWaitState)
        case suspended(SuspendedState)
        case stopped(StoppedState)

        var name: String {
            switch self {
            case .idle: "idle"
            case .opening: "opening"
            case .awaitingConnack: "awaitingConnack"
            case .connected: "connected"
            case .reconnectWait: "reconnectWait"
            case .networkWait: "networkWait"
            case .suspended: "suspended"
            case .stopped: "stopped"
            }
        }

        /// The connect call of an active state (nil when idle or stopped).
        var call: ConnectCall? {
            switch self {
            case .idle, .stopped: nil
            case .opening(let s): s.call
            case .awaitingConnack(let s): s.call
            case .connected(let s): s.call
            case .reconnectWait(let s): s.call
            case .networkWait(let s): s.call
            case .suspended(let s): s.call
            }
        }

        /// A transport connection exists (being opened, or open).
        var hasTransport: Bool {
            switch self {
            case .opening, .awaitingConnack, .connected: true
            default: false
            }
        }
    }

    struct Settings: Sendable, Hashable {
        var clientId: String
        var appKey: String
        var heartbeatInterval: SimDuration
        var pingTimeout: SimDuration
        var connackTimeout: SimDuration
        var backgroundCloseAfter: SimDuration
        /// iOS only (im-semantics §5): other platforms keep their connection in the background.
        var closesInBackground: Bool
        var reconnectSchedule: [SimDuration]
        var reconnectKickEnable: Bool
        /// Bug B11: the backoff is not reset on foreground / network change.
        var b11: Bool

        init(identity: DeviceIdentity, config: ClientConfig) {
            clientId = Frame.Connect.clientId(platform: identity.platform, deviceId: identity.deviceId)
            appKey = identity.appKey
            heartbeatInterval = config.heartbeatInterval
            pingTimeout = config.pingTimeout
            connackTimeout = config.connackTimeout
            backgroundCloseAfter = config.backgroundCloseAfter
            closesInBackground = identity.platform.closesInBackground
            reconnectSchedule = config.reconnectSchedule.isEmpty ? [.zero] : config.reconnectSchedule
            reconnectKickEnable = config.reconnectKickEnable
            b11 = config.bugs.contains(.b11)
        }
    }

    let settings: Settings
    private(set) var state: State = .idle(IdleState())
    private(set) var networkAvailable = true
    private(set) var foreground = true
    /// The last connection status reported to the app (reported only on change).
    private(set) var reportedStatus: ConnectionStatus?
    private var backgroundCloseArmed = false
    /// A PINGREQ is outstanding on the connected session (heartbeat or the link check before the
    /// first pull). Kept here, not in `ConnectedState`, so a ping flips a flag instead of copying
    /// the state out of the enum and back; false in every other state (reset on each transition).
    private(set) var pingOutstanding = false

    init(settings: Settings) {
        self.settings = settings
    }

    // MARK: - API

    mutating func connect(token: String, timeLimitSeconds: Int32, _ out: inout EffectBuffer) -> [LinkEvent] {
        switch state {
        case .idle, .stopped:
            if timeLimitSeconds > 0 { out.setTimer(.connectTimeLimit, after: .seconds(Int64(timeLimitSeconds))) }
            if !foreground, !backgroundCloseArmed { armBackgroundClose(&out) }
            return startAttempt(ConnectCall(token: token, timeLimitSeconds: timeLimitSeconds), reason: "connect()", &out)
        default:
            out.note(.ignored(input: "connect", reason: "a connect call is active (\(state.name))"))
            return []
        }
    }

    /// `disconnect` (push kept) or `logout` (no push): ends the connection and reconnection.
    mutating func disconnect(logout: Bool, _ out: inout EffectBuffer) -> [LinkEvent] {
        guard let call = state.call else {
            out.note(.ignored(input: logout ? "logout" : "disconnect", reason: "not connecting (\(state.name))"))
            return []
        }
        let wasConnected = if case .connected = state { true } else { false }
        var events: [LinkEvent] = []
        if state.hasTransport {
            out.append(.closeConnection)
            cancelConnectionTimers(&out)
            events.append(.linkLost(.temporary(ClientErrorCode.notConnected, logout ? "logout()" : "disconnect()"),
                                    wasConnected: wasConnected))
        }
        events += stop(call, logout ? .loggedOut : .disconnected, status: logout ? .signOut : .unconnected,
                       reason: logout ? "logout()" : "disconnect()", &out)
        return events
    }

    // MARK: - Transport

    mutating func transportOpened(_ out: inout EffectBuffer) -> [LinkEvent] {
        guard case .opening(let s) = state else {
            out.note(.ignored(input: "transport opened", reason: "not opening (\(state.name))"))
            return []
        }
        let connect = Frame.Connect(
            keepAlive: UInt16(clamping: settings.heartbeatInterval.milliseconds / 1000), clientId: settings.clientId,
            appKey: settings.appKey, token: s.call.token, isReconnect: s.isReconnect,
            reconnectKickEnable: settings.reconnectKickEnable)
        transition(to: .awaitingConnack(AwaitingConnackState(s)), reason: "transport opened", &out)
        return [.sendConnect(connect)]
    }

    mutating func transportClosed(_ reason: TransportCloseReason, _ out: inout EffectBuffer) -> [LinkEvent] {
        guard let call = state.call, state.hasTransport else {
            out.note(.ignored(input: "transport closed (\(reason.rawValue))", reason: "no connection (\(state.name))"))
            return []
        }
        return fail(call, .transportClosed(reason), closeTransport: false, &out)
    }

    /// The decoder rejected the stream: close and treat as a lost connection.
    mutating func protocolError(_ what: String, _ out: inout EffectBuffer) -> [LinkEvent] {
        guard let call = state.call, state.hasTransport else { return [] }
        return fail(call, .protocolError(what), closeTransport: true, &out)
    }

    // MARK: - Frames

    mutating func connackReceived(_ c: Frame.Connack, _ out: inout EffectBuffer) -> [LinkEvent] {
        guard case .awaitingConnack(let s) = state else {
            out.note(.ignored(input: "CONNACK \(c.statusCode)", reason: "not awaiting CONNACK (\(state.name))"))
            return []
        }
        out.cancelTimer(.connackTimeout)
        guard c.statusCode == ConnackStatus.accepted.rawValue else {
            return fail(s.call, .connack(c.statusCode), closeTransport: true, cancelTimers: false, &out)
        }
        var connected = ConnectedState(s, session: c.session, fallbackUserId: "")
        let first = !connected.call.outcomeReported
        if connected.call.timeLimitSeconds > 0, !connected.call.everConnected { out.cancelTimer(.connectTimeLimit) }
        connected.call.outcomeReported = true
        connected.call.everConnected = true
        connected.call.backoffIndex = 0
        transition(to: .connected(connected), reason: "CONNACK accepted (session \(connected.sessionId))", &out)
        report(.connected, &out)
        if first { out.callback(.connected(userId: connected.userId)) }
        out.setTimer(.heartbeat, after: settings.heartbeatInterval)
        return [.sessionStarted(connected, firstOfCall: first)]
    }

    mutating func disconnectReceived(_ d: Frame.Disconnect, _ out: inout EffectBuffer) -> [LinkEvent] {
        guard case .connected(let s) = state else {
            out.note(.ignored(input: "DISCONNECT \(d.statusCode)", reason: "not connected (\(state.name))"))
            return []
        }
        let failure: ConnectFailure = switch d.status {
        case .kickedByOtherDevice: .kicked
        case .blocked: .blocked
        case nil: .temporary(IMErrorCode.socketClosed.rawValue, "DISCONNECT \(d.statusCode)")
        }
        return fail(s.call, failure, closeTransport: true, &out)
    }

    mutating func pingResponse(_ out: inout EffectBuffer) -> [LinkEvent] {
        guard case .connected = state, pingOutstanding else {
            out.note(.ignored(input: "PINGRESP", reason: "no PINGREQ outstanding"))
            return []
        }
        pingOutstanding = false
        out.cancelTimer(.pingTimeout)
        out.setTimer(.heartbeat, after: settings.heartbeatInterval)
        return [.pongReceived]
    }

    /// Sends a PINGREQ now (heartbeat, or the web SDK's link check before the first pull).
    mutating func ping(_ out: inout EffectBuffer) -> [LinkEvent] {
        guard case .connected = state, !pingOutstanding else { return [] }
        pingOutstanding = true
        out.setTimer(.pingTimeout, after: settings.pingTimeout)
        return [.sendPing]
    }

    // MARK: - Timers

    mutating func timerFired(_ timer: ClientTimer, _ out: inout EffectBuffer) -> [LinkEvent] {
        switch (timer, state) {
        case (.connackTimeout, .opening(let s)):
            return fail(s.call, .connackTimeout, closeTransport: true, cancelTimers: false, &out)
        case (.connackTimeout, .awaitingConnack(let s)):
            return fail(s.call, .connackTimeout, closeTransport: true, cancelTimers: false, &out)
        case (.heartbeat, .connected):
            return ping(&out)
        case (.pingTimeout, .connected(let s)) where pingOutstanding:
            return fail(s.call, .pingTimeout, closeTransport: true, &out)
        case (.reconnect, .reconnectWait(let s)):
            return startAttempt(s.call, reason: "reconnect timer (\(s.delay))", &out)
        case (.backgroundClose, _):
            backgroundCloseArmed = false
            return suspendForBackground(&out)
        case (.connectTimeLimit, _):
            guard let call = state.call, !call.everConnected else { return [] }
            var events: [LinkEvent] = []
            if state.hasTransport {
                out.append(.closeConnection)
                cancelConnectionTimers(&out)
                events.append(.linkLost(.timeLimit, wasConnected: false))
            }
            let failure = ConnectFailure.timeLimit
            events += stop(call, .failed(code: failure.code), status: failure.status, reason: failure.reason, &out)
            return events
        default:
            out.note(.ignored(input: "timer \(timer)", reason: "stale in \(state.name)"))
            return []
        }
    }

    // MARK: - Environment

    mutating func lifecycle(_ l: AppLifecycle, _ out: inout EffectBuffer) -> [LinkEvent] {
        switch l {
        case .background:
            guard foreground else { return [] }
            foreground = false
            if state.call != nil, !backgroundCloseArmed { armBackgroundClose(&out) }
            return []
        case .foreground:
            guard !foreground else { return [] }
            foreground = true
            if backgroundCloseArmed {
                backgroundCloseArmed = false
                out.cancelTimer(.backgroundClose)
            }
            return restartBackoff(reason: "foreground", &out)
        }
    }

    mutating func networkChanged(available: Bool, _ out: inout EffectBuffer) -> [LinkEvent] {
        let was = networkAvailable
        networkAvailable = available
        if !available {
            guard was, let call = state.call else { return [] }
            let events: [LinkEvent]
            switch state {
            case .opening, .awaitingConnack, .connected, .reconnectWait: events = endLink("network unavailable", &out)
            default: return []
            }
            transition(to: .networkWait(NetworkWaitState(call: call)), reason: "network unavailable", &out)
            report(.networkUnavailable, &out)
            return events
        }
        // Available again, or a change between networks: both restart the schedule (B11: not).
        return restartBackoff(reason: was ? "network changed" : "network available", &out)
    }

    // MARK: - Internals

    /// Opens a connection for `call` (or waits for the network).
    private mutating func startAttempt(_ call: ConnectCall, reason: String, _ out: inout EffectBuffer) -> [LinkEvent] {
        var call = call
        guard networkAvailable else {
            transition(to: .networkWait(NetworkWaitState(call: call)), reason: "\(reason); no network", &out)
            report(.networkUnavailable, &out)
            return []
        }
        call.attempts += 1
        out.append(.openConnection)
        out.setTimer(.connackTimeout, after: settings.connackTimeout)
        transition(to: .opening(OpeningState(call: call)), reason: "\(reason); attempt \(call.attempts)", &out)
        report(.connecting, &out)
        return [.opening]
    }

    /// The attempt or connection failed: fatal → stop; otherwise schedule the next attempt.
    private mutating func fail(_ call: ConnectCall, _ failure: ConnectFailure, closeTransport: Bool,
                               cancelTimers: Bool = true, _ out: inout EffectBuffer) -> [LinkEvent] {
        let wasConnected = if case .connected = state { true } else { false }
        if closeTransport { out.append(.closeConnection) }
        if cancelTimers { cancelConnectionTimers(&out) }
        var events: [LinkEvent] = [.linkLost(failure, wasConnected: wasConnected)]
        if failure.fatal {
            events += stop(call, .failed(code: failure.code), status: failure.status, reason: failure.description, &out)
        } else {
            scheduleRetry(call, reason: failure.description, &out)
        }
        return events
    }

    private mutating func scheduleRetry(_ call: ConnectCall, reason: String, _ out: inout EffectBuffer) {
        var call = call
        guard networkAvailable else {
            transition(to: .networkWait(NetworkWaitState(call: call)), reason: "\(reason); no network", &out)
            report(.networkUnavailable, &out)
            return
        }
        let schedule = settings.reconnectSchedule
        let delay = schedule[min(call.backoffIndex, schedule.count - 1)]
        // `attempt` is the index in the schedule (0 = the immediate retry), per the contract.
        out.note(.reconnectScheduled(attempt: call.backoffIndex, delay: delay))
        call.backoffIndex += 1
        out.setTimer(.reconnect, after: delay)
        transition(to: .reconnectWait(ReconnectWaitState(call: call, delay: delay)), reason: reason, &out)
        report(.connecting, &out)
    }

    /// Foreground or network change: restart the schedule from 0 (B11: keep the position).
    private mutating func restartBackoff(reason: String, _ out: inout EffectBuffer) -> [LinkEvent] {
        switch state {
        case .reconnectWait(var s):
            if settings.b11 {
                // B11: the pending (possibly 64 s) timer keeps running.
                out.note(.ignored(input: reason, reason: "B11: reconnect backoff not reset"))
                return []
            }
            out.cancelTimer(.reconnect)
            s.call.backoffIndex = 0
            scheduleRetry(s.call, reason: "\(reason): backoff reset", &out)
            return []
        case .networkWait(var s):
            guard networkAvailable else { return [] }
            if !settings.b11 { s.call.backoffIndex = 0 }
            scheduleRetry(s.call, reason: "\(reason)\(settings.b11 ? " (B11: backoff not reset)" : "")", &out)
            return []
        case .suspended(var s):
            guard foreground else { return [] }
            if !settings.b11 { s.call.backoffIndex = 0 }
            scheduleRetry(s.call, reason: "\(reason)\(settings.b11 ? " (B11: backoff not reset)" : "")", &out)
            return []
        case .opening(var s) where !settings.b11 && s.call.backoffIndex > 0:
            // An attempt is in flight: let it run, but if it fails the schedule starts again at 0.
            s.call.backoffIndex = 0
            state = .opening(s)
            out.note(.ignored(input: reason, reason: "attempt in flight; backoff reset for the next one"))
            return []
        case .awaitingConnack(var s) where !settings.b11 && s.call.backoffIndex > 0:
            s.call.backoffIndex = 0
            state = .awaitingConnack(s)
            out.note(.ignored(input: reason, reason: "attempt in flight; backoff reset for the next one"))
            return []
        default:
            return []
        }
    }

    /// Before parking the link (no network, background): closes an attempt or connection (its
    /// timers, a `linkLost` event with `why`) or ends the reconnect wait.
    private mutating func endLink(_ why: String, _ out: inout EffectBuffer) -> [LinkEvent] {
        switch state {
        case .opening, .awaitingConnack, .connected:
            let wasConnected = if case .connected = state { true } else { false }
            out.append(.closeConnection)
            cancelConnectionTimers(&out)
            return [.linkLost(.temporary(ClientErrorCode.notConnected, why), wasConnected: wasConnected)]
        case .reconnectWait:
            out.cancelTimer(.reconnect)
            return []
        default:
            return []
        }
    }

    /// The background timer fired: close and stay quiet until foreground.
    private mutating func suspendForBackground(_ out: inout EffectBuffer) -> [LinkEvent] {
        guard !foreground, let call = state.call else { return [] }
        let events: [LinkEvent]
        switch state {
        case .opening, .awaitingConnack, .connected, .reconnectWait: events = endLink("background close", &out)
        case .networkWait: events = []
        case .suspended, .idle, .stopped: return []
        }
        transition(to: .suspended(SuspendedState(call: call)), reason: "background for \(settings.backgroundCloseAfter)", &out)
        report(.unconnected, &out)
        return events
    }

    private mutating func stop(_ call: ConnectCall, _ reason: StoppedState.Reason, status: ConnectionStatus,
                               reason text: String, _ out: inout EffectBuffer) -> [LinkEvent] {
        if case .reconnectWait = state { out.cancelTimer(.reconnect) }
        if call.timeLimitSeconds > 0, !call.everConnected { out.cancelTimer(.connectTimeLimit) }
        if backgroundCloseArmed {
            backgroundCloseArmed = false
            out.cancelTimer(.backgroundClose)
        }
        transition(to: .stopped(StoppedState(reason: reason)), reason: text, &out)
        report(status, &out)
        if case .failed(let code) = reason, !call.outcomeReported { out.callback(.connectError(code: code)) }
        return [.stopped(reason)]
    }

    private mutating func armBackgroundClose(_ out: inout EffectBuffer) {
        guard settings.closesInBackground else { return }
        backgroundCloseArmed = true
        out.setTimer(.backgroundClose, after: settings.backgroundCloseAfter)
    }

    /// Timers that belong to one transport connection.
    private func cancelConnectionTimers(_ out: inout EffectBuffer) {
        switch state {
        case .opening, .awaitingConnack:
            out.cancelTimer(.connackTimeout)
        case .connected:
            out.cancelTimer(.heartbeat)
            if pingOutstanding { out.cancelTimer(.pingTimeout) }
        default:
            break
        }
    }

    private mutating func transition(to new: consuming State, reason: String, _ out: inout EffectBuffer) {
        out.note(.state(from: state.name, to: new.name, reason: reason))
        state = new
        pingOutstanding = false
    }

    private mutating func report(_ status: ConnectionStatus, _ out: inout EffectBuffer) {
        guard reportedStatus != status else { return }
        reportedStatus = status
        out.callback(.connectionStatus(status))
    }
}
