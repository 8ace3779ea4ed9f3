import IMClient
import IMWire
import SimKernel

/// sensitive-word: a message whose content contains one of `server.sensitiveWords` is "silently
/// not delivered" (im-semantics §4, server pipeline; the chatroom filter likewise): its sender is
/// answered as if it was sent — success with a messageUId, or, if the link failed meanwhile, a
/// connection error; never a request timeout (30003) unless a fault, a network change, a lost byte
/// or a server outage touched the device between the send and its result — and no device ever receives
/// it (no other user, no sync echo to the sender's other devices, no cloud-history page of another
/// user). Judged from the app's calls (the content as sent, byte substring as the filter matches
/// the JSON text) and the callbacks only; STATUS types are not judged (dropped with no answer).
/// One report per device.
final class SensitiveWordOracle: Oracle {
    static let oracleName = "sensitive-word"
    let name = SensitiveWordOracle.oracleName
    let hooks: OracleHooks = [.input, .applied, .note]
    unowned let suite: OracleSuite

    /// Per device: the send call of the input being handled carries a sensitive word.
    private var calling: [Bool] = []
    /// Per device: row ids of sends that carry a sensitive word, awaiting their result.
    private var owed: [Set<Int64>] = []
    /// Per device: owed sends a fault touched (a timeout is then the link's, not the server's).
    private var excused: [Set<Int64>] = []
    private var reported: Set<Int> = []

    init(suite: OracleSuite) { self.suite = suite }

    private func ensure(_ d: Int) { while calling.count <= d { calling.append(false); owed.append([]); excused.append([]) } }

    private func excuse(_ d: Int?) {
        for i in owed.indices where d == nil || d == i { excused[i].formUnion(owed[i]) }
    }

    static func contains(_ content: String, words: [String]) -> String? {
        let bytes = Array(content.utf8)
        for w in words {
            let wb = Array(w.utf8)
            guard !wb.isEmpty, wb.count <= bytes.count else { continue }
            for i in 0...(bytes.count - wb.count) where bytes[i..<(i + wb.count)].elementsEqual(wb) { return w }
        }
        return nil
    }

    private func report(_ d: Int, _ conv: ConversationKey?, _ detail: String) {
        guard reported.insert(d).inserted else { return }
        suite.report(name, device: d, conversation: conv, detail)
    }

    func world(_ world: World, device d: Int, input: ClientInput, localMs: Int64) {
        ensure(d)
        calling[d] = false
        if case .api(.send(_, let objectName, let content, _, _)) = input,
           world.clientConfig.registry.flags(for: objectName)?.isStatus != true,
           Self.contains(content, words: world.scenario.server.sensitiveWords) != nil {
            calling[d] = true
        }
    }

    func world(_ world: World, device d: Int, applied: AppliedClientEffects) {
        ensure(d)
        let words = world.scenario.server.sensitiveWords
        guard !words.isEmpty else { return }
        let me = world.userId(ofDevice: d)
        for case .callback(let c) in applied.effects {
            switch c {
            case .messageInserted(let row) where calling[d]:
                owed[d].insert(row.messageId)
            case .sendResult(let id, let uid, _, let error) where owed[d].contains(id):
                owed[d].remove(id)
                let wasExcused = excused[d].remove(id) != nil
                if error == nil, uid == nil {
                    report(d, nil, "a message with a sensitive word (row \(id)) was answered sent without a messageUId")
                } else if error == IMErrorCode.requestTimeout.rawValue, !wasExcused {
                    report(d, nil, "a message with a sensitive word (row \(id)) failed with a request timeout (30003): "
                           + "the server must answer it as sent (PUBACK with a messageUId), only not deliver it")
                }
            case .received(let m, _, _, _):
                if let w = Self.contains(m.content, words: words) {
                    report(d, m.conversation, "received \(m.messageUId ?? "a message") from \(m.senderUserId) whose content contains "
                           + "the sensitive word \"\(w)\": such a message is never delivered")
                }
            case .remoteHistory(let conv, let msgs, nil):
                for m in msgs where m.senderUserId != me {
                    if let w = Self.contains(m.content, words: words) {
                        report(d, conv, "cloud history gave \(m.messageUId ?? "a message") from \(m.senderUserId) whose content "
                               + "contains the sensitive word \"\(w)\": such a message is never delivered")
                    }
                }
            default:
                break
            }
        }
        calling[d] = false
    }

    func world(_ world: World, note: WorldNote) {
        switch note {
        case .lifecycle(let d, .killed): ensure(d); owed[d] = []; excused[d] = []
        case .lifecycle(let d, _), .network(let d, _), .clockStep(let d, _): excuse(d)
        case .fault(_, let d, _, _): excuse(d)
        case .bytesLost, .serverDown, .serverUp, .connectTimedOut, .connectionRefused: excuse(nil)
        default: break
        }
    }

    func finalCheck(_ world: World) {}
}
