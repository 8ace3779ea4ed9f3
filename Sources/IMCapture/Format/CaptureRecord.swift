import IMClient
import IMStore
import IMWire

/// App process and lifecycle events a capture records.
public enum AppEvent: String, Sendable, Hashable, CaseIterable {
    /// The app process started (a new SDK instance over the same database).
    case start
    /// The app process was killed: the SDK's memory is gone, its sockets and timers with it.
    case kill
    /// `ClientInput.lifecycle(.foreground)`.
    case foreground
    /// `ClientInput.lifecycle(.background)`.
    case background
}

/// What one capture line says happened (`Docs/capture-format.md` §3). Inputs are what the
/// SDK was given — replay feeds them to a real `ClientCore`; outputs are what it did — replay
/// compares them with what the replayed core does.
public enum CaptureEvent: Sendable {
    // Inputs
    case api(ClientAPICall)
    /// The transport of connection `conn` is open.
    case opened(conn: Int)
    /// Bytes read from connection `conn` (stream framing: any split; the bytes are the truth).
    case bytesIn(conn: Int, bytes: [UInt8])
    /// Connection `conn` ended (peer close, reset, refused, timeout, network down).
    case closed(conn: Int, reason: TransportCloseReason)
    case timer(ClientTimer)
    case network(available: Bool)
    case app(AppEvent)
    /// The device wall clock was stepped by this many ms (NTP, the user): `t` may go back.
    case clock(stepMs: Int64)
    // Outputs
    /// The SDK asked for a new connection; it is numbered `conn`.
    case open(conn: Int)
    /// Bytes the SDK wrote on connection `conn`.
    case bytesOut(conn: Int, bytes: [UInt8])
    /// The SDK closed connection `conn`.
    case close(conn: Int)
    /// A callback the app received.
    case callback(AppCallback)
    /// The store's state (optional; replay compares it with the replayed store).
    case snapshot(StoreSnapshot)

    /// The `kind` of the line.
    public var kind: String {
        switch self {
        case .api: "api"
        case .opened: "opened"
        case .bytesIn: "in"
        case .closed: "closed"
        case .timer: "timer"
        case .network: "network"
        case .app: "app"
        case .clock: "clock"
        case .open: "open"
        case .bytesOut: "out"
        case .close: "close"
        case .callback: "cb"
        case .snapshot: "snapshot"
        }
    }

    /// All kinds of the format, in document order.
    public static let kinds = ["api", "opened", "in", "closed", "timer", "network", "app", "clock",
                               "open", "out", "close", "cb", "snapshot"]

    /// Something the SDK did (compared by replay) rather than something that happened to it.
    public var isOutput: Bool {
        switch self {
        case .open, .bytesOut, .close, .callback, .snapshot: true
        default: false
        }
    }
}

/// One line of a capture: device-local wall-clock ms, the event, and where it was read.
public struct CaptureRecord: Sendable {
    /// Device-local wall-clock ms (what the SDK read as "now").
    public var t: Int64
    public var event: CaptureEvent
    /// 1-based line in the file (0 for records built in memory).
    public var line: Int
    /// For an input an importer inferred from traffic (not seen by an SDK): why it was inferred
    /// (`"inferred": "…"`, Docs/capture-format.md §3).
    public var inferred: String?

    public init(t: Int64, event: CaptureEvent, line: Int = 0, inferred: String? = nil) {
        self.t = t
        self.event = event
        self.line = line
        self.inferred = inferred
    }
}

/// A compact picture of a store for `snapshot` records: cursors and, per conversation, the
/// unread count and the messages in server order.
public struct StoreSnapshot: Sendable, Equatable {
    public struct Conversation: Sendable, Equatable {
        public var conversation: ConversationKey
        public var unread: Int
        /// `uid@sentTime` (or `#messageId@sentTime` for rows without a messageUId), server order.
        public var messages: [String]
    }
    public var inbox: Int64
    public var sendbox: Int64
    public var conversations: [Conversation]

    /// Reads the snapshot off a store (chatrooms included).
    public static func of(_ store: IMStore) -> StoreSnapshot {
        let inbox = (try? store.cursor(.inbox)) ?? 0
        let sendbox = (try? store.cursor(.sendbox)) ?? 0
        var convs: [Conversation] = []
        let types = ConversationType.allCases
        for c in ((try? store.conversationList(types: types)) ?? []).sorted(by: { $0.key < $1.key }) {
            let rows = (try? store.snapshot(of: c.key)) ?? []
            convs.append(Conversation(conversation: c.key, unread: c.unreadCount, messages: rows.map {
                "\($0.messageUId ?? "#\($0.messageId)")@\($0.sentTime)"
            }))
        }
        return StoreSnapshot(inbox: inbox, sendbox: sendbox, conversations: convs)
    }
}
