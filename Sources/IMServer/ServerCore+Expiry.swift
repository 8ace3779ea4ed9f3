import IMWire
import SimKernel

// Offline retention (im-semantics §1: 7 days, 1–7 configurable; Docs/server.md §6.4).
extension ServerCore {
    /// Arms the sweep for an entry of `dataTime` if none is pending.
    mutating func armExpiry(for dataTime: Int64, now: Int64) {
        guard !expiryTimerArmed else { return }
        expiryTimerArmed = true
        let due = max(dataTime + rules.retentionMs, now)
        effect(.setTimer(.offlineExpiry, after: .milliseconds(due - now)))
    }

    /// Removes every inbox/sendbox entry with `dataTime + retention ≤ now` (pulls already skip them:
    /// the sweep only reclaims memory and reports), emitting dropped(offlineExpired) for inbox
    /// entries no device of the user ever got; then re-arms for the oldest remaining entry, at
    /// least `expirySweepInterval` later.
    mutating func sweepExpired(now: Int64) {
        let cut = now - rules.retentionMs
        var oldest: Int64?
        for userId in store.users.keys.sorted() {
            let expired = store.users[userId]!.inbox.removeExpired(upTo: cut)
            for e in expired where e.receivedBy == MailEntry.nobody {
                emit(.dropped(messageUId: e.message.uid, conversation: e.message.conversation, userId: userId, reason: .offlineExpired))
            }
            _ = store.users[userId]!.sendbox.removeExpired(upTo: cut)
            let u = store.users[userId]!
            for t in [u.inbox.first?.dataTime, u.sendbox.first?.dataTime].compactMap({ $0 }) { oldest = min(oldest ?? t, t) }
        }
        // Forget idempotency keys and the uid index of messages past retention (recall needs 120 s).
        while store.acceptLogHead < store.acceptLog.count, store.acceptLog[store.acceptLogHead].dataTime <= cut {
            let m = store.acceptLog[store.acceptLogHead]
            store.recalled[m.uid] = nil
            if m.clientUniqueId != 0 { store.idempotency[IdempotencyKey(userId: m.senderUserId, clientUniqueId: m.clientUniqueId)] = nil }
            store.acceptLogHead += 1
        }
        if store.acceptLogHead > 4096, store.acceptLogHead * 2 > store.acceptLog.count {
            store.acceptLog.removeFirst(store.acceptLogHead)
            store.acceptLogHead = 0
        }
        if let oldest {
            let interval = config.expirySweepInterval.nanoseconds / 1_000_000
            let due = max(oldest + rules.retentionMs, now + max(1, interval))
            expiryTimerArmed = true
            effect(.setTimer(.offlineExpiry, after: .milliseconds(due - now)))
        }
    }

    mutating func armExpiryAfterRestart(now: Int64) {
        var oldest: Int64?
        for u in store.users.values {
            for t in [u.inbox.first?.dataTime, u.sendbox.first?.dataTime].compactMap({ $0 }) { oldest = min(oldest ?? t, t) }
        }
        if let oldest { armExpiry(for: oldest, now: now) }
    }
}
