import IMClient
import IMWire
import SimKernel

/// The SDK rejoins its app's chatroom "after every reconnect" (im-semantics §6): a session that
/// begins with a `connected` status after the first one of an app run (an automatic reconnect)
/// while the app is in a room must write a `joinChrm` / `joinChrmR` within `grace` (10 s).
/// Judged from one device's stream — the app's join / quit calls, the frames it wrote, the status
/// and room callbacks, connections lost or given up — by the world's chatroom oracle and by
/// `imsim replay` alike; times in nanoseconds of the caller's clock.
public struct RejoinRule: Sendable {
    public struct Finding: Sendable, Equatable {
        public var room: String
        /// When the session began, and when the missing rejoin was found.
        public var since: Int64
        public var at: Int64

        public func detail(sinceText: String) -> String {
            "connected again at \(sinceText) but never rejoined chatroom \(room) (no joinChrmR in \(SimDuration(nanoseconds: at - since)))"
        }
    }

    public static let grace: Int64 = 10_000_000_000

    private var inRoom: String?
    private var connectedOnce = false
    private var sessionStart: Int64?
    private var rejoined = false

    public init() {}

    /// When the current session's rejoin falls due (nil: nothing owed).
    public var nextDue: Int64? { sessionStart.map { $0 + Self.grace } }

    /// A new SDK instance (app start or kill): in no room, and its next connection is a fresh start.
    public mutating func appRestarted() {
        self = RejoinRule()
    }

    /// The session ended at `t` (connection lost or given up): judged if it lasted the grace.
    private mutating func sessionEnded(at t: Int64) -> [Finding] {
        defer { sessionStart = nil }
        return check(at: t)
    }

    private func check(at t: Int64) -> [Finding] {
        guard let start = sessionStart, let room = inRoom, !rejoined, t - start >= Self.grace else { return [] }
        return [Finding(room: room, since: start, at: t)]
    }

    /// False when `input(_:at:)` would change nothing and find nothing (callers may skip it).
    public static func takes(_ input: ClientInput) -> Bool {
        switch input {
        case .api(.joinChatroom), .api(.joinExistChatroom), .api(.quitChatroom), .transport(.closed): true
        default: false
        }
    }

    public mutating func input(_ input: ClientInput, at t: Int64) -> [Finding] {
        switch input {
        case .api(.joinChatroom(let r, _)), .api(.joinExistChatroom(let r, _)):
            inRoom = r
        case .api(.quitChatroom(let r)):
            if inRoom == r { inRoom = nil }
        case .transport(.closed):
            return sessionEnded(at: t)
        default:
            break
        }
        return []
    }

    /// False when `effects(_:at:)` would change nothing and find nothing for this list (callers
    /// may skip it): no joinChrm / joinChrmR written, no connection given up, no status or room
    /// callback. (A superset: every `connectionStatus` is taken.)
    public static func takes(_ effects: [ClientEffect]) -> Bool {
        for e in effects {
            switch e {
            case .send(_, let frames):
                if frames.contains(where: { $0.topic == Topic.joinChrmR.rawValue || $0.topic == Topic.joinChrm.rawValue }) { return true }
            case .closeConnection, .callback(.connectionStatus), .callback(.chatroomQuit), .callback(.chatroomKicked),
                 .callback(.chatroomDestroyed), .callback(.chatroomJoinFailed):
                return true
            default:
                break
            }
        }
        return false
    }

    public mutating func effects(_ effects: [ClientEffect], at t: Int64) -> [Finding] {
        var out: [Finding] = []
        for e in effects {
            switch e {
            case .send(_, let frames):
                if frames.contains(where: { $0.topic == Topic.joinChrmR.rawValue || $0.topic == Topic.joinChrm.rawValue }) {
                    rejoined = true
                }
            case .closeConnection:
                // The SDK gave up on its connection: a session shorter than the grace owed nothing.
                out += sessionEnded(at: t)
            case .callback(.connectionStatus(.connected)):
                if connectedOnce {
                    sessionStart = t
                    rejoined = false
                }
                connectedOnce = true
            case .callback(.chatroomQuit(let room)), .callback(.chatroomKicked(let room)), .callback(.chatroomDestroyed(let room)),
                 .callback(.chatroomJoinFailed(let room, _)):
                if inRoom == room { inRoom = nil }
            default:
                break
            }
        }
        return out
    }

    /// The end of the run or capture at `t`: the current session is judged.
    public mutating func finish(at t: Int64) -> [Finding] {
        sessionEnded(at: t)
    }

    /// The session's rejoin deadline passed by `t` (reported once).
    public mutating func due(at t: Int64) -> [Finding] {
        guard let due = nextDue, due <= t else { return [] }
        let found = check(at: t)
        sessionStart = nil
        return found
    }
}
