import IMClient
import IMServer
import IMWire

/// The chatroom drop policy of im-semantics §6 as the oracles see it — one model for the two
/// oracles that judge it: `chatroom` (a quota drop the window does not explain; low-priority
/// messages in the reserved high slots, B13) and `quota` (a message let in without a slot).
///
/// Per room and tumbling window of `quotaWindow` (aligned to server time): `quotaCapacity` slots,
/// `quotaReservedHigh` of them reserved for high priority, the rest shared. Every message the
/// server let into a room takes the slot the policy gives it — low: shared (a server that let it
/// in without one put it in a reserved slot, as B13 does); high: reserved, then shared;
/// whitelisted (type or sender): shared, then reserved. Fed by what the world observed — the
/// server's accepts and drop facts, the API calls, the frames clients wrote — with the
/// **scenario's** knobs, never the server core's configuration or state.
///
/// Every counted slot was really taken, so the model never counts more than the server. It can
/// count fewer: a chatroom STATUS message (`chatMsgS`) takes a slot without an accept
/// (`uncountedSlots`). Not counted (no quota on their path): recall commands, the attribute
/// notifications the server makes, and any room message in a server batch that changed the
/// room's attributes. A
/// server restart or a destroyed room starts the windows again.
struct QuotaWindowModel {
    /// im-semantics §6's numbers as the scenario sets them.
    struct Knobs: Equatable {
        var windowMs: Int64
        var reserved: Int
        var shared: Int
        /// The scenario's `lowPriorityTypes` (a message's registered priority counts too).
        var lowPriorityTypes: Set<String>

        init(windowMs: Int64, capacity: Int, reservedHigh: Int, lowPriorityTypes: Set<String>) {
            self.windowMs = windowMs
            reserved = max(0, min(reservedHigh, capacity))
            shared = max(0, capacity - reserved)
            self.lowPriorityTypes = lowPriorityTypes
        }

        init(_ s: Scenario) {
            let c = s.server.chatroom
            self.init(windowMs: c.quotaWindow.duration.milliseconds, capacity: c.quotaCapacity,
                      reservedHigh: c.quotaReservedHigh, lowPriorityTypes: Set(c.lowPriorityTypes))
        }
    }

    enum Priority: String { case low, high, whitelisted }

    struct Window: Equatable {
        var index: Int64
        var reservedUsed = 0
        var sharedUsed = 0
        /// Low-priority messages let in (wherever they went).
        var lowAdmitted = 0
    }

    /// One message the server produced in a room or dropped by the quota, judged against its
    /// window as it stood before the message.
    struct Judgement {
        var message: AcceptedMessage
        var priority: Priority
        var dropped: Bool
        var window: Window
        /// The window had a slot for this priority: low a shared one, high a reserved or shared
        /// one; a whitelisted message always has one (§6 never drops it).
        var hadSlot: Bool
    }

    /// Produced in a room outside the member send path (no quota slot).
    /// Types with no quota on their path. An `RC:chrmKVNotiMsg` the server makes for an attribute
    /// change has no sending device (not judged anyway); one an app sends itself is an upstream
    /// message like any other (§6: "capacity 40 upstream messages") and takes a slot.
    static let unmetered: Set<String> = [RecallCommandContent.objectName]

    let knobs: Knobs
    private var windows: [String: Window] = [:]
    /// A client wrote a chatroom STATUS message: the server may have taken slots the model did
    /// not count, so "the window had a slot" is no longer certain.
    private(set) var uncountedSlots = false

    init(knobs: Knobs) { self.knobs = knobs }

    func windowIndex(serverMs ms: Int64) -> Int64 {
        let w = knobs.windowMs
        guard w > 0 else { return ms }
        return ms >= 0 ? ms / w : (ms + 1) / w - 1
    }

    /// The frames a client wrote.
    mutating func clientSent(_ effects: [ClientEffect]) {
        guard !uncountedSlots else { return }
        for case .send(_, let frames) in effects where frames.contains(where: { $0.topic == Topic.chatMsgS.rawValue }) {
            uncountedSlots = true
        }
    }

    /// One server effect list at server time `serverMs`: the judgements of the room messages it
    /// holds, in order. `whitelisted(message)`: the type or the sender is on a whitelist in force.
    mutating func serverEffects(_ effects: [ServerEffect], serverMs: Int64,
                                whitelisted: (AcceptedMessage) -> Bool) -> [Judgement] {
        // An attribute change produces its notification without the quota: a batch holding one
        // is not counted for that room.
        var kvRooms: Set<String> = []
        for case .event(.chatroomKVChanged(let room, _, _, _)) in effects { kvRooms.insert(room) }
        var out: [Judgement] = []
        for effect in effects {
            guard case .event(let e) = effect else { continue }
            switch e {
            case .restarted:
                windows = [:]
            case .chatroomDestroyed(let room, _):
                windows[room] = nil
            case .messageAccepted(let m) where m.conversation.type == .chatroom && m.senderDeviceId != nil
                && !m.flags.isStatus && !Self.unmetered.contains(m.objectName)
                && !kvRooms.contains(m.conversation.targetId):
                // A silent drop for everyone (quota, sensitive word) is on the accepted message.
                let reason = m.droppedForEveryone
                // A sensitive word is filtered before the quota (it takes no slot).
                if reason == .sensitiveWord { continue }
                out.append(admit(m, dropped: reason == .chatroomQuota, serverMs: serverMs, whitelisted: whitelisted(m)))
            default:
                break
            }
        }
        return out
    }

    private mutating func admit(_ m: AcceptedMessage, dropped: Bool, serverMs: Int64, whitelisted: Bool) -> Judgement {
        let room = m.conversation.targetId
        let index = windowIndex(serverMs: serverMs)
        var w = windows[room] ?? Window(index: index)
        if w.index != index { w = Window(index: index) }
        let priority: Priority = whitelisted ? .whitelisted
            : (knobs.lowPriorityTypes.contains(m.objectName) || m.flags.chatroomPriority == .low ? .low : .high)
        let sharedFree = w.sharedUsed < knobs.shared, reservedFree = w.reservedUsed < knobs.reserved
        let hadSlot = switch priority {
        case .whitelisted: true
        case .low: sharedFree
        case .high: reservedFree || sharedFree
        }
        let judgement = Judgement(message: m, priority: priority, dropped: dropped, window: w, hadSlot: hadSlot)
        if !dropped {
            // The slot the server gave it (low beyond the shared slots: a reserved one, as B13).
            switch priority {
            case .high:
                if reservedFree { w.reservedUsed += 1 } else if sharedFree { w.sharedUsed += 1 }
            case .low, .whitelisted:
                if priority == .low { w.lowAdmitted += 1 }
                if sharedFree { w.sharedUsed += 1 } else if reservedFree { w.reservedUsed += 1 }
            }
        }
        windows[room] = w
        return judgement
    }
}
