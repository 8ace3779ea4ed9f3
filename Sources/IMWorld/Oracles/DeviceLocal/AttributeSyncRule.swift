import IMClient
import IMWire
import SimKernel

/// Chatroom attributes are synced after a join (im-semantics §6: reads answer 34004 only
/// "before the post-join sync finished"), judged from one device's stream alone — its inputs
/// (app calls, the bytes it read), the frames it wrote and the app callbacks — so `imsim run`
/// (the chatroom oracle) and `imsim replay` (ReplayChecks) apply the same rule. Times are
/// nanoseconds on any one clock the caller keeps (the world's, or the capture's ms × 10⁶).
///
/// The rule: a completed join (`chatroomJoined`), or a rejoin (`joinChrmR` answered with status
/// 0 on the wire) of a room whose attributes were not synced yet, owes a `chatroomKVSynced`
/// within `grace` (40 s, longer than the 30 s request timeout) while the app stays in the room on
/// the same connection. A rejoin of a room already synced owes nothing: the cache stays valid
/// across a reconnect (it is the post-*join* sync). The debt is void when a `pullKV` of that
/// connection got no QUERYACK within the request timeout (wire-protocol §1.5: the request
/// fails; the spec defines no retry, so reads stay 34004 until the next join or rejoin).
///
/// The synced cache is kept valid across a reconnect only by a refresh (issue 21, sixth round):
/// attribute changes are announced by a `pullKV` notify to the room's *online* members (§6: no
/// offline cache), so a device that was away missed them. A rejoin (`joinChrmR` answered with
/// status 0) of a room whose attributes were synced owes a `pullKV` written on that connection
/// after the answer, within `grace` — else reads go on answering the attributes of before the
/// outage, without 34004. Void as above (a pullKV of the connection unanswered for the request
/// timeout: a refresh queued behind it is never sent), and when the connection ends or the app
/// leaves the room.
public struct AttributeSyncRule: Sendable {
    public struct Finding: Sendable, Equatable {
        public var room: String
        /// When the debt began (the join completed), and when it was found unpaid.
        public var since: Int64
        public var at: Int64
        /// An app read answered 34004 (else: the deadline passed).
        public var readRefused: Bool
        /// A rejoin of a synced room wrote no refreshing `pullKV` (else: the post-join sync).
        public var refreshMissing = false

        public init(room: String, since: Int64, at: Int64, readRefused: Bool, refreshMissing: Bool = false) {
            self.room = room
            self.since = since
            self.at = at
            self.readRefused = readRefused
            self.refreshMissing = refreshMissing
        }

        /// The report text; `sinceText` is `since` as the caller prints times.
        public func detail(sinceText: String) -> String {
            let late = SimDuration(nanoseconds: at - since)
            if refreshMissing {
                return "chatroom \(room): rejoined at \(sinceText) with its attributes synced before the outage, but no pullKV " +
                       "followed in \(late): changes announced while the device was away never reach its cache"
            }
            return readRefused
                ? "getChatroomKV(\(room)) → 34004 (not synced) \(late) after the join completed at \(sinceText): the post-join attribute sync never happened"
                : "chatroom \(room): attributes still not synced \(late) after the join completed at \(sinceText) on a connection that " +
                  "stayed up and answered its pullKV in time (reads answer 34004)"
        }
    }

    public static let grace: Int64 = 40_000_000_000
    let requestTimeout: Int64

    /// The room the app is in (its own join, until quit / kick / destroy / failed join).
    private var appRoom: String?
    private var owed: [String: Int64] = [:]
    private var synced: Set<String> = []
    /// This connection's pullKV and joinChrmR queries by msgId → when written.
    private var pullKV: [UInt16: Int64] = [:]
    private var rejoins: [UInt16: Int64] = [:]
    /// A pullKV of this connection went unanswered for the request timeout.
    private var pullKVFailed = false

    public init(requestTimeoutNanoseconds: Int64) {
        requestTimeout = requestTimeoutNanoseconds
    }

    /// Rejoins of synced rooms owing their refreshing pullKV, room → when the rejoin was answered.
    private var refreshOwed: [String: Int64] = [:]

    /// Earliest time a debt can fall due (nil when nothing is owed).
    public var nextDue: Int64? {
        let first = Swift.min(owed.values.min() ?? .max, refreshOwed.values.min() ?? .max)
        return first == .max ? nil : first + Self.grace
    }

    /// A new SDK instance (app start or kill): no room, no cache.
    public mutating func appRestarted() {
        appRoom = nil
        owed = [:]
        synced = []
        connectionEnded()
    }

    private mutating func connectionEnded() {
        owed = [:]
        refreshOwed = [:]
        pullKV = [:]
        rejoins = [:]
        pullKVFailed = false
    }

