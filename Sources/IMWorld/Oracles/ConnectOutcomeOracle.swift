import IMClient
import IMWire
import SimKernel

/// connect-outcome: `connect(token, timeLimit)` answers the app once — `success(userId)` or
/// `error(code)` (im-semantics §5: "callbacks dbOpened, success(userId), error(code) — after
/// error the SDK never retries"). Judged from the app's calls and callbacks:
///
/// - the first time the SDK reports status CONNECTED for a call, the same input tells the app
///   `success` with the device's own userId;
/// - no second `success` or `error` for one call (a reconnection is not a new outcome);
/// - no outcome without a call.
///
/// - `connect(timeLimit: t > 0)` (§5: "give up after that many seconds with 34006"): error 34006
///   not before `t` seconds of the call, and an outcome within `t` seconds plus a margin (both
///   widened by the largest clock drift a device may have, 99 999 ppm: the SDK's timer runs on the
///   device's monotonic clock). Not judged once the app went to the background during the call.
///   A call without a time limit never fails with 34006 (an earlier call's timer left armed).
///
/// - The token (issue 21, sixth round): §5's token errors follow the token the scenario gave the
///   user (`token`: valid by default — signed by the server's own signer for an account of the
///   scenario, expiring a year after the start; `expired`; `revoked`, signed with another key).
///   A valid token is never answered 31004 (token incorrect) or 31020 (token expired); an expired
///   one never 31004, a revoked one never 31020. Users of a generated population have valid tokens.
///
/// A call starts at `connect()` when none is active (the SDK ignores a connect during one), and
/// ends at `disconnect()` / `logout()`, at its `error`, at a status that says the SDK stopped on
/// its own (kicked, signed out, timeout, token incorrect, banned; UNCONNECTED in the foreground —
/// in the background it is the iOS background close, §5) or when the app is killed. One report
/// per device.
final class ConnectOutcomeOracle: Oracle {
    static let oracleName = "connect-outcome"
    let name = ConnectOutcomeOracle.oracleName
    let hooks: OracleHooks = [.dispatching, .input, .applied, .note]
    let inputKinds: InputKinds = [.api, .lifecycle]
    let appliedKinds: AppliedKinds = [.connection]
    unowned let suite: OracleSuite

    private struct Device {
        /// A connect call is active (the SDK connects or retries for it).
        var active = false
        /// Its outcome has not been given yet.
        var owed = false
        var background = false
        /// The active call's time and time limit (seconds, 0 = none); `limitJudged` false once
        /// the app went to the background during it.
        var callAt = SimTime.zero
        var limit: Int64 = 0
        var limitJudged = false
    }
    private var devices: [Device] = []
    private var reported: Set<Int> = []
    /// The scenario's token state per declared user (others: valid).
    private var tokenStates: [String: UserSpec.TokenState]?

    init(suite: OracleSuite) { self.suite = suite }

    private func ensure(_ d: Int) { while devices.count <= d { devices.append(Device()) } }

    private func report(_ d: Int, _ detail: String) {
        guard reported.insert(d).inserted else { return }
        suite.report(name, device: d, detail)
    }

    func world(_ world: World, device d: Int, input: ClientInput, localMs: Int64) {
        ensure(d)
        switch input {
        case .api(.connect(_, let t)):
            if !devices[d].active {
                devices[d].active = true; devices[d].owed = true
                devices[d].callAt = world.now; devices[d].limit = Int64(t); devices[d].limitJudged = t > 0 && !devices[d].background
            }
        case .api(.disconnect), .api(.logout):
            devices[d].active = false
        case .lifecycle(.background):
            devices[d].background = true
            devices[d].limitJudged = false
        case .lifecycle(.foreground):
            devices[d].background = false
        default:
            break
        }
    }

