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
    unowned let suite: OracleSuite
    /// Per device: the history request being answered (conversation, cursor, count).
    private var historyRequest: [Int: (ConversationKey, Int64, Int32)] = [:]

    init(suite: OracleSuite) { self.suite = suite }

    func world(_ world: World, device d: Int, input: ClientInput, localMs: Int64) {
        if case .api(.getHistory(let conv, let before, let count)) = input { historyRequest[d] = (conv, before, count) }
    }

    func world(_ world: World, device d: Int, applied effects: AppliedClientEffects) {
        for e in effects {
            switch e {
            case .callback(.history(let conv, let page)):
                guard let (c, before, count) = historyRequest.removeValue(forKey: d), c == conv else { continue }
                checkHistoryPage(world, d, conv, before: before, count: count, got: page)
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

    private func checkHistoryPage(_ world: World, _ d: Int, _ conv: ConversationKey, before: Int64, count: Int32,
                                  got: [StoredMessage]) {
        guard let want = try? world.store(ofDevice: d).history(in: conv, before: before, count: Int(max(0, count))) else { return }
        let gotIds = got.map(\.messageId)
        let wantIds = want.map(\.messageId)
        guard gotIds != wantIds else { return }
        let from = before == -1 ? "the newest" : "before messageId \(before)"
        if let missing = want.first(where: { !gotIds.contains($0.messageId) }) {
            suite.report(name, device: d, conversation: conv, messageUId: missing.messageUId,
                         "history page (\(from), \(count)) skips messageId \(missing.messageId)" +
                         (missing.messageUId.map { " (\($0))" } ?? "") + ": a gap; the app got \(gotIds), the store's page is \(wantIds)")
        } else {
            let extra = got.first { !wantIds.contains($0.messageId) } ?? got[0]
            suite.report(name, device: d, conversation: conv, messageUId: extra.messageUId,
                         "history page (\(from), \(count)) shows messageId \(extra.messageId), which is not on the store's page " +
                         "(already shown, or out of order); the app got \(gotIds), the store's page is \(wantIds)")
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
