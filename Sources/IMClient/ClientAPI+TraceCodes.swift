// The stable codes a trace stores for the client core's values (Docs/trace-format.md, "Record
// schema"), declared once next to the types: the trace format (IMTraceFormat) writes and reads
// these and keeps no number table of its own. Traces on disk name them: never renumber a case,
// only add new ones.

extension ClientTimer {
    /// A timer's stable code: the trace writes it (then the payload, if any), the world folds
    /// it into the run digest.
    public enum Code: UInt8, CaseIterable, Sendable {
        case connackTimeout = 1, heartbeat, pingTimeout, reconnect, backgroundClose, connectTimeLimit, requestTimeout, poll, storeRetry
    }

    @inlinable public var code: Code {
        switch self {
        case .connackTimeout: .connackTimeout
        case .heartbeat: .heartbeat
        case .pingTimeout: .pingTimeout
        case .reconnect: .reconnect
        case .backgroundClose: .backgroundClose
        case .connectTimeLimit: .connectTimeLimit
        case .requestTimeout: .requestTimeout
        case .poll: .poll
        case .storeRetry: .storeRetry
        }
    }
}

extension ClientInput {
    /// Trace record kinds of a device's inputs: 20–25 and 31 (transport, timer, app, network,
    /// the device clock), 128–144 (API calls, one kind each).
    public enum TraceKind: UInt16, CaseIterable, Sendable {
        case transportOpened = 20, transportBytes, transportClosed, timerFired, lifecycle, networkChanged
        /// Not an input: the device's wall clock the inputs after it see.
        case wallClock = 31
        case connect = 128, disconnect, logout, send, resend, recall, sendReadReceipt, clearUnread, joinChatroom,
             joinExistChatroom, quitChatroom, setChatroomKV, removeChatroomKV, getChatroomKV, getHistory, getRemoteHistory,
             getRemoteHistoryAfter

        public var isAPICall: Bool { rawValue >= 128 }
    }
}

extension ClientEffect {
    /// Trace record kinds of a device's effects other than callbacks and notes: 26–30.
    public enum TraceKind: UInt16, CaseIterable, Sendable {
        case openConnection = 26, send, closeConnection, setTimer, cancelTimer
    }
}

extension AppCallback {
    /// Trace record kinds of app callbacks: 40–62.
    public enum TraceKind: UInt16, CaseIterable, Sendable {
        case connectionStatus = 40, dbOpened, connected, connectError, messageInserted, sendResult, received, recalled,
             readReceipt, syncReadStatus, chatroomJoined, chatroomJoinFailed, chatroomQuit, chatroomKicked, chatroomDestroyed,
             chatroomKVSynced, chatroomKVUpdated, chatroomKVRemoved, chatroomKVResult, chatroomKV, history, remoteHistory,
             recallResult
    }

    /// The record kind a trace writes for this callback (without building its record).
    @inlinable public var traceKind: TraceKind {
        switch self {
        case .connectionStatus: .connectionStatus
        case .dbOpened: .dbOpened
        case .connected: .connected
        case .connectError: .connectError
        case .messageInserted: .messageInserted
        case .sendResult: .sendResult
        case .received: .received
        case .recalled: .recalled
        case .readReceipt: .readReceipt
        case .syncReadStatus: .syncReadStatus
        case .chatroomJoined: .chatroomJoined
        case .chatroomJoinFailed: .chatroomJoinFailed
        case .chatroomQuit: .chatroomQuit
        case .chatroomKicked: .chatroomKicked
        case .chatroomDestroyed: .chatroomDestroyed
        case .chatroomKVSynced: .chatroomKVSynced
        case .chatroomKVUpdated: .chatroomKVUpdated
        case .chatroomKVRemoved: .chatroomKVRemoved
        case .chatroomKVResult: .chatroomKVResult
        case .chatroomKV: .chatroomKV
        case .history: .history
        case .remoteHistory: .remoteHistory
        case .recallResult: .recallResult
        }
    }
}

extension ClientNote {
    /// Trace record kinds of client notes: 64–75.
    public enum TraceKind: UInt16, CaseIterable, Sendable {
        case state = 64, stored, skipped, cursor, reconnectScheduled, requestTimedOut, chatroomState, changed, storeError,
             ignored, syncState, incompleteBody
    }

    /// The record kind a trace writes for this note (without building its record).
    @inlinable public var traceKind: TraceKind {
        switch self {
        case .state: .state
        case .stored: .stored
        case .skipped: .skipped
        case .cursor: .cursor
        case .reconnectScheduled: .reconnectScheduled
        case .requestTimedOut: .requestTimedOut
        case .chatroomState: .chatroomState
        case .changed: .changed
        case .storeError: .storeError
        case .ignored: .ignored
        case .syncState: .syncState
        case .incompleteBody: .incompleteBody
        }
    }
}
