import IMClient
import IMServer
import IMWire
import SimKernel

/// quota: the chatroom drop policy of im-semantics §6 in the direction ChatroomOracle does not
/// judge — the server lets a message into a room only when the quota has a slot for it. Per room
/// and `quotaWindow` (tumbling, aligned to server time), with the **scenario's** knobs
/// (`quotaCapacity`, `quotaReservedHigh`, `lowPriorityTypes`, `whitelistTypes` until the server API
/// replaces it; never the server core's configuration) and the room's user whitelist: a low-priority message needs a free shared
/// slot, a high-priority one a free reserved or shared slot; a whitelisted one is never dropped and
/// takes shared, then reserved. A message produced in the room (accepted and not dropped for
/// everyone) when its slot was already gone is a violation ("admitted beyond the quota"); so is a
/// whitelisted message dropped by the quota.
///
/// Every counted slot was really taken (an accepted member message), so the model never counts
/// more than the server: a chatroom STATUS message takes a slot without an accept, which only
/// hides violations. Recall commands and attribute notifications are produced without the quota
/// and are not counted (an input that changed a room's attributes is not judged for that room). A server restart or a destroyed room starts the windows again.
final class ChatroomQuotaOracle: Oracle {
    static let oracleName = "quota"
    let name = ChatroomQuotaOracle.oracleName
    unowned let suite: OracleSuite

    private struct Window {
        var index: Int64
        var reservedUsed = 0
        var sharedUsed = 0
    }
    private var windows: [String: Window] = [:]
    private var reported = false
    /// Produced in a room outside the member send path (no quota slot): recall commands.
    static let unmetered: Set<String> = [RecallCommandContent.objectName, ChatroomKVNotificationContent.objectName]

    init(suite: OracleSuite) { self.suite = suite }

    func world(_ world: World, device: Int, input: ClientInput, localMs: Int64) {}

    func world(_ world: World, serverApplied serverEffects: AppliedServerEffects) {
        // An attribute change produces its notification (any type the request carries) without
        // the quota: a batch holding one is not judged for that room.
        let kvRooms = Set(serverEffects.compactMap { e -> String? in
            if case .event(.chatroomKVChanged(let room, _, _, _)) = e { return room }
            return nil
        })
        for effect in serverEffects {
            guard case .event(let e) = effect else { continue }
            switch e {
            case .restarted:
                windows = [:]
            case .chatroomDestroyed(let room, _):
                windows[room] = nil
            case .messageAccepted(let m) where m.conversation.type == .chatroom && m.senderDeviceId != nil
                && !m.flags.isStatus && !Self.unmetered.contains(m.objectName)
                && !kvRooms.contains(m.conversation.targetId):
                let dropReason = m.droppedForEveryone
                // A sensitive word is filtered before the quota (it takes no slot).
                if dropReason == .sensitiveWord { continue }
                admit(world, m, dropped: dropReason == .chatroomQuota)
            default:
                break
            }
        }
    }

    private func admit(_ world: World, _ m: AcceptedMessage, dropped: Bool) {
        let knobs = world.scenario.server.chatroom
        let room = m.conversation.targetId
        let windowMs = knobs.quotaWindow.duration.milliseconds
        let ms = world.serverMs
        let index = windowMs > 0 ? (ms >= 0 ? ms / windowMs : (ms + 1) / windowMs - 1) : ms
        var w = windows[room] ?? Window(index: index)
        if w.index != index { w = Window(index: index) }
        let reserved = max(0, min(knobs.quotaReservedHigh, knobs.quotaCapacity))
        let shared = max(0, knobs.quotaCapacity - reserved)
        let userWhitelist = world.serverCore.directory.chatroomWhitelists[room] ?? []
        let whitelisted = suite.chatroomWhitelistTypes(world).contains(m.objectName) || userWhitelist.contains(m.senderUserId)
        let low = !whitelisted && (knobs.lowPriorityTypes.contains(m.objectName) || m.flags.chatroomPriority == .low)
        let sharedFree = w.sharedUsed < shared, reservedFree = w.reservedUsed < reserved
        defer { windows[room] = w }
        if dropped {
            if whitelisted { violation(world, m, "whitelisted \(m.objectName) from \(m.senderUserId) dropped by the quota: §6 never drops it") }
            return
        }
        let kind = whitelisted ? "whitelisted" : low ? "low" : "high"
        if whitelisted || !low {
            // High: reserved first; whitelisted: shared first (§6).
            if whitelisted ? sharedFree : reservedFree {
                if whitelisted { w.sharedUsed += 1 } else { w.reservedUsed += 1 }
            } else if whitelisted ? reservedFree : sharedFree {
                if whitelisted { w.reservedUsed += 1 } else { w.sharedUsed += 1 }
            } else if !whitelisted {
                violation(world, m, "\(kind)-priority \(m.objectName) from \(m.senderUserId) let in while its \(windowMs) ms window "
                          + "(window \(index)) had no slot left: \(w.reservedUsed)/\(reserved) reserved and \(w.sharedUsed)/\(shared) shared used")
            }
        } else if sharedFree {
            w.sharedUsed += 1
        } else {
            violation(world, m, "low-priority \(m.objectName) from \(m.senderUserId) let in while its \(windowMs) ms window "
                      + "(window \(index)) had no shared slot left (\(w.sharedUsed)/\(shared) used; low never takes the \(reserved) reserved)")
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