    func world(_ world: World, device d: Int, applied: AppliedClientEffects) {
        let effects = applied.effects
        ensure(d)
        var success = false
        var statusConnected = false
        // The SDK reports a stop's status before its error (TIMEOUT, then 34006): whether a call
        // was active is judged as of the input, not after that status.
        let wasActive = devices[d].active
        for case .callback(let c) in effects {
            switch c {
            case .connected(let userId):
                success = true
                let me = world.userId(ofDevice: d)
                if !devices[d].owed {
                    report(d, "told success(\(userId)) again: the connect() call's outcome was already given (or no call was made)")
                } else if userId != me {
                    report(d, "connect() succeeded with userId \(userId), but the device's token is \(me)'s")
                }
                devices[d].owed = false
            case .connectError(let code):
                checkToken(world, d, code)
                if code == IMErrorCode.connectTimeLimit.rawValue, devices[d].owed, devices[d].active || wasActive, devices[d].limit == 0 {
                    report(d, "connect() without a time limit failed with 34006 (connect time limit reached)")
                }
                if code == IMErrorCode.connectTimeLimit.rawValue, devices[d].owed, devices[d].limitJudged,
                   world.now - devices[d].callAt < SimDuration.milliseconds(devices[d].limit * 900) {
                    report(d, "connect(timeLimit: \(devices[d].limit)) failed with 34006 after \(world.now - devices[d].callAt), "
                           + "before its time limit")
                }
                if !devices[d].owed {
                    report(d, "told error(\(code)) after the connect() call's outcome was already given (or no call was made)")
                }
                devices[d].active = false
                devices[d].owed = false
            case .connectionStatus(let s):
                switch s {
                case .connected: statusConnected = true
                case .tokenIncorrect:
                    // Also a reconnection's refusal (no connectError then): judged for valid tokens.
                    checkToken(world, d, nil)
                    devices[d].active = false
                case .connecting, .networkUnavailable: break
                // In the background UNCONNECTED is the background close (the call resumes at
                // foreground); otherwise the SDK stopped on its own.
                case .unconnected where devices[d].background: break
                default: devices[d].active = false
                }
            default:
                break
            }
        }
        if statusConnected, devices[d].owed, !success {
            report(d, "the SDK reported CONNECTED for the app's connect() call but did not tell the app success(userId)")
            devices[d].owed = false
        }
    }

    /// A token error that contradicts the token the scenario gave the device's user.
    /// `code` nil: the status TOKEN_INCORRECT (either token error).
    private func checkToken(_ world: World, _ d: Int, _ code: Int32?) {
        let incorrect = IMErrorCode.tokenIncorrect.rawValue, expired = IMErrorCode.tokenExpired.rawValue
        guard code == nil || code == incorrect || code == expired else { return }
        if tokenStates == nil {
            tokenStates = [:]
            for u in world.scenario.users { tokenStates![u.id] = u.token }
        }
        let user = world.userId(ofDevice: d)
        let state = tokenStates![user] ?? .valid
        let wrong = switch state {
        case .valid: true
        case .expired: code == incorrect
        case .revoked: code == expired
        }
        guard wrong else { return }
        let what = code.map { "connect() failed with \($0) (\($0 == incorrect ? "token incorrect" : "token expired"))" }
            ?? "the SDK reported TOKEN_INCORRECT"
        report(d, "\(what), but \(user)'s token is "
               + "\(state == .valid ? "a valid one the server signed for that account" : "\(state.rawValue)") (the scenario's token state)")
    }

    func world(_ world: World, note: WorldNote) {
        // A killed app's SDK is gone; a started one is new (in the foreground, no call).
        if case .lifecycle(let d, let change) = note, change == .killed || change == .started {
            ensure(d)
            devices[d] = Device()
        }
    }

    /// An outcome owed past the time limit (plus drift and a 5 s margin).
    private func overdue(_ world: World, _ d: Int, at t: SimTime) {
        let s = devices[d]
        guard s.active, s.owed, s.limitJudged, t > s.callAt + .milliseconds(s.limit * 1100) + .seconds(5) else { return }
        report(d, "connect(timeLimit: \(s.limit)) called at \(s.callAt) has no outcome \(t - s.callAt) later "
               + "(the SDK gives up with 34006 after the time limit)")
        devices[d].limitJudged = false
    }

    func world(_ world: World, dispatching event: SimEvent<WorldEvent>) {
        for d in devices.indices where devices[d].limitJudged { overdue(world, d, at: event.time) }
    }

    func finalCheck(_ world: World) {
        for d in devices.indices { overdue(world, d, at: world.now) }
    }
}
