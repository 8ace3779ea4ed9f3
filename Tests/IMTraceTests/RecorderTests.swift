import Foundation
import IMClient
import IMServer
import IMStore
import IMWire
import IMWorld
import SimKernel
import Testing
@testable import IMTrace
@testable import IMTraceFormat

/// A small world: two users, three devices, a script with sends, lifecycle changes and a fault.
func smallScenario(name: String = "small") throws -> Scenario {
    let json = """
    {"name": "\(name)", "duration": "2m", "seed": 5,
     "users": [{"id": "alice", "devices": [{"id": "alice-phone", "platform": "mobile", "clockOffset": "-2s"},
                                           {"id": "alice-web", "platform": "web"}]},
               {"id": "bob", "devices": [{"id": "bob-phone", "platform": "mobile", "clockDriftPpm": 300}]}],
     "groups": [{"id": "pair", "members": ["alice", "bob"]}],
     "script": [
       {"at": "5s", "device": "alice-phone", "action": "send", "to": "private:bob", "text": "hi bob"},
       {"at": "6s", "device": "bob-phone", "action": "send", "to": "group:pair", "text": "hi all", "count": 3, "interval": "1s"},
       {"at": "20s", "device": "bob-phone", "action": "background"},
       {"at": "40s", "device": "bob-phone", "action": "foreground"}
     ],
     "liveness": {"healAt": "1m", "deadline": "30s"}}
    """
    return try Scenario.load(json: Data(json.utf8))
}

func recordRun(_ scenario: Scenario, seed: UInt64 = 5, until: SimDuration? = nil, options: TraceRecorderOptions = .init())
    throws -> (bytes: [UInt8], run: ScenarioRun) {
    let run = try ScenarioRun(scenario: scenario, seed: seed, oracles: OracleOptions(scenarioArgument: scenario.name))
    let recorder = try TraceRecorder(inMemory: scenario, seed: seed, options: options)
    recorder.attach(to: run)
    let reason = run.run(until: until.map { SimTime.zero + $0 })
    try recorder.finish(stopReason: reason.description)
    return (recorder.writer.bytes, run)
}

@Suite struct RecorderTests {
    /// The recorder's typed write paths (which skip `TraceEvent`) use the levels of
    /// `TraceEvent.level`: a run recorded at each level holds exactly the full trace's records
    /// of that level or below, in the same order.
    @Test func eachLevelRecordsExactlyTheFullTracesEventsOfItsLevel() throws {
        func events(_ level: TraceLevel) throws -> [TraceEvent] {
            let (bytes, _) = try recordRun(try smallScenario(), options: TraceRecorderOptions(level: level))
            return try readEntries(bytes).map(\.event).filter { !isCheckpoint($0) }
        }
        let full = try events(.full)
        #expect(Set(full.map(\.kind)).count > 20, "the small run exercises many kinds")
        for level in [TraceLevel.events, .outcomes] {
            let got = try events(level)
            #expect(got.allSatisfy { $0.level <= level })
            #expect(got == full.filter { $0.level <= level }, "level \(level)")
        }
    }

    /// The recorder writes its frequent records straight from the world's values; re-recording
    /// the decoded trace through `TraceEvent.encode` (the record types' own path) must give the
    /// same file, byte for byte, with and without kept content.
    @Test func directWritePathsMatchTheRecordTypes() throws {
        for keep in [false, true] {
            let options = TraceRecorderOptions(keepContent: keep, writer: TraceWriterOptions(recordsPerBlock: 64))
            let (bytes, _) = try recordRun(try smallScenario(), options: options)
            let reader = try TraceEventReader(bytes: bytes)
            let w = try TraceWriter(inMemory: reader.header, options: options.writer)
            var kinds = Set<UInt16>()
            while let e = try reader.next() {
                kinds.insert(e.event.kind)
                try w.append(kind: e.event.kind, time: e.time) { e.event.encode(into: &$0, epochMs: reader.epochMs) }
            }
            try w.finish(finalDigest: try TraceReader(bytes: bytes).footer?.finalDigest ?? 0)
            #expect(w.bytes == bytes, "keepContent \(keep)")
            // Every direct path ran: deliveries both ways, client timers, byte inputs, sends, timer effects.
            #expect(kinds.isSuperset(of: [3, 4, 9, 21, 27, 29, 30, 81, 84, 86, 87]), "\(kinds.sorted())")
        }
    }

