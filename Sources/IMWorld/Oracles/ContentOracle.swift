import IMClient
import IMServer
import IMStore
import IMWire
import SimKernel

/// content: the app reads back what was sent. Every message the app is shown with a messageUId
/// the server accepted — an `onReceived`, or a row of a local history page — carries the accepted
/// message's identity: the same type (or the recall notice `RC:RcNtf` that replaces it), sender,
/// sentTime (the server's dataTime), content (its bytes hash to the accepted content's FNV-1a),
/// direction (sent by this user or not) and conversation (a private one is named by the peer).
/// The expectation comes from the server's accept (what went over the wire), never from the
/// store the rows are read from. Messages of the server API (no sending device) are judged on
/// type, sender, sentTime and content only. One report per device.
///
/// Two more properties (issue 21, fifth round of mutants):
/// - **mention**: a stored message keeps the mention its sender's app asked for (wire §UpStream/
///   DownStream flag 4 / 0x40) on every copy — the recipients', the sync echoes and pulled
///   copies on the sender's other devices, history pages. The expectation is the sending app's
///   `send(…, mentioned:)` call, tied to the message by the row that call inserted
///   (`messageInserted`) and the server's accept of that send (sender device, clientUniqueId);
/// - **messageId of an unsaved message**: an `onReceived` of a STATUS message (no messageUId,
///   never stored, im-semantics §2–§3) has messageId 0 ("0 before insert"): a non-zero id names
///   another message's row.
final class ContentOracle: Oracle {
    static let oracleName = "content"
    let name = ContentOracle.oracleName
    let hooks: OracleHooks = [.input, .applied]
    unowned let suite: OracleSuite
    private var reported: Set<Int> = []
    private struct SendKey: Hashable { var device: Int; var clientUniqueId: Int64 }
    /// The mention flag of the app's `send` call being handled, per device (nil: no send).
    private var sendingMention: [Bool?] = []
    /// The mention the app asked for, per row it created (device, clientUniqueId).
    private var mentionAsked: [SendKey: Bool] = [:]

    init(suite: OracleSuite) { self.suite = suite }

    func world(_ world: World, device d: Int, input: ClientInput, localMs: Int64) {
        while sendingMention.count <= d { sendingMention.append(nil) }
        if case .api(.send(_, _, _, _, let mentioned)) = input { sendingMention[d] = mentioned } else { sendingMention[d] = nil }
    }

    func world(_ world: World, device d: Int, applied effects: AppliedClientEffects) {
        if d < sendingMention.count, let mentioned = sendingMention[d] {
            sendingMention[d] = nil
            for case .callback(.messageInserted(let row)) in effects {
                if let cuid = row.clientUniqueId { mentionAsked[SendKey(device: d, clientUniqueId: cuid)] = mentioned }
            }
        }
        guard effects.callbackCount > 0, !reported.contains(d) else { return }
        for e in effects {
            switch e {
            case .callback(.received(let m, _, _, _)):
                if m.messageUId == nil, m.messageId != 0 {
                    reported.insert(d)
                    suite.report(name, device: d, conversation: m.conversation,
                                 "onReceived shows a \(m.objectName) message with no messageUId (a STATUS message, never stored) "
                                 + "as messageId \(m.messageId): an unsaved message has messageId 0")
                    return
                }
                if check(world, d, m, shownAs: "onReceived") { return }
            case .callback(.history(_, let rows)):
                for r in rows where check(world, d, r, shownAs: "a history page") { return }
            default:
                break
            }
        }
    }

    /// Reports and returns true when `m` differs from the accepted message it names.
    private func check(_ world: World, _ d: Int, _ m: StoredMessage, shownAs: String) -> Bool {
        guard let uid = m.messageUId, let a = suite.paths.acceptedMessages[uid] else { return false }
        if m.objectName == RecallNotificationContent.objectName { return false }
        let me = world.userId(ofDevice: d)
        var wrong: [String] = []
        if m.objectName != a.objectName { wrong.append("type \(m.objectName), sent as \(a.objectName)") }
        if m.senderUserId != a.senderUserId { wrong.append("sender \(m.senderUserId), sent by \(a.senderUserId)") }
        if m.sentTime != a.dataTime { wrong.append("sentTime \(m.sentTime), accepted at dataTime \(a.dataTime)") }
        if StableHash.fnv1a(m.content.utf8) != a.contentHash || m.content.utf8.count != a.contentLength {
            wrong.append("content of \(m.content.utf8.count) bytes differs from the \(a.contentLength) bytes sent")
        }
        if a.senderDeviceId != nil, a.conversation.targetId != a.senderUserId {
            let mine = a.senderUserId == me
            if m.direction != (mine ? .send : .receive) {
                wrong.append("direction \(m.direction), expected \(mine ? "send" : "receive")")
            }
            let conv = (a.conversation.type == .privateChat && !mine) ? ConversationKey(.privateChat, a.senderUserId) : a.conversation
            if m.conversation != conv { wrong.append("conversation \(m.conversation), expected \(conv)") }
        }
        if a.flags.isPersisted, let dev = a.senderDeviceId, let sd = world.deviceIndex(dev),
           let asked = mentionAsked[SendKey(device: sd, clientUniqueId: a.clientUniqueId)],
           m.flags.contains(.mentioned) != asked {
            wrong.append(asked ? "no mention, but the sender's app sent it mentioning" : "a mention, but the sender's app sent it without one")
        }
        guard !wrong.isEmpty else { return false }
        reported.insert(d)
        suite.report(name, device: d, conversation: m.conversation, messageUId: uid,
                     "\(shownAs) shows \(uid) (messageId \(m.messageId)) with " + wrong.joined(separator: "; "))
        return true
    }

    func finalCheck(_ world: World) {}
}
