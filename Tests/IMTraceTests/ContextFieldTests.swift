import Foundation
import IMServer
import IMWire
import SimKernel
import Testing
@testable import IMTrace
@testable import IMTraceFormat

/// Format 2's context fields (Docs/trace-format.md, "Context fields"): device, connection,
/// messageUId and a message's content coded against the block's earlier records; format 1 files
/// still read, and a format 1 writer is kept for older readers.
@Suite struct ContextFieldTests {
    private func run(format: UInt16, keep: Bool = false, perBlock: Int = 8192, maxBlockBytes: Int = 1 << 20) throws -> [UInt8] {
        let options = TraceRecorderOptions(keepContent: keep, writer: TraceWriterOptions(recordsPerBlock: perBlock, maxBlockBytes: maxBlockBytes,
                                                                                         formatMajor: format))
        return try recordRun(try smallScenario(), options: options).bytes
    }

    /// The same run written as format 1 and format 2 decodes to the same records (every kind the
    /// run writes round-trips through the context fields), and format 2 is smaller.
    @Test func formatsOneAndTwoOfTheSameRunDecodeAlike() throws {
        for keep in [false, true] {
            let v1 = try run(format: 1, keep: keep), v2 = try run(format: 2, keep: keep)
            #expect(try TraceReader(bytes: v1).header.majorVersion == 1)
            #expect(try TraceReader(bytes: v2).header.majorVersion == 2)
            let e1 = try readEntries(v1), e2 = try readEntries(v2)
            #expect(e1.count == e2.count)
            #expect(e1.map(\.event) == e2.map(\.event), "keepContent \(keep)")
            #expect(e1.map(\.time) == e2.map(\.time))
            #expect(e1.map(\.eventIndex) == e2.map(\.eventIndex))
            #expect(v2.count < v1.count, "format 2 \(v2.count) bytes, format 1 \(v1.count)")
        }
    }

    /// Small blocks reset the context often; it must restart cleanly at every block.
    @Test func contextRestartsAtEveryBlock() throws {
        let reference = try readEntries(try run(format: 2)).map(\.event).filter { !isCheckpoint($0) }
        for perBlock in [1, 2, 7] {
            let bytes = try run(format: 2, perBlock: perBlock)
            #expect(try TraceReader(bytes: bytes).blocks.count >= reference.count / perBlock)
            #expect(try readEntries(bytes).map(\.event).filter { !isCheckpoint($0) } == reference, "\(perBlock) records/block")
        }
    }

    /// A record that overflows `maxBlockBytes` is encoded again as the next block's first record
    /// (its context fields relative to the new block), not copied.
    @Test func aRecordMovedToTheNextBlockIsEncodedAfresh() throws {
        let header = try TraceHeader(seed: 1, scenarioDigest: 0, scenarioName: "move", options: [TraceOption("epochMs", "\(Samples.epoch)")])
        let options = TraceRecorderOptions(keepContent: true, writer: TraceWriterOptions(recordsPerBlock: 1000, maxBlockBytes: 4096))
        let r = try TraceRecorder(writer: try TraceWriter(inMemory: header, options: options.writer), options: options, epochMs: Samples.epoch)
        var events: [TraceEvent] = []
        for i in 0..<60 {
            let text = String(repeating: "x", count: 300 + i)
            events.append(.kernel(.deliver(ConnectionID(UInt64(i % 3)), device: i % 2, toServer: false)))
            events.append(.clientInput(device: i % 2, .send(conversation: Samples.group, objectName: "RC:TxtMsg", content: .text(text),
                                                            pushText: nil, mentioned: false)))
            events.append(.serverEvent(.fannedOut(messageUId: "uid-\(i / 2)", userId: "bob", deviceId: "bob-phone",
                                                  ConnectionID(UInt64(i % 3)), via: .direct)))
        }
        for (i, e) in events.enumerated() { r.record(e, at: SimTime.zero + .milliseconds(Int64(i))) }
        try r.close(finalDigest: 0)
        let bytes = r.writer.bytes
        let reader = try TraceReader(bytes: bytes)
        #expect(reader.blocks.count > 3)
        // Some block starts with a moved record rather than the recorder's checkpoint.
        var movedStarts = 0
        for b in reader.blocks {
            let fresh = try TraceReader(bytes: bytes)
            fresh.seek(toBlockAt: b.number)
            if let first = try fresh.next(), first.kind != 192 { movedStarts += 1 }
        }
        #expect(movedStarts > 0)
        #expect(try readEntries(bytes).map(\.event).filter { !isCheckpoint($0) } == events)
    }

