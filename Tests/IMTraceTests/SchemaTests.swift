import Foundation
import IMClient
import IMServer
import IMWire
import IMWorld
import SimKernel
import Testing
@testable import IMTrace
@testable import IMTraceFormat

/// Writes `events` through a world-less recorder (the same encoding path the observer methods
/// use) into an in-memory trace.
func recordedTrace(_ events: [TraceEvent], perBlock: Int = 8192, level: TraceLevel = .full, spacing: SimDuration = .milliseconds(1),
                   epoch: Int64 = Samples.epoch, format: UInt16 = TraceFormat.majorVersion) throws -> [UInt8] {
    let options = TraceRecorderOptions(level: level, writer: TraceWriterOptions(compressionLevel: 1, recordsPerBlock: perBlock,
                                                                                formatMajor: format))
    let header = try TraceHeader(seed: 9, scenarioDigest: 1, scenarioName: "samples",
                                 options: [TraceOption("epochMs", "\(epoch)")])
    let recorder = try TraceRecorder(writer: try TraceWriter(inMemory: header, options: options.writer), options: options, epochMs: epoch)
    var t = SimTime.zero + .seconds(1)
    for e in events {
        recorder.record(e, at: t)
        t += spacing
    }
    try recorder.close(finalDigest: 0xABC)
    return recorder.writer.bytes
}

func readEntries(_ bytes: [UInt8], salvage: Bool = false) throws -> [TraceEntry] {
    let r = try TraceEventReader(bytes: bytes, salvage: salvage)
    var out: [TraceEntry] = []
    while let e = try r.next() { out.append(e) }
    return out
}

func isCheckpoint(_ e: TraceEvent) -> Bool {
    if case .meta(.checkpoint) = e { return true }
    return false
}

@Suite struct SchemaTests {
    @Test func samplesCoverEveryKnownKind() {
        let covered = Set(Samples.all().map(\.kind))
        let known = Set(TraceKinds.all.map(\.kind))
        #expect(covered == known, "kinds without a sample: \(known.subtracting(covered).sorted()), unnamed kinds: \(covered.subtracting(known).sorted())")
    }

    @Test func everyRecordKindRoundTrips() throws {
        let samples = Samples.all()
        let entries = try readEntries(try recordedTrace(samples))
        // The recorder puts a checkpoint before the first record of each block.
        #expect(entries.first.map { isCheckpoint($0.event) } == true)
        let decoded = Array(entries.dropFirst())
        #expect(decoded.count == samples.count)
        for (i, (d, s)) in zip(decoded, samples).enumerated() {
            #expect(d.event == s, "sample \(i) (\(s.kindName)) decoded as \(d.event)")
            #expect(d.time == SimTime.zero + .seconds(1) + .milliseconds(Int64(i)))
        }
    }

    @Test func roundTripsAcrossSmallBlocksWithStringsRedefinedPerBlock() throws {
        let samples = Samples.all().filter { !isCheckpoint($0) }
        let bytes = try recordedTrace(samples, perBlock: 7)
        let reader = try TraceReader(bytes: bytes)
        #expect(reader.blocks.count > 20)
        let decoded = try readEntries(bytes).map(\.event).filter { !isCheckpoint($0) }
        #expect(decoded == samples)
    }

    @Test func wallTimesAreRelativeToTheEpochAndRecordTime() throws {
        // A sentTime of 0 (far from now) and one exactly "now" both round-trip.
        let far = TraceEvent.callback(device: 0, .sendResult(messageId: 1, messageUId: nil, sentTime: 0, error: nil))
        let now = TraceEvent.callback(device: 0, .sendResult(messageId: 1, messageUId: nil, sentTime: Samples.epoch + 1000, error: nil))
        let entries = try readEntries(try recordedTrace([far, now])).dropFirst()
        #expect(entries.map(\.event) == [far, now])
    }

    @Test func levelsDropTheKindsAboveThem() throws {
        let samples = Samples.all()
        for level in TraceLevel.allCases {
            let decoded = Array(try readEntries(try recordedTrace(samples, level: level)).map(\.event).dropFirst())
            let expected = samples.filter { $0.level <= level }
            #expect(decoded.map(\.kind) == expected.map(\.kind))
            #expect(decoded == expected, "level \(level)")
        }
        #expect(TraceEvent.clientInput(device: 0, .send(conversation: Samples.group, objectName: "t", content: .of("", keep: false),
                                                        pushText: nil, mentioned: false)).level == .outcomes)
        #expect(TraceEvent.clientInput(device: 0, .transportOpened).level == .full)
        #expect(TraceEvent.kernel(.heal).level == .events)
    }

    @Test func unknownKindsDecodeAsUnknownWithTheirBody() throws {
        let w = try TraceWriter(inMemory: try TraceHeader(seed: 1, scenarioDigest: 0, scenarioName: "x"))
        try w.append(kind: 999, time: .zero) { $0.raw([1, 2, 3]) }
        try w.finish(finalDigest: 0)
        let entries = try readEntries(w.bytes)
        #expect(entries.map(\.event) == [.unknown(kind: 999, body: [1, 2, 3])])
        #expect(entries[0].event.kindName == "kind.999")
    }

    @Test func malformedBodiesAreTypedErrorsNamingTheRecord() throws {
        let w = try TraceWriter(inMemory: try TraceHeader(seed: 1, scenarioDigest: 0, scenarioName: "x"))
        try w.append(kind: 1, time: .zero) { $0.uvarint(UInt64(1)) }                 // appStart d0 (device + 1): fine
        try w.append(kind: 40, time: .zero) { $0.uvarint(UInt64(0)); $0.raw([0xFF]) }  // same device; truncated varint
        try w.append(kind: 22, time: .zero) { $0.uvarint(UInt64(0)); $0.string("nope") }  // unknown close reason
        try w.append(kind: 15, time: .zero) { $0.raw([0]) }                           // heal with a trailing byte
        try w.finish(finalDigest: 0)
        let r = try TraceReader(bytes: w.bytes)
        var errors: [RecordDecodeError] = []
        var context = RecordContext()  // the block's context fields, carried from record to record
        while let rec = try r.next() {
            do { _ = try TraceEvent.decode(rec, epochMs: 0, context: &context) } catch {
                guard case .record(let e) = error else { Issue.record("unexpected \(error)"); continue }
                errors.append(e)
            }
        }
        #expect(errors.map(\.record) == [1, 2, 3])
        #expect(errors[0].reason == .truncatedVarint)
        #expect(errors[1].reason == .invalidValue(field: "close reason", value: "nope"))
        #expect(errors[2].reason == .trailingBytes(1))
    }

    @Test func contentIsDigestedUnlessKept() {
        let d = TraceContent.of("héllo", keep: false)
        let h = StableHash.fnv1a("héllo")
        #expect(d == .digest(length: 6, hash: UInt32(truncatingIfNeeded: h ^ (h >> 32))))
        #expect(TraceContent.of("héllo", keep: true).hash == d.hash)
        #expect(TraceBytes.of([1, 2, 3], keep: false) == TraceBytes(count: 3))
        #expect(TraceBytes.of([1, 2, 3], keep: true).bytes == [1, 2, 3])
    }
}
