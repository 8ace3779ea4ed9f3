import IMClient
import IMStore
import IMWire

/// Reads of one device's store remembered while one effect list is judged: the rules only read,
/// and nothing writes the store until the core's next input, so rules asking for the same row
/// (the sent row of a `sendResult`, a touched conversation) get it from one query. Made by the
/// oracle suite per effect list; a rule given none reads the store itself (`imsim replay`).
public final class StoreReads {
    public let store: IMStore
    private var rows: [Int64: (conversation: ConversationKey, sentTime: Int64)?] = [:]
    private var unread: [ConversationKey: UnreadState?] = [:]

    public init(_ store: IMStore) { self.store = store }

    /// Forgets every read (the store may have changed since).
    public func forget() {
        if !rows.isEmpty { rows.removeAll(keepingCapacity: true) }
        if !unread.isEmpty { unread.removeAll(keepingCapacity: true) }
    }

    /// A row's conversation and sentTime (the fields of `store.message(id:)` the rules compare),
    /// once per id; nil when there is no such row.
    public func sentRow(id: Int64) -> (conversation: ConversationKey, sentTime: Int64)? {
        if let r = rows[id] { return r }
        let r = (try? store.conversationAndSentTime(ofMessage: id)) ?? nil
        rows[id] = .some(r)
        return r
    }

    /// A conversation's stored unread count and mention flag with the store's recount of its
    /// unread candidates (`store.unreadState(of:)`: one statement), once per key; nil when the
    /// conversation has no row.
    public func unreadState(_ key: ConversationKey) -> UnreadState? {
        if let c = unread[key] { return c }
        let c = (try? store.unreadState(of: key)) ?? nil
        unread[key] = .some(c)
        return c
    }

    /// Without shared reads (a simulated disk, where every read may draw from the device's
    /// storage stream, or `imsim replay`) the rules make the app-facing reads they always made.
    static func sentRow(id: Int64, _ store: IMStore, _ reads: StoreReads?) -> (conversation: ConversationKey, sentTime: Int64)? {
        if let reads { return reads.sentRow(id: id) }
        return ((try? store.message(id: id)) ?? nil).map { ($0.conversation, $0.sentTime) }
    }

    /// A conversation's stored unread count and mention flag (nil: no row), through `reads`
    /// when given, else the app-facing `store.conversation(_:)`.
    static func shownUnread(_ key: ConversationKey, _ store: IMStore, _ reads: StoreReads?) -> (unreadCount: Int, hasUnreadMentioned: Bool)? {
        if let reads { return reads.unreadState(key).map { ($0.unreadCount, $0.hasUnreadMentioned) } }
        return ((try? store.conversation(key)) ?? nil).map { ($0.unreadCount, $0.hasUnreadMentioned) }
    }
}

/// One finding of a device-local rule that reads the device's store.
public struct DeviceFinding: Sendable, Equatable {
    public var conversation: ConversationKey?
    public var messageUId: String?
    public var detail: String
}

// The device-local checks that judge what a device's store and app hold — `no-duplicate`,
// `order`, `unread` and the chatroom quit — as value types over one device's effects and its
// store (read only), shared by the world's oracles and `imsim replay` (ReplayChecks). The server's
// time of a message comes from the caller: the world's accepted messages, or the frames of a
// capture.

/// no-duplicate, the device's part: no messageUId in two rows of the store (the store is the
/// judge: an earlier row may have been deleted since — chatroom quit, a restart clearing a stale
/// room, clear history); an own message completed on the row that sent it; one `onReceived` per
/// messageUId per app run; one conversation per (type, trimmed targetId). Leaving a chatroom
/// (quit, kick, destroy, a failed join) forgets its messages: a later re-delivery is not a
/// duplicate.
public struct NoDuplicateRule: Sendable {
    /// Names the device in the texts.
    let device: String
    private var rows: [String: (conversation: ConversationKey, messageId: Int64)] = [:]
    private var notified: [String: ConversationKey] = [:]
    /// Conversations seen under a key that is not trimmed, by their trimmed key.
    private var untrimmed: [ConversationKey: ConversationKey] = [:]
    private var conversationReported = false

    public init(device: String) { self.device = device }

    /// A new app process shows its messages afresh.
    public mutating func appStarted() { notified.removeAll(keepingCapacity: true) }

    /// Trimmed of whitespace at both ends (the SDK's normalisation of a target id); nil when it is.
    public static func trimmed(_ key: ConversationKey) -> ConversationKey? {
        let t = key.targetId
        // Fast path (almost every id): both ends ASCII and not whitespace.
        if let f = t.utf8.first, let l = t.utf8.last, f < 0x80, l < 0x80, !asciiSpace(f), !asciiSpace(l) { return nil }
        guard let f = t.first, let l = t.last, f.isWhitespace || l.isWhitespace else { return nil }
        return ConversationKey(key.type, String(t.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed()))
    }

