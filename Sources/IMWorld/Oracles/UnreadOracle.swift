import IMClient
import IMStore
import IMWire
import SimKernel

/// Each conversation's unread count equals its counted, unread, not-recalled received messages.
/// Checked for the conversations an input touched, after the core finished with it, and for every
/// conversation at the end.
final class UnreadOracle: Oracle {
    let name = "unread"
    unowned let suite: OracleSuite
    private var reported: Set<Int> = []

    init(suite: OracleSuite) { self.suite = suite }

    func world(_ world: World, device d: Int, applied effects: AppliedClientEffects) {
        var touched: [ConversationKey] = []
        for e in effects {
            switch e {
            case .callback(.received(let m, _, _, _)) where m.conversation.type != .chatroom:
                if !touched.contains(m.conversation) { touched.append(m.conversation) }
            case .callback(.recalled(_, let conv)), .callback(.syncReadStatus(let conv, _)):
                if !touched.contains(conv) { touched.append(conv) }
            default:
                break
            }
        }
        for conv in touched { check(world, d, conv) }
    }

    func world(_ world: World, device d: Int, input: ClientInput, localMs: Int64) {}

    private func check(_ world: World, _ d: Int, _ conv: ConversationKey) {
        guard !reported.contains(d) else { return }
        let store = world.store(ofDevice: d)
        guard let stored = (try? store.conversation(conv)) ?? nil,
              let expected = try? store.countUnreadCandidates(in: conv) else { return }
        if stored.unreadCount != expected {
            reported.insert(d)
            suite.report(name, device: d, conversation: conv,
                         "unread count is \(stored.unreadCount) but \(expected) received counted messages are unread and not recalled")
        }
    }

    func finalCheck(_ world: World) {
        for d in 0..<world.deviceCount {
            guard let convs = try? world.store(ofDevice: d).conversationList() else { continue }
            for c in convs { check(world, d, c.key) }
        }
    }
}
