import IMWire

/// A joined session of a chatroom member.
struct JoinedSession: Sendable, Hashable {
    let connection: ConnectionID
    let deviceId: String
    let platformRank: Int
}

/// A chatroom member. Membership belongs to the *user*; it stays when the user's sessions end
/// (the member is then *offline*, which is what the offline auto-kick rule is about).
struct ChatroomMember: Sendable {
    var joinedAt: Int64
    /// Sessions that joined, in platform order (mobile, desktop, web).
    var sessions: [JoinedSession] = []
    /// When the last joined session ended; nil while some session is joined.
    var offlineSince: Int64?
    /// Room messages since `offlineSince` (spec variant) or since `faqClockStart` (FAQ variant).
    var offlineMessages = 0
    /// FAQ variant: arrival time of the first message after going offline.
    var faqClockStart: Int64?

    var isOffline: Bool { offlineSince != nil }

    mutating func add(_ s: JoinedSession) {
        sessions.removeAll { $0.connection == s.connection }
        let i = sessions.firstIndex { $0.platformRank > s.platformRank } ?? sessions.count
        sessions.insert(s, at: i)
        offlineSince = nil
        offlineMessages = 0
        faqClockStart = nil
    }

    /// Removes a session; returns true when the member just went offline.
    mutating func remove(_ connection: ConnectionID, now: Int64) -> Bool {
        let before = sessions.count
        sessions.removeAll { $0.connection == connection }
        guard before > 0, sessions.isEmpty else { return false }
        goOffline(now: now)
        return true
    }

    mutating func goOffline(now: Int64) {
        sessions = []
        offlineSince = now
        offlineMessages = 0
        faqClockStart = nil
    }

    /// The offline auto-kick rule (im-semantics §6), evaluated when the room produces a message at
    /// `now`. Returns true when the member must be removed.
    ///
    /// - spec: offline since t0; kicked by the `offlineKickMessages`-th (31st) message within
    ///   `offlineKickWindowMs` (30 s) of t0, or by any message once `now − t0 ≥ 30 s`;
    /// - faq: the clock starts at the first message after t0 (t1); kicked by the
    ///   `faqOfflineKickMessages`-th (30th) message, or by any message once `now − t1 ≥ 30 s`.
    mutating func kickedByMessage(now: Int64, config: ChatroomConfig) -> Bool {
        guard let t0 = offlineSince else { return false }
        switch config.kickVariant {
        case .spec:
            if now - t0 >= config.offlineKickWindowMs { return true }
            offlineMessages += 1
            return offlineMessages >= config.offlineKickMessages
        case .faq:
            let t1: Int64
            if let s = faqClockStart { t1 = s } else { t1 = now; faqClockStart = now }
            if now - t1 >= config.offlineKickWindowMs { return true }
            offlineMessages += 1
            return offlineMessages >= config.faqOfflineKickMessages
        }
    }
}