    private static func asciiSpace(_ b: UInt8) -> Bool { b == 0x20 || (0x09...0x0D).contains(b) }

    public mutating func effects(_ effects: [ClientEffect], store: IMStore, reads: StoreReads? = nil) -> [DeviceFinding] {
        var out: [DeviceFinding] = []
        for e in effects {
            switch e {
            case .callback(.messageInserted(let row)):
                checkConversation(row.conversation, store, &out)
            case .note(.stored(let id, let uid, let conv, _, _, let isNew)):
                if conv.type != .chatroom { checkConversation(conv, store, &out) }
                if isNew, let uid { storedNew(id, uid, conv, store, &out) }
            case .callback(.sendResult(let id, let uid?, _, nil)):
                // (Nothing changes `rows` between the look-up and the update: one hash.)
                let i = rows.index(forKey: uid)
                if let i, case let first = rows.values[i], first.messageId != id {
                    out.append(DeviceFinding(conversation: first.conversation, messageUId: uid, detail:
                        "duplicate: own message \(uid) completed on messageId \(id) but already stored as messageId \(first.messageId)"))
                }
                if let conv = StoreReads.sentRow(id: id, store, reads)?.conversation {
                    if let i { rows.values[i] = (conv, id) } else { rows[uid] = (conv, id) }
                }
            case .callback(.received(let m, _, _, _)):
                guard let uid = m.messageUId else { continue }
                if notified.updateValue(m.conversation, forKey: uid) != nil {
                    out.append(DeviceFinding(conversation: m.conversation, messageUId: uid,
                                             detail: "duplicate: messageUId \(uid) notified to the app twice on \(device)"))
                }
            case .callback(.chatroomQuit(let room)), .callback(.chatroomKicked(let room)), .callback(.chatroomDestroyed(let room)),
                 .callback(.chatroomJoinFailed(let room, _)):
                // (A failed join forgets the room and deletes its local messages, as a quit does.)
                let key = ConversationKey(.chatroom, room)
                // (Filtering keeps the same entries whatever the dictionaries' order.)
                rows = rows.filter { $0.value.conversation != key }
                notified = notified.filter { $0.value != key }
            default:
                break
            }
        }
        return out
    }

    private mutating func storedNew(_ id: Int64, _ uid: String, _ conv: ConversationKey, _ store: IMStore, _ out: inout [DeviceFinding]) {
        // (One lookup: the earlier row, replaced by this one.)
        if let first = rows.updateValue((conv, id), forKey: uid), ((try? store.countRows(withUId: uid)) ?? 2) > 1 {
            out.append(DeviceFinding(conversation: conv, messageUId: uid,
                                     detail: "duplicate: messageUId \(uid) stored twice on \(device) (messageId \(first.messageId) and \(id))"))
        }
    }

    /// A message landed in `conv`: is the same peer now listed twice?
    private mutating func checkConversation(_ conv: ConversationKey, _ store: IMStore, _ out: inout [DeviceFinding]) {
        var pair: (ConversationKey, ConversationKey)?
        if let normal = Self.trimmed(conv) {
            untrimmed[normal] = conv
            pair = (normal, conv)
        } else if !untrimmed.isEmpty, let other = untrimmed[conv] {
            pair = (conv, other)
        }
        guard let (a, b) = pair, !conversationReported else { return }
        guard ((try? store.conversation(a)) ?? nil) != nil, ((try? store.conversation(b)) ?? nil) != nil else { return }
        conversationReported = true
        out.append(DeviceFinding(conversation: b, messageUId: nil,
                                 detail: "duplicate conversation: \(device) lists \"\(a)\" and \"\(b)\", the same \(a.type) peer twice"))
    }

    /// The end of the run or capture: the conversation list holds one row per (type, trimmed
    /// targetId); the store's own view — any messageUId in two rows — when nothing was reported
    /// for the device yet (`reportedBefore`).
    public mutating func finish(store: IMStore, reportedBefore: Bool) -> [DeviceFinding] {
        var out: [DeviceFinding] = []
        if !conversationReported, let convs = try? store.conversationList() {
            var seen: [ConversationKey: ConversationKey] = [:]
            for c in convs {
                let normal = Self.trimmed(c.key) ?? c.key
                if let other = seen[normal] {
                    conversationReported = true
                    out.append(DeviceFinding(conversation: c.key, messageUId: nil, detail:
                        "duplicate conversation: \(device) lists \"\(other)\" and \"\(c.key)\", the same \(normal.type) peer twice"))
                    break
                }
                seen[normal] = c.key
            }
        }
        if !reportedBefore, let dups = try? store.duplicateMessageUIds(), let first = dups.first {
            out.append(DeviceFinding(conversation: nil, messageUId: first.messageUId, detail:
                "duplicate: the store of \(device) holds \(dups.count) messageUId(s) in several rows, e.g. \(first.messageUId)"))
        }
        return out
    }
}

