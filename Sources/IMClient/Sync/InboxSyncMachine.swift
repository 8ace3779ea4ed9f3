/// The inbox/sendbox sync of one connection (wire-protocol §4): when to pull, whether a pull is
/// running, whether the connection is in sync. The cursors themselves are `ClientCore`'s
/// `inboxCursor`/`sendboxCursor`, persisted in the store.
///
/// States: `offline` (no session) → after CONNACK `linkCheck` (only with `pingBeforeFirstPull`)
/// → `pulling` ⇄ `idle(synced:)`. `synced` becomes true when a pull ends with `finished` and no
/// newer notify queued; a failed pull leaves it false until the next successful one.
struct InboxSyncMachine: Sendable {
    enum State: Sendable, Hashable {
        case offline
        /// Connected; the web SDK's PINGREQ before the first pull is outstanding.
        case linkCheck
        case pulling(PullingState)
        case idle(synced: Bool)

        /// What `ClientNote.syncState` reports.
        var reported: SyncState {
            switch self {
            case .offline: .offline
            case .linkCheck: .linkCheck
            case .pulling(let p): .pulling(page: p.page)
            case .idle(let synced): synced ? .inSync : .idle
            }
        }
    }

    struct PullingState: Sendable, Hashable {
        /// Message id of the pullMsg QUERY in flight.
        var messageId: UInt16
        /// Page number within this sync run (1 = first).
        var page: Int
    }

    private(set) var state: State = .offline
    /// The newest `s_ntf` time that arrived while a pull was running (pull again if newer than
    /// the inbox cursor when the pull ends).
    private(set) var queuedNotifyTime: Int64?

    var isPulling: Bool { if case .pulling = state { true } else { false } }
    var isInSync: Bool { state == .idle(synced: true) }
    var isOnline: Bool { state != .offline }

    /// A pull would be sent now (connected, link checked, none running).
    var canStartPull: Bool { if case .idle = state { true } else { false } }

    mutating func sessionStarted(linkCheck: Bool) {
        state = linkCheck ? .linkCheck : .idle(synced: false)
        queuedNotifyTime = nil
    }

    mutating func linkChecked() {
        if state == .linkCheck { state = .idle(synced: false) }
    }

    mutating func linkLost() {
        state = .offline
        queuedNotifyTime = nil
    }

    mutating func pullSent(messageId: UInt16) {
        let page = if case .pulling(let p) = state { p.page + 1 } else { 1 }
        state = .pulling(PullingState(messageId: messageId, page: page))
    }

    /// A notify arrived while a pull runs: remember the newest time.
    mutating func queueNotify(_ time: Int64) {
        queuedNotifyTime = max(queuedNotifyTime ?? .min, time)
    }

    /// The queued notify, consumed (nil when none).
    mutating func takeQueuedNotify() -> Int64? {
        defer { queuedNotifyTime = nil }
        return queuedNotifyTime
    }

    /// In sync no more: a delivered message could not be stored (the next pull fetches it).
    mutating func lostSync() {
        if state == .idle(synced: true) { state = .idle(synced: false) }
    }

    /// The pull ended: in sync, or not (failed / timed out).
    mutating func pullEnded(synced: Bool) {
        guard isPulling else { return }
        state = .idle(synced: synced)
    }
}
