// The complete example of Docs/property-testing.md, verbatim: CI compiles and runs it, so the
// page cannot go stale. Keep the two in sync.
import IMSim
import PropertyBased
import Testing

@Suite struct MessagingTests {
    /// Two users chatting privately: a short script, random private traffic and connection resets.
    static func pair() throws -> Scenario {
        let alice = ConversationKey(.privateChat, "alice")
        let bob = ConversationKey(.privateChat, "bob")
        var s = Scenario(name: "pair", duration: .minutes(2), users: [UserSpec(id: "alice"), UserSpec(id: "bob")])
        s.script = [
            .send(at: .seconds(10), from: "alice-phone", to: bob, text: "hi bob"),
            .send(at: .seconds(12), from: "bob-phone", to: alice, text: "hi alice"),
            .on("bob-phone", at: .seconds(20), .read(alice)),
        ]
        var workload = WorkloadSpec()
        workload.privateRate = try RateValue(parsing: "2/min")
        s.workload = workload
        s.faults = FaultSpec(random: [.reset: FaultRate(rate: try RateValue(parsing: "1/min"))])
        return s
    }

    /// One seed, then assertions on the verdicts and on what each user saw.
    @Test func bobSeesAliceAndReadsIt() throws {
        let outcome = try Self.pair().run(seed: 1)
        #expect(outcome.passed, Comment(rawValue: outcome.summary))
        #expect(outcome.converged)

        let bobPhone = try #require(outcome.ledger.devices.first { $0.device == "bob-phone" })
        let chat = try #require(bobPhone.conversations.first { $0.conversation == "private:alice" })
        let first = try #require(chat.messages.first { $0.direction == "in" })
        #expect(first.from == "alice")
        #expect(chat.unread == chat.messages.filter { $0.direction == "in" && !$0.read }.count)
    }

    /// The same seed gives the same run: same digest, same ledger.
    @Test func aRunIsAFunctionOfTheSeed() throws {
        let a = try Self.pair().run(seed: 42)
        let b = try Self.pair().run(seed: 42)
        #expect(a.digest == b.digest)
        #expect(a.ledger == b.ledger)
    }

    /// A built-in scenario (or any scenario file), a range of seeds, a short window.
    @Test func quickstartSeeds1To5() throws {
        let quickstart = try Scenario.named("quickstart")   // or Scenario.named("path/to/scenario.json")
        for outcome in try quickstart.sweep(seeds: 1...5, until: .seconds(60)) {
            #expect(outcome.passed, Comment(rawValue: outcome.summary))
        }
    }

    /// A property over seeds: every oracle holds, and every message a user sent successfully is in
    /// the peer's ledger exactly once. A failing seed is shrunk and reported with its repro line.
    @Test(.shrinking) func everySentMessageArrivesOnce() async throws {
        let pair = try Self.pair()
        await propertyCheck(count: 10, input: Gen.uint64(in: 1...1_000_000)) { seed in
            let outcome = try pair.run(seed: seed)
            #expect(outcome.passed, Comment(rawValue: outcome.summary))
            for sender in outcome.ledger.devices {
                let peer = sender.user == "alice" ? "bob" : "alice"
                let received = outcome.ledger.devices.first { $0.user == peer }?.conversations
                    .first { $0.conversation == "private:\(sender.user)" }?.messages.compactMap(\.uid) ?? []
                let sent = sender.conversations.flatMap(\.messages).filter { $0.direction == "out" && $0.status != "FAILED" }
                for m in sent {
                    let copies = received.filter { $0 == m.uid }.count
                    #expect(copies == 1, "seed \(seed): \(m.uid ?? "?") from \(sender.user) arrived \(copies)× — repro: \(outcome.repro)")
                }
            }
        }
    }
}
