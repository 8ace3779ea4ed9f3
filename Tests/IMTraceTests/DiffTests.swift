import Foundation
import IMWire
import IMWorld
import SimKernel
import Testing
@testable import IMTrace
@testable import IMTraceFormat

func traceFrom(_ events: [(TraceEvent, SimTime)], perBlock: Int = 8192, level: Int32 = 1) throws -> [UInt8] {
    let options = TraceRecorderOptions(writer: TraceWriterOptions(compressionLevel: level, recordsPerBlock: perBlock))
    let header = try TraceHeader(seed: 1, scenarioDigest: 2, scenarioName: "flow", options: [TraceOption("epochMs", "\(Flow.epoch)")])
    let recorder = try TraceRecorder(writer: try TraceWriter(inMemory: header, options: options.writer), options: options, epochMs: Flow.epoch)
    for (e, t) in events { recorder.record(e, at: t) }
    try recorder.close(finalDigest: 3)
    return recorder.writer.bytes
}

func diff(_ a: [UInt8], _ b: [UInt8], context: Int = 3) throws -> TraceDiff {
    try TraceDiff.compare({ () throws(TraceError) in try TraceEventReader(bytes: a) },
                          { () throws(TraceError) in try TraceEventReader(bytes: b) }, context: context)
}

func ledgerRecord(unread: Int) -> TraceEvent {
    let json = """
    {"scenario":"flow","seed":1,"devices":[{"device":"bob-phone","user":"bob","connection":["CONNECTING","CONNECTED"],
     "conversations":[{"conversation":"private:alice","unread":\(unread),"messages":[]}]}]}
    """
    return .meta(.ledger(part: 0, parts: 1, json: Array(json.utf8)))
}

@Suite struct DiffTests {
    @Test func identicalTracesCompareEqualWhateverTheirBlocksAndLevels() throws {
        let events = Flow.events()
        let d = try diff(try traceFrom(events, perBlock: 8192, level: 1), try traceFrom(events, perBlock: 3, level: 9))
        #expect(d.isIdentical)
        #expect(d.divergence == nil)
        #expect(d.recordsCompared == UInt64(events.count))
        #expect(d.eventsCompared == 7)
        #expect(d.text(labelA: "a", labelB: "b").contains("records: identical (\(events.count) records, 7 events)"))
    }

    @Test func findsTheOneChangedRecordWithContextOnBothSides() throws {
        let events = Flow.events()
        let k = events.firstIndex { if case .callback(_, .received) = $0.0 { true } else { false } }!
        var changed = events
        guard case .callback(let d, .received(let m, _, let off, let pkg)) = changed[k].0 else { fatalError() }
        changed[k].0 = .callback(device: d, .received(m, left: 7, offline: off, hasPackage: pkg))
        let result = try diff(try traceFrom(events), try traceFrom(changed))
        #expect(!result.isIdentical)
        let div = try #require(result.divergence)
        // Record indexes count the checkpoint at 0.
        #expect(div.recordA == UInt64(k + 1))
        #expect(div.recordB == UInt64(k + 1))
        #expect(div.eventIndex == 5)
        #expect(div.time == SimTime.zero + .milliseconds(5_130))
        #expect(result.recordsCompared == UInt64(k))
        #expect(div.context.count == 3)
        #expect(div.context.last!.contains("client.stored"))
        #expect(div.a.count == 4 && div.b.count == 4)
        #expect(div.a[0].hasPrefix("A> ") && div.a[0].contains("cb.received") && div.a[0].contains("left=0"))
        #expect(div.b[0].hasPrefix("B> ") && div.b[0].contains("left=7"))
        #expect(div.a[1].contains("out.send") && div.b[1].contains("out.send"))
        // Aligned: the same columns on both sides.
        #expect(div.a[0].dropFirst(4).prefix(60) == div.b[0].dropFirst(4).prefix(60))
        #expect(div.context[0].prefix(4) == "    " && div.a[1].prefix(4) == "A   ")
        let text = result.text(labelA: "a.imtrace", labelB: "b.imtrace")
        #expect(text.contains("first difference at record \(k + 1) of A, event 5, t=5.130000000s (after \(k) identical records"))
    }

    @Test func aMissingRecordShowsEachSidesNext() throws {
        let events = Flow.events()
        let k = events.firstIndex { if case .serverEvent(.fannedOut) = $0.0 { true } else { false } }!
        var shorter = events
        shorter.remove(at: k)
        let div = try #require(try diff(try traceFrom(events), try traceFrom(shorter)).divergence)
        #expect(div.a[0].contains("srv.fannedOut"))
        #expect(div.b[0].contains("srv.out.send"))
        // A trace that is a prefix of the other: "(end of trace)".
        let prefix = Array(events.prefix(10))
        let d2 = try #require(try diff(try traceFrom(events), try traceFrom(prefix)).divergence)
        #expect(d2.recordB == nil)
        #expect(d2.b == ["B  (end of trace)"])
    }

    @Test func timeAloneIsADifference() throws {
        var events = Flow.events()
        let k = events.count - 1
        events[k].1 = events[k].1 + .nanoseconds(1)
        let div = try #require(try diff(try traceFrom(Flow.events()), try traceFrom(events)).divergence)
        #expect(div.recordA == UInt64(k + 1))
    }

    @Test func theLedgerDiffSaysWhatUsersSawDifferently() throws {
        let end = SimTime.zero + .seconds(10)
        let a = try traceFrom(Flow.events() + [(ledgerRecord(unread: 1), end)])
        let b = try traceFrom(Flow.events() + [(ledgerRecord(unread: 2), end)])
        let d = try diff(a, b)
        #expect(d.divergence?.recordA == UInt64(Flow.events().count + 1))
        #expect(d.ledgerDifferences == ["~ bob-phone private:alice unread 1 vs 2"])
        #expect(d.text(labelA: "a", labelB: "b").contains("ledger: 1 difference(s) in what users saw:"))
        // One side without a ledger: said, and not identical.
        let c = try diff(a, try traceFrom(Flow.events()))
        #expect(c.ledgerNote?.contains("B: the trace has no ledger") == true)
    }

    @Test func twoRecordedRunsWithDifferentSeedsDivergeAndSayWhy() throws {
        let scenario = try smallScenario()
        let a = try recordRun(scenario, seed: 5).bytes
        let b = try recordRun(scenario, seed: 6).bytes
        let d = try diff(a, b)
        #expect(!d.isIdentical)
        #expect(d.headerDifferences == ["seed 5 vs 6"])
        #expect(d.divergence != nil)
        #expect(d.digestA != d.digestB)
        let same = try diff(a, try recordRun(scenario, seed: 5).bytes)
        #expect(same.isIdentical)
        #expect(same.ledgerNote == nil && same.ledgerDifferences.isEmpty)
    }
}
