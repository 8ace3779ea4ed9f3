import IMClient

/// Field-by-field equality of two callbacks, over values whose capture line is a function of
/// them: `true` means their lines are the same (so comparing the JSON forms is not needed);
/// `false` leaves the answer to the JSON comparison (`Replayer.sameOutput`), which stays the
/// definition of "the same output".
enum CallbackEquality {
    static func same(_ a: AppCallback, _ b: AppCallback) -> Bool {
        switch (a, b) {
        case let (.connectionStatus(x), .connectionStatus(y)): return x == y
        case let (.dbOpened(x), .dbOpened(y)), let (.connectError(x), .connectError(y)): return x == y
        case let (.connected(x), .connected(y)): return x == y
        case let (.messageInserted(x), .messageInserted(y)): return x == y
        case let (.sendResult(i1, u1, s1, e1), .sendResult(i2, u2, s2, e2)): return i1 == i2 && u1 == u2 && s1 == s2 && e1 == e2
        case let (.received(m1, l1, o1, h1), .received(m2, l2, o2, h2)): return l1 == l2 && o1 == o2 && h1 == h2 && m1 == m2
        case let (.recalled(i1, c1), .recalled(i2, c2)): return i1 == i2 && c1 == c2
        case let (.recallResult(i1, e1), .recallResult(i2, e2)): return i1 == i2 && e1 == e2
        case let (.readReceipt(c1, t1), .readReceipt(c2, t2)), let (.syncReadStatus(c1, t1), .syncReadStatus(c2, t2)):
            return c1 == c2 && t1 == t2
        case let (.chatroomJoined(x), .chatroomJoined(y)), let (.chatroomQuit(x), .chatroomQuit(y)),
             let (.chatroomKicked(x), .chatroomKicked(y)), let (.chatroomDestroyed(x), .chatroomDestroyed(y)),
             let (.chatroomKVSynced(x), .chatroomKVSynced(y)):
            return x == y
        case let (.chatroomJoinFailed(r1, c1), .chatroomJoinFailed(r2, c2)): return r1 == r2 && c1 == c2
        case let (.chatroomKVUpdated(r1, e1), .chatroomKVUpdated(r2, e2)): return r1 == r2 && e1 == e2
        case let (.chatroomKVRemoved(r1, k1), .chatroomKVRemoved(r2, k2)): return r1 == r2 && k1 == k2
        case let (.chatroomKVResult(r1, k1, e1), .chatroomKVResult(r2, k2, e2)): return r1 == r2 && k1 == k2 && e1 == e2
        case let (.chatroomKV(r1, x1, e1), .chatroomKV(r2, x2, e2)): return r1 == r2 && x1 == x2 && e1 == e2
        case let (.history(c1, m1), .history(c2, m2)): return c1 == c2 && m1 == m2
        case let (.remoteHistory(c1, m1, e1), .remoteHistory(c2, m2, e2)): return c1 == c2 && e1 == e2 && m1 == m2
        default: return false
        }
    }
}