    /// A reader positioned inside a block (seek) rebuilds the context from the block's earlier
    /// records: every record decodes as in a sequential read.
    @Test func seekingIntoABlockRebuildsTheContext() throws {
        let bytes = try run(format: 2, perBlock: 200)
        let all = try readEntries(bytes)
        #expect(all.count > 340)
        for index in [0, 1, 57, 199, 200, 201, 333, all.count - 1] {
            let raw = try TraceReader(bytes: bytes)
            #expect(try raw.seek(toRecord: UInt64(index)))
            let reader = TraceEventReader(reader: raw)
            let e = try #require(try reader.next())
            #expect(e.index == UInt64(index))
            #expect(e.event == all[index].event, "record \(index)")
        }
    }

    /// Group members' copies of a message carry the digest its `srv.accepted` wrote: one bit
    /// instead of 5–6 bytes each; a different digest for the same uid is written in full.
    @Test func aMessagesContentDigestIsWrittenOncePerBlock() throws {
        let accepted = Samples.accepted
        let digest = TraceContent.digest(length: accepted.contentLength,
                                         hash: UInt32(truncatingIfNeeded: accepted.contentHash ^ (accepted.contentHash >> 32)))
        func copy(_ content: TraceContent) -> TraceMessage {
            var m = Samples.message(uid: accepted.messageUId)
            m.content = content
            return m
        }
        let events: [TraceEvent] = [
            .serverEvent(.messageAccepted(accepted)),
            .callback(device: 1, .received(copy(digest), left: 0, offline: false, hasPackage: false)),
            .callback(device: 2, .received(copy(digest), left: 0, offline: false, hasPackage: false)),
            .callback(device: 3, .received(copy(.of("other", keep: false)), left: 0, offline: false, hasPackage: false)),
            .callback(device: 4, .received(copy(.of("other", keep: false)), left: 0, offline: false, hasPackage: false)),
            .callback(device: 5, .messageInserted(copy(.of("kept", keep: true)))),
        ]
        let bytes = try recordedTrace(events)
        #expect(try readEntries(bytes).map(\.event).filter { !isCheckpoint($0) } == events)
        // Body sizes: the copies that reuse a digest are 5 bytes (length + fixed32) shorter.
        let v1 = try TraceReader(bytes: try recordedTrace(events, format: 1))
        var received1: [Int] = [], received2: [Int] = []
        while let r = try v1.next() { if r.kind == 46 { received1.append(r.bodyRange.count) } }
        let v2 = try TraceReader(bytes: bytes)
        while let r = try v2.next() { if r.kind == 46 { received2.append(r.bodyRange.count) } }
        #expect(received1.count == 4 && received2.count == 4)
        // 1st and 2nd copy: the accepted record's digest; 3rd: new digest in full; 4th: the 3rd's.
        #expect(received2[0] <= received1[0] - 5)
        #expect(received2[1] <= received1[1] - 5)
        #expect(received2[2] >= received1[2] - 3)
        #expect(received2[3] <= received1[3] - 5)
    }

    /// The world's user and device ids are the header's predefined strings (ids 0 ..< n, in
    /// world order): no block defines them, yet every block alone resolves them.
    @Test func theWorldsIdsArePredefinedInTheHeader() throws {
        let v2 = try run(format: 2, perBlock: 3)
        let reader = try TraceReader(bytes: v2)
        #expect(reader.header.strings == ["alice", "bob", "alice-phone", "alice-web", "bob-phone"])
        #expect(try TraceReader(bytes: try run(format: 1)).header.strings.isEmpty)
        // Read each block alone, from a reader that skipped every block before it.
        var named = 0
        for b in reader.blocks {
            let fresh = TraceEventReader(reader: try TraceReader(bytes: v2))
            fresh.reader.seek(toBlockAt: b.number)
            while let e = try fresh.next(), e.index < b.endRecordIndex {
                if case .serverEvent(.fannedOut(_, let user, let device, _, _)) = e.event {
                    #expect(["alice", "bob"].contains(user) && ["alice-phone", "alice-web", "bob-phone"].contains(device))
                    named += 1
                }
            }
        }
        #expect(named > 0)
        // Too late once something is interned; format 1 has none.
        let w = try TraceWriter(inMemory: testHeader())
        try w.append(kind: 1, time: .zero) { $0.string("x") }
        #expect(try w.predefine(["a"]) == false)
        let w1 = try TraceWriter(inMemory: testHeader(), options: TraceWriterOptions(formatMajor: 1))
        #expect(try w1.predefine(["a"]) == false)
        let w2 = try TraceWriter(inMemory: testHeader())
        #expect(throws: TraceError.invalidHeader("predefined string \"a\" repeats")) { try w2.predefine(["a", "b", "a"]) }
    }

