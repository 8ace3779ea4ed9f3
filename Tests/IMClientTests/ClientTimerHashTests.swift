import Testing
import IMClient

/// `ClientTimer` hashes as one word (`WordHash`) in the world's timer tables.
@Suite struct ClientTimerHashTests {
    static let timers: [ClientTimer] = [.connackTimeout, .heartbeat, .pingTimeout, .reconnect, .backgroundClose,
                                        .connectTimeLimit, .poll, .storeRetry] + (0...UInt16(300)).map { .requestTimeout(messageId: $0) }
                                        + [.requestTimeout(messageId: .max)]

    @Test func distinctTimersHashApartAndEqualOnesTogether() {
        for seed in [0, 1, -7, Int.max] {
            let hashes = Self.timers.map { $0._rawHashValue(seed: seed) }
            #expect(Set(hashes).count == Self.timers.count)
            #expect(Self.timers.map { $0._rawHashValue(seed: seed) } == hashes)
        }
    }

    @Test func aTimerTableFindsEveryTimer() {
        var table: [ClientTimer: Int] = [:]
        for (i, t) in Self.timers.enumerated() { table[t] = i }
        for (i, t) in Self.timers.enumerated() { #expect(table[t] == i) }
        table[.heartbeat] = nil
        table[.requestTimeout(messageId: 7)] = nil
        #expect(table.count == Self.timers.count - 2)
        #expect(table[.heartbeat] == nil && table[.requestTimeout(messageId: 8)] != nil)
    }
}