/// order, the device's part: a stored message's sentTime is the server's time for it, and so is
/// an own sent message's row; every local history page the app gets is the store's page for the
/// same cursor (a row missing is a gap — B5); at the end, each conversation paged newest first,
/// 20 per call, as an app does, is in descending (server time, messageUId) order.
public struct OrderRule: Sendable {
    /// History requests not answered yet: (conversation, before, count), oldest first.
    private var historyRequests: [(ConversationKey, Int64, Int32)] = []

    public init() {}

    public mutating func input(_ input: ClientInput) {
        if case .api(.getHistory(let conv, let before, let count)) = input { historyRequests.append((conv, before, count)) }
    }

    /// `serverTime(uid)`: the server's dataTime of a message it accepted (nil: not known).
    public mutating func effects(_ effects: [ClientEffect], store: IMStore, reads: StoreReads? = nil,
                                 serverTime: (String) -> Int64?) -> [DeviceFinding] {
        var out: [DeviceFinding] = []
        for e in effects {
            switch e {
            case .callback(.history(let conv, let page)):
                guard let i = historyRequests.firstIndex(where: { $0.0 == conv }) else { continue }
                let (_, before, count) = historyRequests.remove(at: i)
                if let f = Self.historyPage(store, conv, before: before, count: count, got: page) { out.append(f) }
            case .note(.stored(_, let uid?, let conv, let sentTime, _, _)):
                if let f = Self.time(uid, sentTime, conv, "stored", serverTime) { out.append(f) }
            case .callback(.sendResult(let id, let uid?, _, nil)):
                // What the store keeps is what the conversation is ordered by.
                if let row = StoreReads.sentRow(id: id, store, reads),
                   let f = Self.time(uid, row.sentTime, row.conversation, "own sent message", serverTime) {
                    out.append(f)
                }
            default:
                break
            }
        }
        return out
    }

    static func time(_ uid: String, _ sentTime: Int64, _ conv: ConversationKey, _ what: String,
                     _ serverTime: (String) -> Int64?) -> DeviceFinding? {
        guard let server = serverTime(uid), server != sentTime else { return nil }
        return DeviceFinding(conversation: conv, messageUId: uid,
                             detail: "\(what) has sentTime \(sentTime) but the server's dataTime is \(server) (\(sentTime - server) ms off)")
    }

    static func historyPage(_ store: IMStore, _ conv: ConversationKey, before: Int64, count: Int32, got: [StoredMessage]) -> DeviceFinding? {
        guard let want = try? store.history(in: conv, before: before, count: Int(max(0, count))) else { return nil }
        let gotIds = got.map(\.messageId)
        let wantIds = want.map(\.messageId)
        guard gotIds != wantIds else { return nil }
        let from = before == -1 ? "the newest" : "before messageId \(before)"
        if let missing = want.first(where: { !gotIds.contains($0.messageId) }) {
            return DeviceFinding(conversation: conv, messageUId: missing.messageUId, detail:
                "history page (\(from), \(count)) skips messageId \(missing.messageId)" +
                (missing.messageUId.map { " (\($0))" } ?? "") + ": a gap; the app got \(gotIds), the store's page is \(wantIds)")
        }
        let extra = got.first { !wantIds.contains($0.messageId) } ?? got[0]
        return DeviceFinding(conversation: conv, messageUId: extra.messageUId, detail:
            "history page (\(from), \(count)) shows messageId \(extra.messageId), which is not on the store's page " +
            "(already shown, or out of order); the app got \(gotIds), the store's page is \(wantIds)")
    }

    /// The end: the first conversation whose pages break server order (one finding at most).
    /// `pageAsTheApp`: read through `history(in:before:count:)` 20 rows a call, as an app does (on
    /// a simulated disk each read may draw from the device's storage stream); otherwise the same
    /// rows' messageUIds in one statement per conversation.
    public func finish(store: IMStore, device: String, pageAsTheApp: Bool = true,
                       serverTime: (String) -> Int64?) -> [DeviceFinding] {
        guard let convs = try? store.conversationList() else { return [] }
        for conv in convs {
            var seen: [String?] = []
            if pageAsTheApp {
                var before: Int64 = -1
                while true {
                    let page = (try? store.history(in: conv.key, before: before, count: 20)) ?? []
                    seen += page.lazy.map(\.messageUId)
                    guard page.count == 20, let last = page.last, seen.count < 100_000 else { break }
                    before = last.messageId
                }
            } else {
                // (Paging stops at the first full page reaching 100,000 rows: exactly 100,000.)
                seen = (try? store.historyUIds(in: conv.key, limit: 100_000)) ?? []
            }
            // seen is newest first; server order is (dataTime, messageUId). Each row's server
            // time is looked up once (it is the older of one pair and the newer of the next).
            var newerTime: Int64? = nil
            for (i, uid) in seen.enumerated() {
                let time = uid.flatMap(serverTime)
                defer { newerTime = time }
                guard i > 0, let ou = uid, let os = time, let nu = seen[i - 1], let ns = newerTime, (ns, nu) < (os, ou) else { continue }
                return [DeviceFinding(conversation: conv.key, messageUId: nu, detail:
                    "history shows \(nu) (dataTime \(ns)) before \(ou) (dataTime \(os)) on \(device), against server order")]
            }
        }
        return []
    }
}

