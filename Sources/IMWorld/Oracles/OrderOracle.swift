import IMClient
import IMServer
import IMStore
import IMWire
import SimKernel

/// Within a conversation, the order the store returns agrees with server `dataTime` order
/// (ties by messageUId), and every message — including a device's own sent ones — carries the
/// server's time as its sentTime.
final class OrderOracle: Oracle {
    let name = "order"
    unowned let suite: OracleSuite

    init(suite: OracleSuite) { self.suite = suite }

    func world(_ world: World, device d: Int, effects: [ClientEffect]) {
        for e in effects {
            switch e {
            case .note(.stored(_, let uid?, let conv, let sentTime, _, _)):
                check(uid, sentTime, conv, d, "stored")
            case .callback(.sendResult(let id, let uid?, _, nil)):
                // What the store keeps is what the conversation is ordered by.
                if let row = (try? world.store(ofDevice: d).message(id: id)) ?? nil {
                    check(uid, row.sentTime, row.conversation, d, "own sent message")
                }
            default:
                break
            }
        }
    }

    private func check(_ uid: String, _ sentTime: Int64, _ conv: ConversationKey, _ d: Int, _ what: String) {
        guard let server = suite.paths.acceptedMessages[uid] else { return }
        if server.dataTime != sentTime {
            suite.report(name, device: d, conversation: conv, messageUId: uid,
                         "\(what) has sentTime \(sentTime) but the server's dataTime is \(server.dataTime) (\(sentTime - server.dataTime) ms off)")
        }
    }

    func finalCheck(_ world: World) {
        // Page through each conversation's history the way the app does (newest first, ≤ 20 per
        // call) and compare with server order.
        for d in 0..<world.deviceCount {
            let store = world.store(ofDevice: d)
            guard let convs = try? store.conversationList() else { continue }
            for conv in convs {
                var page: [StoredMessage]
                var before: Int64 = -1
                var seen: [StoredMessage] = []
                repeat {
                    page = (try? store.history(in: conv.key, before: before, count: 20)) ?? []
                    seen += page
                    before = page.last?.messageId ?? before
                } while page.count == 20 && seen.count < 100_000
                // seen is newest first; server order is (dataTime, messageUId).
                for (newer, older) in zip(seen, seen.dropFirst()) {
                    guard let nu = newer.messageUId, let ou = older.messageUId,
                          let ns = suite.paths.acceptedMessages[nu], let os = suite.paths.acceptedMessages[ou] else { continue }
                    if (ns.dataTime, nu) < (os.dataTime, ou) {
                        suite.report(name, device: d, conversation: conv.key, messageUId: nu,
                                     "history shows \(nu) (dataTime \(ns.dataTime)) before \(ou) (dataTime \(os.dataTime)) on \(world.deviceId(d)), against server order")
                        return
                    }
                }
            }
        }
    }
}