    @Test func recordsEveryKernelEventWithItsIndexAndTheRunsEnd() throws {
        let (bytes, run) = try recordRun(try smallScenario())
        let entries = try readEntries(bytes)
        let kernel = entries.filter { if case .kernel = $0.event { true } else { false } }
        let dispatched = run.world.sim.counters.eventsDispatched
        #expect(dispatched > 10)
        #expect(UInt64(kernel.count) == dispatched)
        #expect(kernel.map(\.eventIndex) == (0..<dispatched).map { Optional($0) })
        // Devices are named up front.
        let devices = entries.compactMap { e -> String? in if case .meta(.device(_, let id, _, _, _)) = e.event { id } else { nil } }
        #expect(devices == ["alice-phone", "alice-web", "bob-phone"])
        // The run end, the footer and the world agree on the digest.
        let reader = try TraceReader(bytes: bytes)
        #expect(reader.footer?.finalDigest == run.world.sim.digest.value)
        guard case .meta(.runEnd(_, let events, let complete, let digest)) = entries.last?.event else {
            Issue.record("last record is not runEnd: \(String(describing: entries.last?.event))")
            return
        }
        #expect(events == dispatched)
        #expect(complete == (run.world.phase == .finished))
        #expect(digest == run.world.sim.digest.value)
        // The header says what run this is.
        #expect(reader.header.seed == 5)
        #expect(reader.header.scenarioDigest == run.world.scenario.digest)
        #expect(reader.header.option("epochMs") == "\(Scenario.defaultEpochMs)")
        #expect(reader.header.option("traceLevel") == "3")
        // Script sends reached the (stubbed) client core as API calls with digested content.
        let sends = entries.filter { if case .clientInput(_, .send) = $0.event { true } else { false } }
        #expect(sends.count == 4)
        if case .clientInput(let d, .send(let c, _, let content, _, _)) = sends[0].event {
            #expect(d == 0)
            #expect(c == ConversationKey(.privateChat, "bob"))
            guard case .digest(let n, _) = content else { Issue.record("content kept without --keep-content"); return }
            #expect(n > 0)
        }
        // Lifecycle notes for bob's background/foreground.
        let bob = entries.filter { if case .world(.lifecycle(2, let c)) = $0.event { c == .background || c == .foreground } else { false } }
        #expect(bob.map(\.time) == [SimTime.zero + .seconds(20), SimTime.zero + .seconds(40)])
    }

    @Test func theSameRunRecordsTheSameBytes() throws {
        let a = try recordRun(try smallScenario()).bytes
        let b = try recordRun(try smallScenario()).bytes
        #expect(a == b)
        let c = try recordRun(try smallScenario(), seed: 6).bytes
        #expect(a != c)
    }

    @Test func theLedgerIsStoredAndReadBack() throws {
        let (bytes, run) = try recordRun(try smallScenario(), options: TraceRecorderOptions(ledgerPartBytes: 50))
        let found = try TraceLedgerView.read(try TraceReader(bytes: bytes))
        #expect(found.ledger == run.ledger())
        #expect(found.ledger.devices.count == 3)
        let parts = try readEntries(bytes).filter { if case .meta(.ledger) = $0.event { true } else { false } }
        #expect(parts.count > 3)  // split at 50 bytes
    }

