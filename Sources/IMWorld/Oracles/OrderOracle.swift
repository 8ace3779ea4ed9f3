import IMClient
import IMServer
import IMStore
import IMWire
import SimKernel

/// Within a conversation, the order the store returns agrees with server `dataTime` order
/// (ties by messageUId), and every message — including a device's own sent ones — carries the
/// server's time as its sentTime. Every local history page the app gets is exactly the store's
/// page for the same cursor (`history(in:before:count:)`, server order): a row missing from it is
/// a gap in what the user can scroll back to, a row twice is a repeat.
final class OrderOracle: Oracle {
    let name = "order"
    let hooks: OracleHooks = [.input, .applied]
    let inputKinds: InputKinds = [.api]
    let appliedKinds: AppliedKinds = [.history, .stored, .sendResult]
    unowned let suite: OracleSuite
    /// Per device: the device-local rule shared with `imsim replay`.
    private var rules: [OrderRule] = []

    init(suite: OracleSuite) { self.suite = suite }

    private func ensure(_ d: Int) { while rules.count <= d { rules.append(OrderRule()) } }

    private func serverTime(_ uid: String) -> Int64? { suite.paths.acceptedMessages[uid]?.dataTime }

    private func report(_ d: Int, _ findings: [DeviceFinding]) {
        for f in findings { suite.report(name, device: d, conversation: f.conversation, messageUId: f.messageUId, f.detail) }
    }

    func world(_ world: World, device d: Int, input: ClientInput, localMs: Int64) {
        ensure(d)
        rules[d].input(input)
    }

    func world(_ world: World, device d: Int, applied: AppliedClientEffects) {
        let effects = applied.effects
        ensure(d)
        report(d, rules[d].effects(effects, store: world.store(ofDevice: d), reads: suite.storeReads(world, d), serverTime: serverTime))
    }

    func finalCheck(_ world: World) {
        // Page through each conversation's history the way the app does (newest first, ≤ 20 per
        // call) and compare with server order: the first such finding of the run.
        for d in 0..<world.deviceCount {
            ensure(d)
            let found = rules[d].finish(store: world.store(ofDevice: d), device: world.deviceId(d),
                                        pageAsTheApp: !OracleSuite.readsDrawNothing(world, d), serverTime: serverTime)
            if !found.isEmpty { return report(d, found) }
        }
    }
}
