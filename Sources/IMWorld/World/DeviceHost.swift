import IMClient
import IMServer
import IMStore
import IMWire
import SimKernel

/// A simulated device: the real client core and store, plus everything the world models around
/// it (clock, app lifecycle, timers); its link is the network's (`Network.Link`).
struct DeviceHost {
    enum Lifecycle: Equatable {
        case notStarted
        case running(foreground: Bool)
        case killed
    }

    let index: Int
    let userIndex: Int
    let identity: DeviceIdentity
    let token: String
    let autoConnect: Bool
    /// The real SDK core; nil while the app is not running.
    var core: ClientCore?
    /// Survives app kills (the database file of a real phone). On a simulated device (`disk`) a
    /// new store object is opened at every app start.
    var store: IMStore
    /// The simulated storage device (`client.store: device`), nil for `:memory:` stores.
    let disk: SimDisk?
    var clock: DeviceClock
    var lifecycle: Lifecycle = .notStarted
    var timers = ClientTimerTable()

    // What the app knows (from callbacks), used by the world's app behaviour and script actions.
    var status: ConnectionStatus = .unconnected
    var connectedOnce = false
    var joinedRoomsThisAppRun = false
    var gaveUp = false
    var lastInsertedMessageId: Int64?
    var lastFailedMessageId: Int64?
    var lastSentOk: (messageId: Int64, messageUId: String)?
    var recallQueue: [Int64] = []
    /// Per own message (messageId) still waiting for a send result: the stream of the user's
    /// "recall it" / "tap resend" decisions about that message (`StreamKey.messageDecisions`).
    var messageDecisions: [Int64: RandomStream] = [:]
    /// FAILED messages the user will tap "resend" on (workload `resendProbability`).
    var resendQueue: [Int64] = []
    /// Per conversation: the last messageId of the last history page (the app's scroll position;
    /// absent once a page came back short).
    var historyCursor: [ConversationKey: Int64] = [:]
    /// The oldest sentTime of the last cloud-history page per conversation (`"before": "previous"`).
    var remoteHistoryCursor: [ConversationKey: Int64] = [:]
    /// Rooms the app itself asked to quit (a `chatroomQuit` for any other room came from the SDK,
    /// e.g. on disconnect, and the app joins again on its next `connected`).
    var appQuitRequested: Set<String> = []

    var isRunning: Bool { if case .running = lifecycle { true } else { false } }
    var isForeground: Bool { lifecycle == .running(foreground: true) }
}

/// The server side: the real server core and its clock and timers.
struct ServerHost {
    var core: ServerCore
    let clock: ServerClock
    var up = true
    var timers = ServerTimerTable()
}

/// A user of the scenario.
struct UserHost {
    let id: String
    var devices: [Int]
    var groups: [String] = []
    var rooms: [String] = []
    /// Users this one talks to privately (sorted).
    var contacts: [String] = []
    var active = true
    /// The workload streams (`workload/<user>/…`).
    var streams: UserStreams
    /// Stable hashes of `contacts` and `groups`, for rendezvous picks.
    var contactHashes: [UInt64] = []
    var groupHashes: [UInt64] = []
    /// The history paging in progress: device, conversation, pages still to read.
    var paging: (device: Int, conversation: ConversationKey, left: Int)?
    /// Devices this user disconnected on purpose and will connect again.
    var reconnecting: [Int] = []
}
