import Foundation
import IMServer
import IMWire
import Testing
@testable import IMWorld

/// The chatroom oracle's re-derivation of the server's rules (ChatroomRuleModel): the offline
/// auto-kick rule (who a room message must remove, and nobody else) and the attribute limits
/// and ownership. Fed server facts by hand, so each wrong server behaviour can be staged.
@Suite struct ChatroomRuleModelTests {
    static let config = ChatroomConfig()

    /// alice and bob in "r"; bob's only session (c2) closes at t = 1000 ms.
    static func bobOffline() -> ChatroomRuleModel {
        var m = ChatroomRuleModel()
        m.sessionOpened(ConnectionID(1), device: "alice-phone")
        m.sessionOpened(ConnectionID(2), device: "bob-phone")
        m.joined(room: "r", user: "alice", device: "alice-phone")
        m.joined(room: "r", user: "bob", device: "bob-phone")
        m.sessionClosed(ConnectionID(2), user: "bob", now: 1000)
        return m
    }

    @Test func the31stMessageWithin30sMustKick() {
        var m = Self.bobOffline()
        for i in 0..<30 { #expect(m.messageProduced(room: "r", now: 1100 + Int64(i), config: Self.config, whitelist: []).isEmpty) }
        // The 31st message: the server did not remove bob.
        let p = m.messageProduced(room: "r", now: 1200, config: Self.config, whitelist: [])
        #expect(p.count == 1 && p[0].hasPrefix("bob offline since 1000 ms (31 room message(s) since) should have been removed"))
    }

    @Test func aKickTheRuleDoesNotCallForIsReported() {
        var m = Self.bobOffline()
        m.left(room: "r", user: "bob", reason: .offlineKick)
        let p = m.messageProduced(room: "r", now: 2000, config: Self.config, whitelist: [])
        #expect(p == ["bob removed by the offline rule but offline only since 1000 ms, 1 message(s)"])
        // alice is online: kicking her is wrong too.
        var n = Self.bobOffline()
        n.left(room: "r", user: "alice", reason: .offlineKick)
        #expect(n.messageProduced(room: "r", now: 2000, config: Self.config, whitelist: []) == ["alice removed by the offline rule but online"])
    }

    @Test func aKickAfter30sIsRightAndAWhitelistedMemberStays() {
        var m = Self.bobOffline()
        m.left(room: "r", user: "bob", reason: .offlineKick)
        #expect(m.messageProduced(room: "r", now: 31_000, config: Self.config, whitelist: []).isEmpty)
        // bob is gone from the model: later messages ask nothing of him.
        #expect(m.messageProduced(room: "r", now: 90_000, config: Self.config, whitelist: []).isEmpty)
        var w = Self.bobOffline()
        #expect(w.messageProduced(room: "r", now: 90_000, config: Self.config, whitelist: ["bob"]).isEmpty)
    }

    @Test func rejoiningMakesTheMemberSafeAgain() {
        var m = Self.bobOffline()
        m.sessionOpened(ConnectionID(3), device: "bob-phone")
        m.joined(room: "r", user: "bob", device: "bob-phone")
        #expect(m.messageProduced(room: "r", now: 60_000, config: Self.config, whitelist: []).isEmpty)
    }

    @Test func faqVariantStartsTheClockAtTheFirstMessage() {
        var cfg = ChatroomConfig()
        cfg.kickVariant = .faq
        var m = Self.bobOffline()
        #expect(m.messageProduced(room: "r", now: 20_000, config: cfg, whitelist: []).isEmpty)   // t1 = 20 s
        #expect(m.messageProduced(room: "r", now: 49_999, config: cfg, whitelist: []).isEmpty)
        #expect(m.messageProduced(room: "r", now: 50_000, config: cfg, whitelist: []).count == 1) // due, not kicked
    }

    @Test func keyOwnershipNeedsForce() {
        var m = ChatroomRuleModel()
        #expect(m.kvChanged(room: "r", key: "topic", user: "alice", deleted: false).isEmpty)
        m.kvRequest(room: "r", key: "topic", user: "bob", force: false)
        #expect(m.kvChanged(room: "r", key: "topic", user: "bob", deleted: false)
                == ["bob changed key \"topic\" of alice without force (23424 expected)"])
        m.kvRequest(room: "r", key: "topic", user: "bob", force: true)
        #expect(m.kvChanged(room: "r", key: "topic", user: "bob", deleted: true).isEmpty)
        // Deleted: the next writer creates it.
        #expect(m.kvChanged(room: "r", key: "topic", user: "carol", deleted: false).isEmpty)
        m.kvRequest(room: "r", key: "topic", user: "alice", force: false)
        #expect(m.kvChanged(room: "r", key: "topic", user: "alice", deleted: true).count == 1)
    }

    @Test func keyLimitsAndKeyShape() {
        var m = ChatroomRuleModel()
        for i in 0..<100 { #expect(m.kvChanged(room: "r", key: "k\(i)", user: "alice", deleted: false).isEmpty) }
        #expect(m.kvChanged(room: "r", key: "k100", user: "alice", deleted: false) == ["room holds 101 keys, more than 100 (23423 expected)"])
        #expect(m.kvChanged(room: "s", key: "bad key", user: "alice", deleted: false).count == 1)
        #expect(m.kvChanged(room: "s", key: String(repeating: "x", count: 129), user: "alice", deleted: false).count == 1)
        #expect(m.kvChanged(room: "s", key: "a+b=c_d-9", user: "alice", deleted: false).isEmpty)
    }

    @Test func afterAServerRestartNothingIsAssumed() {
        var m = Self.bobOffline()
        _ = m.kvChanged(room: "r", key: "topic", user: "alice", deleted: false)
        m.restarted()
        m.left(room: "r", user: "bob", reason: .offlineKick)   // a member from before the restart
        #expect(m.messageProduced(room: "r", now: 2000, config: Self.config, whitelist: []).isEmpty)
        m.kvRequest(room: "r", key: "topic", user: "bob", force: false)
        #expect(m.kvChanged(room: "r", key: "topic", user: "bob", deleted: false).isEmpty)
    }

    /// The world: B9.json with every switch off kicks alice by the offline rule and the server's
    /// attribute rules hold; no violation, and the kick did happen.
    @Test func theWorldsKicksFollowTheRule() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Traces/bugs/B9.json").path
        let s = try Scenario.load(json: Data(contentsOf: URL(fileURLWithPath: path))).withBugs([])
        let run = try ScenarioRun(scenario: s, seed: 1, oracles: OracleOptions(scenarioArgument: "B9.json"))
        run.run()
        #expect(run.violations.isEmpty, "\(run.violations.map(\.detail))")
        #expect(run.suite?.coverage.sorted.contains { $0.0.contains("offlineKick") && $0.1 > 0 } == true)
    }
}