    @Test func anUnfinishedTraceHasNoLedgerAndSaysWhy() throws {
        let scenario = try smallScenario()
        let run = try ScenarioRun(scenario: scenario, seed: 5)
        let recorder = try TraceRecorder(inMemory: scenario, seed: 5, options: TraceRecorderOptions(writer: TraceWriterOptions(recordsPerBlock: 8)))
        recorder.attach(to: run)
        run.run(until: SimTime.zero + .seconds(10))
        try recorder.flush()  // as far as a killed run gets
        let reader = try TraceReader(bytes: recorder.writer.bytes, mode: .salvage)
        #expect(throws: TraceViewError.noLedger(reason: "the trace is unfinished (the run was killed or crashed before it ended)")) {
            try TraceLedgerView.read(reader)
        }
    }

    @Test func observerCallsBecomeRecords() throws {
        let scenario = try smallScenario()
        for keep in [false, true] {
            let world = try World(scenario: scenario, seed: 5)
            let recorder = try TraceRecorder(inMemory: scenario, seed: 5, options: TraceRecorderOptions(keepContent: keep))
            recorder.attach(to: world)
            let conv = ConversationKey(.privateChat, "alice")
            let row = StoredMessage(messageId: 4, messageUId: "BK00-0000-0000-0009", conversation: conv, senderUserId: "alice",
                                    direction: .receive, objectName: "RC:TxtMsg", content: "{\"content\":\"hi\"}", extra: nil,
                                    sentTime: world.serverMs - 30, receivedTime: world.localMs(ofDevice: 2), sentStatus: .received,
                                    receivedStatus: [], flags: MessageFlags(persistent: .isCounted), clientUniqueId: nil)
            let wire: [UInt8] = [0x32, 0x05, 0x01, 0x02, 0x03]
            recorder.world(world, device: 2, input: .transport(.bytes(wire)), localMs: world.localMs(ofDevice: 2))
            recorder.world(world, device: 2, applied: AppliedClientEffects([
                .note(.stored(messageId: 4, messageUId: row.messageUId, conversation: conv, sentTime: row.sentTime, direction: .receive, isNew: true)),
                .callback(.received(row, left: 0, offline: false, hasPackage: false)),
                .send([0x40, 0x02, 0x00, 0x01], frames: [OutgoingFrame(type: .puback, messageId: 1)]),
                .setTimer(.heartbeat, after: .seconds(30)), .cancelTimer(.pingTimeout),
                .closeConnection, .openConnection, .openConnection,
            ], openedConnections: [ConnectionID(7), ConnectionID(9)]))
            recorder.world(world, serverInput: .bytes(ConnectionID(0), wire), serverMs: world.serverMs)
            recorder.world(world, serverApplied: AppliedServerEffects([
                .send(ConnectionID(0), wire, frames: [FrameSummary(type: .publish, messageId: 1, dup: false, topic: "s_msg")]),
                .event(.fannedOut(messageUId: "BK00-0000-0000-0009", userId: "bob", deviceId: "bob-phone", ConnectionID(0), via: .direct)),
                .setTimer(.offlineExpiry, after: .hours(1)), .close(ConnectionID(0)),
            ]))
            recorder.world(world, note: .clockStep(device: 1, byMs: 500))
            try recorder.close(finalDigest: 1)
            let got = try readEntries(recorder.writer.bytes).map(\.event).filter {
                if case .meta = $0 { false } else { true }
            }
            let expected: [TraceEvent] = [
                .clientInput(device: 2, .wallClock(offsetMs: 0)),
                .clientInput(device: 2, .transportBytes(.of(wire, keep: keep))),
                .clientNote(device: 2, .stored(messageId: 4, messageUId: row.messageUId, conversation: conv, sentTime: row.sentTime,
                                               direction: .receive, isNew: true)),
                .callback(device: 2, .received(TraceMessage(row, keepContent: keep), left: 0, offline: false, hasPackage: false)),
                .clientEffect(device: 2, .send(.of([0x40, 0x02, 0x00, 0x01], keep: keep), frames: [OutgoingFrame(type: .puback, messageId: 1)])),
                .clientEffect(device: 2, .setTimer(.heartbeat, after: .seconds(30))), .clientEffect(device: 2, .cancelTimer(.pingTimeout)),
                .clientEffect(device: 2, .closeConnection), .clientEffect(device: 2, .openConnection(ConnectionID(7))),
                .clientEffect(device: 2, .openConnection(ConnectionID(9))),
                .serverInput(.bytes(ConnectionID(0), .of(wire, keep: keep))),
                .serverEffect(.send(ConnectionID(0), .of(wire, keep: keep), frames: [FrameSummary(type: .publish, messageId: 1, dup: false, topic: "s_msg")])),
                .serverEvent(.fannedOut(messageUId: "BK00-0000-0000-0009", userId: "bob", deviceId: "bob-phone", ConnectionID(0), via: .direct)),
                .serverEffect(.setTimer(.offlineExpiry, after: .hours(1))), .serverEffect(.close(ConnectionID(0))),
                .world(.clockStep(device: 1, byMs: 500)),
            ]
            #expect(got == expected, "keepContent \(keep)")
            if case .callback(_, .received(let m, _, _, _)) = got[3] {
                #expect(m.content == (keep ? .text("{\"content\":\"hi\"}") : .digest(length: 16, hash: TraceContent.hash32("{\"content\":\"hi\"}".utf8))))
            }
        }
    }

    @Test func violationsAreRecordedWhenReported() throws {
        let scenario = try smallScenario()
        var o = OracleOptions(scenarioArgument: "small")
        o.stopAtFirstViolation = false
        let run = try ScenarioRun(scenario: scenario, seed: 5, oracles: o)
        let recorder = try TraceRecorder(inMemory: scenario, seed: 5)
        recorder.attach(to: run)
        run.run(until: SimTime.zero + .seconds(7))
        run.suite!.report("order", device: 1, conversation: ConversationKey(.group, "pair"), "out of order (test)")
        try recorder.finish(stopReason: "test")
        let recorded = try readEntries(recorder.writer.bytes).compactMap { e -> Violation? in
            if case .meta(.violation(let v)) = e.event { v } else { nil }
        }
        #expect(recorded == run.violations)
        #expect(recorded.count == 1)
        #expect(recorded.first?.device == "alice-web")
    }

    @Test func salvagedBlocksStillNumberTheirKernelEvents() throws {
        let options = TraceRecorderOptions(writer: TraceWriterOptions(compressionLevel: 1, recordsPerBlock: 8))
        let (bytes, _) = try recordRun(try smallScenario(), options: options)
        let full = try readEntries(bytes)
        let reader = try TraceReader(bytes: bytes)
        #expect(reader.blocks.count > 5)
        // Damage block 2: its records are lost, the numbering after it resumes at block 3's checkpoint.
        var damaged = bytes
        let b2 = reader.blocks[2]
        damaged[b2.offset + TraceFormat.blockHeaderSize + 3] ^= 0x5A
        let salvaged = try readEntries(damaged, salvage: true)
        let lost = b2.firstRecordIndex..<(b2.firstRecordIndex + UInt64(b2.recordCount))
        #expect(salvaged.count == full.count - b2.recordCount)
        let byIndex = Dictionary(uniqueKeysWithValues: full.map { ($0.index, $0) })
        for e in salvaged {
            #expect(!lost.contains(e.index))
            #expect(e.event == byIndex[e.index]?.event)
            #expect(e.eventIndex == byIndex[e.index]?.eventIndex, "record \(e.index)")
        }
    }
}
