import IMClient
import IMWire
import SimKernel
import Testing
@testable import IMWorld

/// Lateness after a connection the SDK gave up (a CONNACK or ping timeout) is judged again. The
/// 24 "late" reports of everyday 1–600 (e.g. seed 533, alice-phone at 369.279 s) were the rule's:
/// iOS had suspended the SDK in the background (status unconnected — nothing owed), the app came
/// to the foreground and the SDK resumed at once with the restarted schedule's first attempt
/// (`schedule[0]`, 0 s); that attempt's CONNACK timed out and the SDK waited `schedule[1]`
/// (250 ms), as §5 says. The rule had restarted its count without counting that first attempt
/// and owed one at once. Times in ns.
@Suite struct ReconnectQuietRestartTests {
    static let s: Int64 = 1_000_000_000
    static func ms(_ x: Int64) -> Int64 { x * 1_000_000 }

    /// Connected at 0.1 s, background at 10 s, suspended (unconnected) at 130 s, foreground at
    /// 200 s and the SDK opens at once; that attempt is given up at 205 s (no CONNACK).
    func resumedAndGivenUp() -> ReconnectRule {
        var r = ReconnectRule(config: ClientConfig())
        r.input(.api(.connect(token: "t", timeLimitSeconds: 0)), inbound: [], at: 0)
        #expect(r.effects([.openConnection], at: 0).isEmpty)
        #expect(r.effects([.callback(.connectionStatus(.connected))], at: Self.ms(100)).isEmpty)
        r.input(.lifecycle(.background), inbound: [], at: 10 * Self.s)
        #expect(r.effects([.closeConnection, .callback(.connectionStatus(.unconnected))], at: 130 * Self.s).isEmpty)
        r.input(.lifecycle(.foreground), inbound: [], at: 200 * Self.s)
        #expect(r.effects([.callback(.connectionStatus(.connecting)), .openConnection], at: 200 * Self.s).isEmpty)
        #expect(r.effects([.closeConnection], at: 205 * Self.s).isEmpty)
        return r
    }

    @Test func theAttemptAfterTheResumedOneWaitsSchedule1() {
        var r = resumedAndGivenUp()
        #expect(r.nextDeadline == 205 * Self.s + Self.ms(250) + ReconnectRule.lateTolerance)
        #expect(r.due(at: 205 * Self.s + Self.ms(200)).isEmpty)
        #expect(r.effects([.openConnection], at: 205 * Self.s + Self.ms(250)).isEmpty)
        #expect(r.due(at: 300 * Self.s).isEmpty)
    }

    /// The same stream, the SDK never trying again: late (the check the fix keeps).
    @Test func noAttemptAfterTheGivenUpOneIsLate() {
        var r = resumedAndGivenUp()
        let f = r.due(at: 205 * Self.s + Self.ms(351))
        #expect(f.count == 1)
        #expect(f.first?.detail { "\($0)" }.contains("given up") == true)
        #expect(f.first?.detail { "\($0)" }.contains("attempt 1 after 250ms") == true)
    }

    /// A backoff index stuck at 0 after the resumed attempt: the next one comes at once — too early.
    @Test func anAttemptAtOnceAfterTheGivenUpOneIsTooEarly() {
        var r = resumedAndGivenUp()
        let f = r.effects([.openConnection], at: 205 * Self.s)
        #expect(f.count == 1)
        #expect(f.first?.detail { "\($0)" }.contains("too early") == true)
    }
}
