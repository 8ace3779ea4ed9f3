import IMClient
import IMServer
import IMWire
import SimKernel

/// quota: the chatroom drop policy of im-semantics §6 in the direction ChatroomOracle does not
/// judge — the server lets a message into a room only when the quota has a slot for it. Per room
/// and `quotaWindow`, by the window model it shares with the chatroom oracle (`QuotaWindowModel`:
/// the **scenario's** knobs, the whitelists from the scenario and the server API calls the world
/// made): a low-priority message needs a free shared slot, a high-priority one a free reserved or
/// shared slot; a whitelisted one is never dropped. A message produced in the room (accepted and
/// not dropped for everyone) when its slot was already gone is a violation ("admitted beyond the
/// quota"); so is a whitelisted message dropped by the quota.
final class ChatroomQuotaOracle: Oracle {
    static let oracleName = "quota"
    let name = ChatroomQuotaOracle.oracleName
    let hooks: OracleHooks = [.serverApplied]
    unowned let suite: OracleSuite
    private var reported = false

    init(suite: OracleSuite) { self.suite = suite }

    func world(_ world: World, serverApplied: AppliedServerEffects) {
        for j in suite.quotaJudgements { judge(world, j) }
    }

    private func judge(_ world: World, _ j: QuotaWindowModel.Judgement) {
        let m = j.message, knobs = suite.quotaModel!.knobs
        if j.dropped {
            if j.priority == .whitelisted {
                violation(world, m, "whitelisted \(m.objectName) from \(m.senderUserId) dropped by the quota: §6 never drops it")
            }
            return
        }
        guard !j.hadSlot else { return }
        let index = j.window.index, windowMs = knobs.windowMs
        if j.priority == .low {
            violation(world, m, "low-priority \(m.objectName) from \(m.senderUserId) let in while its \(windowMs) ms window "
                      + "(window \(index)) had no shared slot left (\(j.window.sharedUsed)/\(knobs.shared) used; low never takes the \(knobs.reserved) reserved)")
        } else {
            violation(world, m, "high-priority \(m.objectName) from \(m.senderUserId) let in while its \(windowMs) ms window "
                      + "(window \(index)) had no slot left: \(j.window.reservedUsed)/\(knobs.reserved) reserved and \(j.window.sharedUsed)/\(knobs.shared) shared used")
        }
    }

    private func violation(_ world: World, _ m: AcceptedMessage, _ detail: String) {
        guard !reported else { return }
        reported = true
        suite.report(name, device: m.senderDeviceId.flatMap { world.deviceIndex($0) }, conversation: m.conversation,
                     messageUId: m.messageUId, "chatroom \(m.conversation.targetId): " + detail)
    }

    func finalCheck(_ world: World) {}
}
