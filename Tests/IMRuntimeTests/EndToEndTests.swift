import IMClient
import IMReplay
import IMRuntime
import IMWire
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Real runs on loopback (EndToEndHarness.swift), then every client's production capture is
/// replayed in the simulator's replayer. Real time makes the runs differ from one to the next;
/// the assertions hold whatever the timings: a faithful capture replays with no divergence, the
/// correct client loses and duplicates nothing, and B1's race window (~300 ms on bob's slow path,
/// every reconnect) is wide enough that the buggy build shows it in every run.
@Suite("Runtime end to end: server + proxies + 3 clients, captures replayed", .timeLimit(.minutes(1)))
struct RuntimeEndToEndTests {
    static func freshDir(_ name: String) -> String {
        let dir = tempPath(name)
        mkdir(dir, 0o755)
        return dir
    }

    static func replay(_ path: String, bugs: ClientBugs? = nil) throws -> ReplayReport {
        try Replayer(path: path, options: ReplayOptions(bugs: bugs)).run()
    }

    /// messageUIds the capture shows in more than one `received` callback.
    static func duplicatedInCapture(_ path: String) throws -> [String] {
        var count: [String: Int] = [:]
        for r in try CaptureReader(path: path).readAll() {
            if case .callback(.received(let m, _, _, _)) = r.event, let uid = m.messageUId { count[uid, default: 0] += 1 }
        }
        return count.filter { $0.value > 1 }.map(\.key).sorted()
    }

    @Test("correct clients: real reconnects, nothing lost or duplicated, every capture replays with no divergence and no violation")
    func correctClients() async throws {
        let dir = Self.freshDir("e2e-correct")
        let run = try await EndToEndRun.run(bobBugs: [], dir: dir)
        let bob = try #require(run.summaries["bob"])
        // The faults did their job: real reconnects on every path.
        #expect(bob.connectedCount >= 3, "bob reconnected \(bob.connectedCount - 1) times")
        #expect(run.summaries["alice"]!.connectedCount >= 2)
        #expect(run.summaries["carol"]!.connectedCount >= 2)
        #expect(run.quiesced, "every message alice and carol sent OK reached bob")
        #expect(bob.duplicates.isEmpty)
        for user in EndToEndRun.users {
            let report = try Self.replay(run.captures[user]!)
            #expect(report.divergence == nil, "\(user): \(report.text)")
            #expect(report.violations.isEmpty, "\(user): \(report.text)")
            #expect(report.outputsCompared > 50)
        }
    }

    @Test("B1 on bob: his capture shows duplicates, replay with B1 reproduces them, replay of the fixed build does not")
    func b1Reproduced() async throws {
        let dir = Self.freshDir("e2e-b1")
        let run = try await EndToEndRun.run(bobBugs: [.b1], dir: dir)
        let bob = try #require(run.summaries["bob"])
        #expect(run.quiesced)
        let shown = try Self.duplicatedInCapture(run.captures["bob"]!)
        #expect(!shown.isEmpty, "the capture shows the bug: one message notified twice")
        #expect(shown == bob.duplicates)

        let recorded = try Self.replay(run.captures["bob"]!)
        #expect(recorded.recordedBugs == ["B1"])
        #expect(recorded.divergence == nil, "\(recorded.text)")
        let reproduced = Set(recorded.violations.filter { $0.oracle == "no-duplicate" }.compactMap(\.messageUId))
        #expect(reproduced == Set(shown), "\(recorded.text)")

        let fixed = try Self.replay(run.captures["bob"]!, bugs: [])
        #expect(fixed.divergenceExpected)
        #expect(fixed.divergence != nil, "the fixed core drops the s_msg that arrives during a pull")
        #expect(fixed.violations.filter { $0.oracle == "no-duplicate" }.isEmpty, "\(fixed.text)")

        for user in ["alice", "carol"] {
            let report = try Self.replay(run.captures[user]!)
            #expect(report.divergence == nil && report.violations.isEmpty, "\(user): \(report.text)")
        }
    }
}
