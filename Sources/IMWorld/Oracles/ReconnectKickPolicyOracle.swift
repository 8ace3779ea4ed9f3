import IMClient
import IMServer
import IMWire
import SimKernel

/// The promise of `reconnectKickEnable` (im-semantics §5, B12 in §8). A device is "in automatic
/// retry" from its second connection attempt of one `connect()` call on — whether it lost an
/// earlier connection or never completed its first connect. When such a retry finds another
/// session of the user in its platform slot:
/// - `reconnectKickEnable = true`: the retry must not connect and must not kick the device in
///   use (B12 is the setting not honoured);
/// - `reconnectKickEnable = false` (the default): the retry connects and kicks it (the
///   documented race), so a refusal is as wrong as a kick would be with the setting on.
final class ReconnectKickPolicyOracle: Oracle {
    static let oracleName = "reconnect-kick"
    let name = ReconnectKickPolicyOracle.oracleName
    let hooks: OracleHooks = [.input, .applied, .serverApplied]
    let inputKinds: InputKinds = [.api]
    let appliedKinds: AppliedKinds = [.openConnection]
    let serverAppliedKinds: ServerAppliedKinds = [.kicked, .reconnectRefused]
    unowned let suite: OracleSuite
    /// Connection attempts since the device's last `connect()` (the SDK's retry counter).
    private var attempts: [Int: Int] = [:]

    init(suite: OracleSuite) { self.suite = suite }

    func world(_ world: World, device d: Int, input: ClientInput, localMs: Int64) {
        if case .api(.connect) = input { attempts[d] = 0 }
    }

    func world(_ world: World, device d: Int, applied effects: AppliedClientEffects) {
        for case .openConnection in effects { attempts[d, default: 0] += 1 }
    }

    func world(_ world: World, serverApplied serverEffects: AppliedServerEffects) {
        let kickEnable = world.clientConfig.reconnectKickEnable
        for case .event(let e) in serverEffects {
            switch e {
            case .kicked(_, _, let victim, let by):
                guard kickEnable, let d = world.deviceIndex(by), (attempts[d] ?? 0) > 1 else { continue }
                suite.report(name, device: d,
                             "\(by) in automatic retry (attempt \(attempts[d]!)) kicked \(victim), although reconnectKickEnable = true " +
                             "promises that a retry finding another session does not connect and the device in use stays")
            case .reconnectRefused(_, _, let dev, let active):
                guard !kickEnable, let d = world.deviceIndex(dev) else { continue }
                suite.report(name, device: d,
                             "\(dev)'s retry was refused while \(active) was online, but with reconnectKickEnable = false " +
                             "(the default) the retry connects and kicks the device in use")
            default:
                break
            }
        }
    }

    func finalCheck(_ world: World) {}
}
