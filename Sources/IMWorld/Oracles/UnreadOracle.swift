import IMClient
import IMStore
import IMWire
import SimKernel

/// Each conversation's unread count equals its counted, unread, not-recalled received messages.
/// Checked for the conversations an input touched, after the core finished with it, and for every
/// conversation at the end — by `UnreadRule`, the device-local rule shared with `imsim replay`.
final class UnreadOracle: Oracle {
    let name = "unread"
    let hooks: OracleHooks = [.applied]
    let appliedKinds: AppliedKinds = [.received, .recalled, .syncReadStatus]
    unowned let suite: OracleSuite
    private var rules: [UnreadRule] = []

    init(suite: OracleSuite) { self.suite = suite }

    private func report(_ d: Int, _ findings: [DeviceFinding]) {
        for f in findings { suite.report(name, device: d, conversation: f.conversation, messageUId: f.messageUId, f.detail) }
    }

    func world(_ world: World, device d: Int, applied: AppliedClientEffects) {
        let effects = applied.effects
        while rules.count <= d { rules.append(UnreadRule()) }
        report(d, rules[d].effects(effects, store: world.store(ofDevice: d), reads: suite.storeReads(world, d)))
    }

    func finalCheck(_ world: World) {
        for d in 0..<world.deviceCount {
            while rules.count <= d { rules.append(UnreadRule()) }
            report(d, rules[d].finish(store: world.store(ofDevice: d), sharedReads: OracleSuite.readsDrawNothing(world, d)))
        }
    }
}
