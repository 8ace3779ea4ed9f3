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

/// The world's rule takes the schedule from the spec (§5), not from the core's configuration: an
/// SDK whose default schedule says 3 s where §5 says 2 s (attempt 4) is late there, however the
/// core was configured (the mutation sample's `ClientAPI.swift` schedule-constant survivors).
@Suite struct ReconnectRuleDocumentedScheduleTests {
    static let s: Int64 = 1_000_000_000

    @Test func theWorldsRuleUsesTheDocumentedSchedule() {
        // §5 as the spec writes it, in ms.
        let spec: [Int64] = [0, 250, 500, 1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 64_000]
        #expect(ReconnectRule.documentedSchedule.map { $0.nanoseconds / 1_000_000 } == spec)
        // A core configured with 3 s for attempt 4 does not change the world's expectation.
        var wrong = ClientConfig()
        wrong.reconnectSchedule[4] = .seconds(3)
        var r = ReconnectRule(scenario: ClientSettings())
        r.input(.api(.connect(token: "t", timeLimitSeconds: 0)), inbound: [], at: 0)
        #expect(r.effects([.openConnection], at: 0).isEmpty)
        #expect(r.effects([.callback(.connectionStatus(.connected))], at: Self.s / 10).isEmpty)
        var t = 10 * Self.s
        // Failures 1…5: each attempt opened when the wrong core would open it.
        for i in 0..<5 {
            r.input(.transport(.closed(.reset)), inbound: [], at: t)
            let at = t + wrong.reconnectSchedule[i].nanoseconds
            if i < 4 {
                #expect(r.effects([.openConnection], at: at).isEmpty, "attempt \(i) on time")
            } else {
                // Attempt 4 is due 2 s after the failure: by 2.1 s nothing is open → late.
                let late = r.due(at: t + 2 * Self.s + ReconnectRule.lateTolerance + 1)
                #expect(late.first?.detail { "\($0)" }.contains("no reconnect attempt by") == true)
            }
            t = at + Self.s
        }
    }
}

extension ReconnectRuleTests {
    /// §5: connect() once per app lifetime. A second call while the first is in effect (the
    /// SDK ignores it) does not restart the schedule; after disconnect() a connect() does.
    /// everyday-storage --swarm seed 254: the app's own reconnect call during the SDK's CONNACK
    /// timeouts was taken for a restart, and the next attempt (0.5 s, attempt 2) called late.
    @Test func aSecondConnectWhileOneIsInEffectChangesNothing() {
        var r = started()
        #expect(r.effects([.openConnection], at: 10 * Self.s).isEmpty)
        r.input(.transport(.closed(.reset)), inbound: [], at: 11 * Self.s)
        #expect(r.effects([.openConnection], at: 11 * Self.s + Self.ms(250)).isEmpty)
        r.input(.api(.connect(token: "t", timeLimitSeconds: 0)), inbound: [], at: 12 * Self.s)
        r.input(.transport(.closed(.reset)), inbound: [], at: 13 * Self.s)
        // Attempt 2 waits 0.5 s: neither "late" at 0.1 s (a restarted schedule) nor too early.
        #expect(r.due(at: 13 * Self.s + Self.ms(200)).isEmpty)
        #expect(r.effects([.openConnection], at: 13 * Self.s + Self.ms(500)).isEmpty)

        // After disconnect() the SDK takes a new connect(): its first failure retries at once.
        var off = started()
        off.input(.api(.disconnect), inbound: [], at: 10 * Self.s)
        off.input(.api(.connect(token: "t", timeLimitSeconds: 0)), inbound: [], at: 20 * Self.s)
        #expect(off.effects([.openConnection], at: 20 * Self.s).isEmpty)
        off.input(.transport(.closed(.reset)), inbound: [], at: 21 * Self.s)
        #expect(off.nextDeadline == 21 * Self.s + ReconnectRule.lateTolerance)
        let f = off.due(at: 21 * Self.s + Self.ms(101))
        #expect(f.first?.detail { "\($0)" }.contains("attempt 0") == true)
    }
}