/// unread: a conversation's unread count equals the store's recount of its received, counted,
/// unread, not-recalled messages — for every conversation an input touched (a received message,
/// a recall, a read sync), after the core finished with it, and for every conversation at the
/// end. One finding per device.
public struct UnreadRule: Sendable {
    private var reported = false

    public init() {}

    public mutating func effects(_ effects: [ClientEffect], store: IMStore, reads: StoreReads? = nil) -> [DeviceFinding] {
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
        return touched.compactMap { check(store, $0, reads) }
    }

    private mutating func check(_ store: IMStore, _ conv: ConversationKey, _ reads: StoreReads? = nil) -> DeviceFinding? {
        guard !reported else { return nil }
        let shown: Int, expected: Int
        if let reads {
            guard let state = reads.unreadState(conv) else { return nil }
            (shown, expected) = (state.unreadCount, state.unreadCandidates)
        } else {
            guard let stored = (try? store.conversation(conv)) ?? nil,
                  let count = try? store.countUnreadCandidates(in: conv) else { return nil }
            (shown, expected) = (stored.unreadCount, count)
        }
        guard shown != expected else { return nil }
        reported = true
        return DeviceFinding(conversation: conv, messageUId: nil,
                             detail: "unread count is \(shown) but \(expected) received counted messages are unread and not recalled")
    }

    /// `sharedReads`: read each conversation's count and recount in one statement (`StoreReads`;
    /// not on a simulated disk, where each read may draw from the device's storage stream).
    public mutating func finish(store: IMStore, sharedReads: Bool = false) -> [DeviceFinding] {
        guard let convs = try? store.conversationList() else { return [] }
        let reads = sharedReads ? StoreReads(store) : nil
        return convs.compactMap { check(store, $0.key, reads) }
    }
}

/// The chatroom quit rule: local chatroom messages are deleted on quit (im-semantics §6) — when
/// the app is told `chatroomQuit`, the room has no message left in what the app reads. The count
/// is taken after the whole input: a row the app is told of after the callback in the same input
/// (its own send to the room, a message stored there) came after the quit and is not one of the
/// room's old messages (everyday-storage --swarm seed 353).
public enum QuitRule {
    /// The store's rows (`imsim replay`, and wherever the store is what the app reads).
    public static func effects(_ effects: [ClientEffect], store: IMStore) -> [DeviceFinding] {
        Self.effects(effects) { try? store.messageCount(in: $0) }
    }

    /// `shown`: the room's messages as the SDK answers the app (the world passes
    /// `World.appMessageCount`: a removal a storage fault left owed hides the room's old rows,
    /// everyday-storage --swarm seed 9039); nil when the read failed.
    public static func effects(_ effects: [ClientEffect], shown: (ConversationKey) -> Int?) -> [DeviceFinding] {
        var out: [DeviceFinding] = []
        for (i, e) in effects.enumerated() {
            guard case .callback(.chatroomQuit(let room)) = e else { continue }
            let key = ConversationKey(.chatroom, room)
            let count = shown(key) ?? 0
            guard count > 0 else { continue }
            let left = count - rowsTold(after: i, in: key, effects)
            if left > 0 {
                out.append(DeviceFinding(conversation: key, messageUId: nil,
                                         detail: "quit chatroom \(room) but \(left) of its messages are still in the store"))
            }
        }
        return out
    }

    /// Distinct rows of `key` the app was told were added after effect `i`.
    private static func rowsTold(after i: Int, in key: ConversationKey, _ effects: [ClientEffect]) -> Int {
        var ids: [Int64] = []
        for e in effects[(i + 1)...] {
            let row: StoredMessage
            switch e {
            case .callback(.messageInserted(let m)): row = m
            case .callback(.received(let m, _, _, _)): row = m
            default: continue
            }
            if row.messageId != 0, row.conversation == key, !ids.contains(row.messageId) { ids.append(row.messageId) }
        }
        return ids.count
    }
}
