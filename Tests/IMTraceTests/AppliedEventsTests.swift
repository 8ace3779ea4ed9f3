import Foundation
import IMClient
import IMServer
import IMWire
import Testing
@testable import IMTrace
@testable import IMTraceFormat
import IMWorld
import SimKernel

/// The world publishes a core's effects after applying them (issue 29): observers read the
/// connection ids the world assigned, a drop for everyone is one event, and the order in which
/// observers were added decides neither the oracles' verdicts nor the trace bytes.
@Suite struct AppliedEventsTests {
    /// Everything a run's observers produced: verdicts, coverage, trace bytes.
    struct Outcome: Equatable {
        var violations: [Violation]
        var coverage: [String: Int]
        var trace: [UInt8]
        var digest: UInt64
    }

    static func b13() throws -> Scenario {
        try Scenario.load(json: Data(contentsOf: URL(fileURLWithPath: repositoryFile("Traces/bugs/B13.json"))))
    }

    /// One run with the oracle suite, a trace recorder and a watcher, added in `order`.
    static func run(_ scenario: Scenario, seed: UInt64, suiteFirst: Bool) throws -> Outcome {
        let world = try World(scenario: scenario, seed: seed)
        var o = OracleOptions(scenarioArgument: scenario.name)
        o.stopAtFirstViolation = false
        let suite = OracleSuite(options: o)
        let recorder = try TraceRecorder(inMemory: scenario, seed: seed, options: TraceRecorderOptions().singleThreaded)
        let watcher = ConnectionWatcher()
        if suiteFirst {
            suite.attach(to: world)
            recorder.attach(to: world, suite: suite)
            world.addObserver(watcher)
        } else {
            world.addObserver(watcher)
            recorder.attach(to: world, suite: suite)
            suite.attach(to: world)
        }
        world.run()
        try recorder.finish(stopReason: "test")
        #expect(watcher.problems.isEmpty, "\(watcher.problems.prefix(3))")
        return Outcome(violations: suite.violations, coverage: suite.coverage.counts, trace: recorder.writer.bytes,
                       digest: world.sim.digest.value)
    }

    /// Reverse registration order: same verdicts, coverage, digest and trace bytes. (Before the
    /// stages, a recorder added first wrote a violation after the records of the fact that caused
    /// it, and oracles added before the suite read its message paths one fact late.)
    @Test(arguments: [("B13", UInt64(1)), ("quickstart", UInt64(3))])
    func observerOrderDecidesNothing(_ name: String, _ seed: UInt64) throws {
        let scenario = name == "B13" ? try Self.b13() : try Scenario.load(pathOrName: name).0
        let a = try Self.run(scenario, seed: seed, suiteFirst: true)
        let b = try Self.run(scenario, seed: seed, suiteFirst: false)
        if name == "B13" { #expect(!a.violations.isEmpty) }   // the case where order used to matter
        #expect(a.violations == b.violations)
        #expect(a.coverage == b.coverage)
        #expect(a.digest == b.digest)
        #expect(a.trace == b.trace)
    }

    /// A quota drop is one server event (`messageAccepted` with `droppedForEveryone`); the trace
    /// still holds its two records, `messageAccepted` then `dropped`, as trace format 1 always has.
    @Test func aDropForEveryoneIsOneEventAndTwoRecords() throws {
        let scenario = try Self.b13()
        let world = try World(scenario: scenario, seed: 1)
        let events = ServerEventWatcher()
        world.addObserver(events)
        let recorder = try TraceRecorder(inMemory: scenario, seed: 1, options: TraceRecorderOptions().singleThreaded)
        recorder.attach(to: world)
        world.run()
        try recorder.finish(stopReason: "test")
        let dropped = events.accepted.filter { $0.droppedForEveryone != nil }
        #expect(dropped.map(\.droppedForEveryone) == [.chatroomQuota])   // B13: the second text
        #expect(!events.dropsOfAcceptedMessagesForEveryone)
        let records = try readEntries(recorder.writer.bytes).map(\.event).filter { if case .meta = $0 { false } else { true } }
        for m in dropped {
            let i = try #require(records.firstIndex {
                if case .serverEvent(.messageAccepted(let a)) = $0 { a.messageUId == m.messageUId } else { false }
            })
            guard case .serverEvent(.messageAccepted(let a)) = records[i] else { return }
            #expect(a.droppedForEveryone == nil)
            #expect(records[i + 1] == .serverEvent(.dropped(messageUId: m.messageUId, conversation: m.conversation, userId: nil,
                                                            reason: .chatroomQuota)))
        }
    }
}

/// Checks the connection ids of applied `openConnection` effects against the world and its notes.
final class ConnectionWatcher: WorldObserver {
    var owner: [UInt64: Int] = [:]
    var problems: [String] = []

    func world(_ world: World, device d: Int, applied effects: AppliedClientEffects) {
        let opens = effects.filter { if case .openConnection = $0 { true } else { false } }.count
        if opens != effects.openedConnections.count { problems.append("\(opens) opens, \(effects.openedConnections.count) ids") }
        for c in effects.openedConnections {
            if owner[c.raw] != nil { problems.append("connection \(c.raw) opened twice") }
            owner[c.raw] = d
            if world.device(ofConnection: c) != d { problems.append("connection \(c.raw) is not device \(d)'s") }
        }
    }

    func world(_ world: World, note: WorldNote) {
        switch note {
        case .connectionOpened(let c, let d), .connectionRefused(let c, let d), .connectTimedOut(let c, let d):
            if owner[c.raw] != d { problems.append("\(note) names a connection device \(d) did not open") }
        default:
            break
        }
    }
}

final class ServerEventWatcher: WorldObserver {
    var accepted: [AcceptedMessage] = []
    /// A `dropped` event for everyone that names a messageUId (the old second event of a silent drop).
    var dropsOfAcceptedMessagesForEveryone = false

    func world(_ world: World, serverApplied effects: AppliedServerEffects) {
        for case .event(let e) in effects {
            switch e {
            case .messageAccepted(let m): accepted.append(m)
            case .dropped(_?, _, nil, _): dropsOfAcceptedMessagesForEveryone = true
            default: break
            }
        }
    }
}
