import IMClient
import IMServer
import IMStore
import IMWire
import SimKernel

/// No two rows with the same messageUId in a device's store, and no message notified to the app
/// twice. A sync echo completing its own row is an update (`isNew == false`), not a duplicate.
/// Quitting or being removed from a chatroom clears that room's local messages, so a later
/// re-delivery of them is not a duplicate.
///
/// Two more kinds of duplicate that no messageUId shows:
/// - the server accepted two messages for one send — the same (sender, clientUniqueId) — so every
///   recipient sees it twice under two messageUIds (a resend without idempotency, B2);
/// - two conversations in a device's list for the same (type, targetId trimmed of whitespace) —
///   one peer shown twice (B10).
final class NoDuplicateOracle: Oracle {
    let name = "no-duplicate"
    let hooks: OracleHooks = [.serverApplied, .applied, .note]
    let appliedKinds: AppliedKinds = [.messageInserted, .stored, .sendResult, .received, .chatroomMembership]
    let serverAppliedKinds: ServerAppliedKinds = [.messageAccepted]
    unowned let suite: OracleSuite
    /// Per device: the device-local rule shared with `imsim replay` (rows, notifications,
    /// conversations).
    private var rules: [NoDuplicateRule] = []
    /// sender userId → clientUniqueId → the messageUId the server accepted for it.
    private var acceptedSends: [String: [Int64: String]] = [:]

    init(suite: OracleSuite) { self.suite = suite }

    private func ensure(_ world: World, _ d: Int) {
        while rules.count <= d { rules.append(NoDuplicateRule(device: world.deviceId(rules.count))) }
    }

    func world(_ world: World, serverApplied serverEffects: AppliedServerEffects) {
        for case .event(.messageAccepted(let m)) in serverEffects where m.clientUniqueId != 0 && m.senderDeviceId != nil {
            if let first = acceptedSends[m.senderUserId]?[m.clientUniqueId] {
                let d = m.senderDeviceId.flatMap { world.deviceIndex($0) }
                suite.report(name, device: d, conversation: m.conversation, messageUId: m.messageUId,
                             "duplicate: the server accepted \(m.messageUId) and \(first) for one send of \(m.senderUserId) " +
                             "(clientUniqueId \(m.clientUniqueId)): a resend stored twice, every recipient sees it twice")
            } else {
                acceptedSends[m.senderUserId, default: [:]][m.clientUniqueId] = m.messageUId
            }
        }
    }

    /// Trimmed of whitespace at both ends (the SDK's normalisation of a target id).
    static func trimmed(_ key: ConversationKey) -> ConversationKey? { NoDuplicateRule.trimmed(key) }

    private func report(_ d: Int, _ findings: [DeviceFinding]) {
        for f in findings { suite.report(name, device: d, conversation: f.conversation, messageUId: f.messageUId, f.detail) }
    }

    func world(_ world: World, device d: Int, applied: AppliedClientEffects) {
        let effects = applied.effects
        ensure(world, d)
        report(d, rules[d].effects(effects, store: world.store(ofDevice: d), reads: suite.storeReads(world, d)))
    }

    func world(_ world: World, note: WorldNote) {
        // A restarted app shows its messages afresh; what it was told before the kill is gone.
        if case .lifecycle(let d, .started) = note {
            ensure(world, d)
            rules[d].appStarted()
        }
    }

    func finalCheck(_ world: World) {
        for d in 0..<world.deviceCount {
            ensure(world, d)
            let reported = suite.violations.contains { $0.oracle == name && $0.device == world.deviceId(d) }
            report(d, rules[d].finish(store: world.store(ofDevice: d), reportedBefore: reported))
        }
    }
}
