import IMClient
import IMWire
import SimKernel
import Testing
@testable import IMWorld

/// The device-local reconnect rule as a pure function of one device's stream (no world): the
/// same rule the world's `reconnect` oracle and `imsim replay` apply. Times in ns.
@Suite struct ReconnectRuleTests {
    static let s: Int64 = 1_000_000_000
    static func ms(_ x: Int64) -> Int64 { x * 1_000_000 }

    /// connect() at 0 and the first connection opened; lost at 10 s.
    func started() -> ReconnectRule {
        var r = ReconnectRule(config: ClientConfig())
        r.input(.api(.connect(token: "t", timeLimitSeconds: 0)), inbound: [], at: 0)
        #expect(r.effects([.openConnection], at: 0).isEmpty)
        #expect(r.effects([.callback(.connectionStatus(.connected))], at: Self.ms(100)).isEmpty)
        r.input(.transport(.closed(.reset)), inbound: [], at: 10 * Self.s)
        return r
    }

    @Test func attemptsOnTheScheduleAreClean() {
        var r = started()
        // attempt 0 at once, then 0.25 s, 0.5 s after each failure (§5)
        #expect(r.effects([.openConnection], at: 10 * Self.s).isEmpty)
        r.input(.transport(.closed(.reset)), inbound: [], at: 11 * Self.s)
        #expect(r.due(at: 11 * Self.s + Self.ms(200)).isEmpty)
        #expect(r.effects([.openConnection], at: 11 * Self.s + Self.ms(250)).isEmpty)
        r.input(.transport(.closed(.reset)), inbound: [], at: 12 * Self.s)
        #expect(r.effects([.openConnection], at: 12 * Self.s + Self.ms(500)).isEmpty)
        #expect(r.due(at: 20 * Self.s).isEmpty)
    }

    /// A backoff index stuck at 0: the second attempt comes at once instead of 0.25 s later.
    @Test func stuckBackoffIndexIsTooEarly() {
        var r = started()
        #expect(r.effects([.openConnection], at: 10 * Self.s).isEmpty)
        r.input(.transport(.closed(.reset)), inbound: [], at: 11 * Self.s)
        let f = r.effects([.openConnection], at: 11 * Self.s)
        #expect(f.count == 1)
        #expect(f.first?.kind == .timing)
        #expect(f.first?.detail { "\($0)" }.contains("too early") == true)
        #expect(f.first?.detail { "\($0)" }.contains("attempt 1") == true)
    }

    /// A missing attempt: due 0.25 s after the second failure, nothing opened.
    @Test func missingAttemptIsLate() {
        var r = started()
        #expect(r.effects([.openConnection], at: 10 * Self.s).isEmpty)
        r.input(.transport(.closed(.reset)), inbound: [], at: 11 * Self.s)
        #expect(r.nextDeadline == 11 * Self.s + Self.ms(250) + ReconnectRule.lateTolerance)
        #expect(r.due(at: 11 * Self.s + Self.ms(350)).isEmpty, "within the tolerance")
        let f = r.due(at: 11 * Self.s + Self.ms(351))
        #expect(f.count == 1)
        #expect(f.first?.detail { "\($0)" }.contains("no reconnect attempt by") == true)
    }

    /// Nothing is owed in the background, after disconnect(), or after a kick read on the link.
    @Test func noAttemptOwedWhenStopped() {
        var bg = started()
        bg.input(.lifecycle(.background), inbound: [], at: 10 * Self.s)
        #expect(bg.due(at: 100 * Self.s).isEmpty)

        var off = started()
        off.input(.api(.disconnect), inbound: [], at: 10 * Self.s)
        #expect(off.due(at: 100 * Self.s).isEmpty)
        let again = off.effects([.openConnection], at: 101 * Self.s)
        #expect(again.map(\.kind) == [.stop])
        #expect(again.first?.detail { "\($0)" } == "opened a connection by itself after disconnect()")
    }

    /// A foreground while waiting restarts the schedule: an attempt is owed at once.
    @Test func foregroundOwesAnAttemptAtOnce() {
        var r = started()
        #expect(r.effects([.openConnection], at: 10 * Self.s).isEmpty)
        for i in 0..<6 {
            r.input(.transport(.closed(.reset)), inbound: [], at: (11 + Int64(i) * 20) * Self.s)
            let due = r.nextDeadline! - ReconnectRule.lateTolerance
            #expect(r.effects([.openConnection], at: due).isEmpty)
        }
        r.input(.transport(.closed(.reset)), inbound: [], at: 200 * Self.s)   // attempt 7: 16 s
        r.input(.lifecycle(.foreground), inbound: [], at: 201 * Self.s)
        let f = r.due(at: 201 * Self.s + Self.ms(101))
        #expect(f.count == 1)
        let text = f.first?.detail { "\($0)" } ?? ""
        #expect(text.contains("the app came to the foreground") && text.contains("should restart from 0"), "\(text)")
    }
}
