// The stable codes a trace stores for the server core's values (Docs/trace-format.md, "Record
// schema"), declared once next to the types: the trace format (IMTraceFormat) writes and reads
// these and keeps no number table of its own. Traces on disk name them: never renumber a case,
// only add new ones.

extension ServerTimer {
    /// A timer's stable code: the trace writes it (then the payload), the world folds it into
    /// the run digest.
    public enum Code: UInt8, CaseIterable, Sendable {
        case sessionIdle = 1, queryAckRetry, connectDeadline, chatroomAutoDestroy, offlineExpiry, chatroomBanEnds, chatroomMuteEnds
    }

    @inlinable public var code: Code {
        switch self {
        case .sessionIdle: .sessionIdle
        case .queryAckRetry: .queryAckRetry
        case .connectDeadline: .connectDeadline
        case .chatroomAutoDestroy: .chatroomAutoDestroy
        case .offlineExpiry: .offlineExpiry
        case .chatroomBanEnds: .chatroomBanEnds
        case .chatroomMuteEnds: .chatroomMuteEnds
        }
    }
}

extension ServerInput {
    /// Trace record kinds of the server's inputs: 80–83, 160–172 (API calls, one kind each).
    public enum TraceKind: UInt16, CaseIterable, Sendable {
        case connectionAccepted = 80, bytes, connectionClosed, timerFired
        case createChatroom = 160, destroyChatroom, keepAliveChatroom, banChatroomUser, muteChatroomUser,
             setChatroomUserWhitelist, muteGroupUser, addGroupMembers, removeGroupMembers, blockUser, sendSystemMessage,
             broadcast, setChatroomMessageWhitelist

        public var isAPICall: Bool { rawValue >= 160 }
    }
}

extension ServerEffect {
    /// Trace record kinds of the server's effects other than events: 84–87.
    public enum TraceKind: UInt16, CaseIterable, Sendable {
        case send = 84, close, setTimer, cancelTimer
    }
}

extension ServerEvent {
    /// Trace record kinds of server events: 96–118.
    public enum TraceKind: UInt16, CaseIterable, Sendable {
        case sessionOpened = 96, connectRejected, sessionClosed, kicked, messageAccepted, messageRejected, duplicateSendAbsorbed,
             fannedOut, pulled, offlineStored, pushed, dropped, chatroomJoined, chatroomLeft, chatroomDestroyed,
             chatroomKVChanged, recalled, restarted, protocolError, reconnectRefused, queryRejected, chatroomCreated,
             incompleteBody
    }
}