    /// False when `input(_:inbound:at:)` would change nothing for this input (callers may skip
    /// it: most inputs are bytes without a QUERYACK, or timers).
    public static func takes(_ input: ClientInput, inbound: [Frame]) -> Bool {
        switch input {
        case .api(.joinChatroom), .api(.joinExistChatroom), .api(.quitChatroom), .transport(.closed), .transport(.opened):
            return true
        case .transport(.bytes):
            return inbound.contains { if case .queryAck = $0 { true } else { false } }
        default:
            return false
        }
    }

    /// An input about to be fed to the core; `inbound` = the frames its bytes completed.
    public mutating func input(_ input: ClientInput, inbound: [Frame], at t: Int64) {
        switch input {
        case .api(.joinChatroom(let r, _)), .api(.joinExistChatroom(let r, _)):
            appRoom = r
        case .api(.quitChatroom(let r)):
            if appRoom == r { appRoom = nil }
        case .transport(.closed), .transport(.opened):
            connectionEnded()
        case .transport(.bytes):
            for case .queryAck(let a) in inbound {
                if let sent = pullKV.removeValue(forKey: a.messageId), t - sent >= requestTimeout { pullKVFailed = true }
                if rejoins.removeValue(forKey: a.messageId) != nil, a.status == 0, let room = appRoom {
                    if !synced.contains(room) {
                        if owed[room] == nil { owed[room] = t }
                    } else {
                        refreshOwed[room] = t
                    }
                }
            }
        default:
            break
        }
    }

    /// False when `effects(_:at:)` would change nothing and find nothing for this list (callers
    /// may skip it): no pullKV or joinChrmR query written, no connection given up, no room or KV
    /// callback. (A superset: a `chatroomKV` answer is taken whatever its error.)
    public static func takes(_ effects: [ClientEffect]) -> Bool {
        for e in effects {
            switch e {
            case .send(_, let frames):
                if frames.contains(where: { $0.type == .query && ($0.topic == Topic.pullKV.rawValue || $0.topic == Topic.joinChrmR.rawValue) }) {
                    return true
                }
            case .closeConnection, .callback(.chatroomJoined), .callback(.chatroomKVSynced), .callback(.chatroomKV),
                 .callback(.chatroomQuit), .callback(.chatroomKicked), .callback(.chatroomDestroyed), .callback(.chatroomJoinFailed):
                return true
            default:
                break
            }
        }
        return false
    }

    /// The effects the core returned for the last input. Returns a finding for a read refused
    /// with 34004 once the debt is overdue.
    public mutating func effects(_ effects: [ClientEffect], at t: Int64) -> [Finding] {
        var out: [Finding] = []
        for e in effects {
            switch e {
            case .send(_, let frames):
                for f in frames where f.type == .query {
                    if f.topic == Topic.pullKV.rawValue {
                        pullKV[f.messageId] = t
                        // The frame names no room: one room at a time (the SDK's default).
                        refreshOwed = [:]
                    }
                    if f.topic == Topic.joinChrmR.rawValue { rejoins[f.messageId] = t }
                }
            case .closeConnection:
                // The SDK gave up on its connection (ping or request timeout): the next one owes afresh.
                connectionEnded()
            case .callback(.chatroomJoined(let room)):
                // A new join: its own pullKV follows in this input's write.
                synced.remove(room)
                owed[room] = t
                pullKV = [:]
                pullKVFailed = false
            case .callback(.chatroomKVSynced(let room)):
                synced.insert(room)
                owed[room] = nil
            case .callback(.chatroomKV(let room, _, let error)) where error == IMErrorCode.chatroomKVNotSynced.rawValue:
                if let since = owed[room], t - since >= Self.grace, !excused(at: t) {
                    owed[room] = nil
                    out.append(Finding(room: room, since: since, at: t, readRefused: true))
                }
            case .callback(.chatroomQuit(let room)), .callback(.chatroomKicked(let room)), .callback(.chatroomDestroyed(let room)),
                 .callback(.chatroomJoinFailed(let room, _)):
                if appRoom == room { appRoom = nil }
                owed[room] = nil
                refreshOwed[room] = nil
                synced.remove(room)
            default:
                break
            }
        }
        return out
    }

    private func excused(at t: Int64) -> Bool {
        pullKVFailed || pullKV.values.contains { t - $0 >= requestTimeout }
    }

    /// Debts overdue at `t` (each reported once).
    public mutating func due(at t: Int64) -> [Finding] {
        guard let next = nextDue, next <= t else { return [] }
        var out: [Finding] = []
        for room in owed.keys.sorted() {
            guard let since = owed[room], since + Self.grace <= t else { continue }
            owed[room] = nil
            guard appRoom == room, !excused(at: t) else { continue }
            out.append(Finding(room: room, since: since, at: t, readRefused: false))
        }
        for room in refreshOwed.keys.sorted() {
            guard let since = refreshOwed[room], since + Self.grace <= t else { continue }
            refreshOwed[room] = nil
            guard appRoom == room, !excused(at: t) else { continue }
            out.append(Finding(room: room, since: since, at: t, readRefused: false, refreshMissing: true))
        }
        return out
    }
}