    /// Format 2 record heads: positive ns-exact deltas take one flag bit; everything else is the
    /// plain code shifted; both read back exactly, at the extremes too.
    @Test func headTimeCodesRoundTrip() throws {
        let deltas: [Int64] = [0, 1, 999, 1_000, 1_001, 262_145, 1_234_567, 2_097_151, 1_000_000, 15_000_000_000, -1, -1_234_567,
                               -1_000_000, 1 << 61, (1 << 62) - 1, 1 << 62, .max, .min, .min + 1]
        for d in deltas {
            let b = ByteBuffer(capacity: 16)
            b.appendHeadTimeCode(d)
            var p = 0
            let back = try TimeCode.readHead(b.bytes, &p)
            #expect(back == d, "delta \(d)")
            #expect(p == b.count, "delta \(d)")
            if d > 0 && d % 1_000 != 0 && d < 1 << 62 {
                #expect(b.bytes[0] & 1 == 1 && b.count == Varint.length(UInt64(d) << 1 | 1))
            } else {
                #expect(b.bytes[0] & 1 == 0)
            }
        }
        // 1.000001 ms: three bytes (four in format 1).
        var plain: [UInt8] = []
        TimeCode.append(1_000_001, to: &plain)
        let b = ByteBuffer(capacity: 16)
        b.appendHeadTimeCode(1_000_001)
        #expect(b.count == 3 && plain.count == 4)
    }

    /// A context reference in a block that never set the context is a typed error naming the
    /// field, not a guess.
    @Test func aReferenceWithoutContextIsATypedError() throws {
        let w = try TraceWriter(inMemory: try TraceHeader(seed: 1, scenarioDigest: 0, scenarioName: "x"))
        try w.append(kind: 1, time: .zero) { $0.uvarint(UInt64(0)) }      // appStart: "same device", none named
        try w.append(kind: 80, time: .zero) { $0.uvarint(UInt64(0)) }     // srv.in.accepted: "same connection", none
        try w.append(kind: 105, time: .zero) { $0.uvarint(UInt64(1)); $0.string("alice") }  // uid id −1 relative to 0
        try w.finish(finalDigest: 0)
        let r = try TraceEventReader(bytes: w.bytes)
        var reasons: [RecordDecodeError.Reason] = []
        for _ in 0..<3 {
            do { _ = try r.next(); Issue.record("decoded") } catch {
                guard case .record(let e) = error else { Issue.record("unexpected \(error)"); continue }
                reasons.append(e.reason)
            }
        }
        #expect(reasons.count == 3)
        if reasons.count == 3 {
            #expect(reasons[0] == .invalidValue(field: "device", value: "the same as before, but no record of the block named one"))
            #expect(reasons[1] == .invalidValue(field: "connection", value: "the same as before, but no record of the block named one"))
            guard case .badStringID = reasons[2] else { Issue.record("uid: \(reasons[2])"); return }
        }
    }

    /// Format 1 is still read (plain fields) and still written on request; a major version this
    /// build does not know is a typed error saying which versions it reads.
    @Test func formatOneReadsAndUnknownMajorsAreTypedErrors() throws {
        let samples = Samples.all()
        let v1 = try recordedTrace(samples, format: 1)
        #expect(v1[8] == 1 && v1[9] == 0)
        #expect(try readEntries(v1).map(\.event).dropFirst() == ArraySlice(samples))
        var v3 = v1
        v3[8] = 3
        #expect(throws: TraceError.unsupportedVersion(major: 3, minor: 0)) { try TraceReader(bytes: v3) }
        #expect(TraceError.unsupportedVersion(major: 3, minor: 0).description
                == "unsupported trace format version 3.0 (this reader reads 1.x and 2.x)")
        #expect(throws: TraceError.self) {
            try TraceWriter(inMemory: testHeader(), options: TraceWriterOptions(formatMajor: 3))
        }
    }
}
