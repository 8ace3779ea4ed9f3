import Testing
import IMServer
import IMWire

/// `ServerTimer` hashes its per-connection cases as one word (`WordHash`), its room cases by their strings.
@Suite struct ServerTimerHashTests {
    static let timers: [ServerTimer] = {
        var t: [ServerTimer] = [.offlineExpiry]
        for c in 0..<50 {
            let id = ConnectionID(UInt64(c))
            t += [.sessionIdle(id), .connectDeadline(id)] + (0..<20).map { .queryAckRetry(id, messageId: UInt16($0)) }
        }
        for r in ["r1", "r2", "room-with-a-longer-name"] {
            t += [.chatroomAutoDestroy(roomId: r)]
            for u in ["u1", "u2"] { t += [.chatroomBanEnds(roomId: r, userId: u), .chatroomMuteEnds(roomId: r, userId: u)] }
        }
        return t
    }()

    @Test func distinctTimersHashApartAndEqualOnesTogether() {
        for seed in [0, 3, -1] {
            let hashes = Self.timers.map { $0._rawHashValue(seed: seed) }
            #expect(Set(hashes).count == Self.timers.count)
            #expect(ServerTimer.chatroomBanEnds(roomId: "r" + "1", userId: "u1")._rawHashValue(seed: seed)
                    == ServerTimer.chatroomBanEnds(roomId: "r1", userId: "u1")._rawHashValue(seed: seed))
        }
    }

    @Test func aTimerTableFindsEveryTimer() {
        var table: [ServerTimer: Int] = [:]
        for (i, t) in Self.timers.enumerated() { table[t] = i }
        #expect(table.count == Self.timers.count)
        for (i, t) in Self.timers.enumerated() { #expect(table[t] == i) }
    }
}
