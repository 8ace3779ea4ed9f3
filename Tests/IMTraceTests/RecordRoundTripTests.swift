import Foundation
import Testing
@testable import IMTrace
@testable import IMTraceFormat
import SimKernel

/// A record using every field type the encoder offers.
private struct Everything: Equatable {
    var u: UInt64
    var s: Int64
    var f64: UInt64
    var f32: UInt32
    var flag: Bool
    var blob: [UInt8]
    var text: String
    var interned: String
    var handle: String
    var duration: SimDuration
    var at: SimTime
    var tail: [UInt8]

    func encode(_ e: inout RecordEncoder, handle h: InternedString) {
        e.uvarint(u); e.varint(s); e.fixed64(f64); e.fixed32(f32); e.bool(flag); e.bytes(blob); e.utf8(text)
        e.string(interned); e.string(h); e.duration(duration); e.time(at); e.raw(tail)
    }

    static func decode(_ d: inout RecordDecoder) throws(RecordDecodeError) -> Everything {
        let r = Everything(
            u: try d.uvarint(), s: try d.varint(), f64: try d.fixed64(), f32: try d.fixed32(), flag: try d.bool(),
            blob: Array(try d.bytes()), text: try d.utf8(), interned: try d.string(), handle: try d.string(),
            duration: try d.duration(), at: try d.time(), tail: Array(d.rest()))
        try d.expectEnd()
        return r
    }
}

@Suite struct RecordRoundTripTests {
    private func samples() -> [(UInt16, SimTime, Everything)] {
        let us: [UInt64] = [0, 1, 127, 128, 16_384, 1 << 63, .max]
        let ss: [Int64] = [0, -1, 1, -64, 64, .min, .max]
        let durations: [SimDuration] = [.zero, .nanoseconds(1), .milliseconds(-3), .seconds(30), .nanoseconds(.max), .nanoseconds(.min)]
        let texts = ["", "héllo", "消息 👋", String(repeating: "x", count: 300)]
        var out: [(UInt16, SimTime, Everything)] = []
        var t = SimTime.zero
        for i in 0..<40 {
            // Times go forwards, backwards and jump to the extremes.
            switch i % 7 {
            case 3: t = t - .milliseconds(5)
            case 5: t = SimTime(nanoseconds: i % 2 == 0 ? .max : .min)
            case 6: t = SimTime(nanoseconds: Int64(i) * 1_000_003)
            default: t = t + .microseconds(Int64(i) * 17)
            }
            let e = Everything(
                u: us[i % us.count], s: ss[i % ss.count], f64: UInt64(i) &* 0x9E37_79B9_7F4A_7C15, f32: UInt32(i * 77),
                flag: i % 3 == 0, blob: (0..<(i * 7 % 200)).map { UInt8(truncatingIfNeeded: $0 &* 31) },
                text: texts[i % texts.count], interned: "status-\(i % 5)", handle: i % 2 == 0 ? "fan-out" : "drop: chatroom quota",
                duration: durations[i % durations.count], at: t + .seconds(Int64(i % 4) - 1),
                tail: i % 4 == 0 ? [] : [0xFF, 0x00, UInt8(i)])
            out.append((UInt16(i % 3 == 0 ? 65_535 : i), t, e))
        }
        return out
    }

    private func write(_ w: TraceWriter, _ items: [(UInt16, SimTime, Everything)]) throws {
        let handles = [w.intern("fan-out"), w.intern("drop: chatroom quota")]
        for (kind, time, e) in items {
            let h = handles.first { $0.text == e.handle }!
            try w.append(kind: kind, time: time) { e.encode(&$0, handle: h) }
        }
    }

    private func check(_ reader: TraceReader, _ items: [(UInt16, SimTime, Everything)]) throws {
        var i = 0
        while let r = try reader.next() {
            #expect(r.index == UInt64(i))
            #expect(r.kind == items[i].0)
            #expect(r.time == items[i].1)
            let e = try r.decode { (d) throws(RecordDecodeError) in try Everything.decode(&d) }
            #expect(e == items[i].2, "record \(i)")
            i += 1
        }
        #expect(i == items.count)
    }

    @Test func everyFieldTypeRoundTripsInMemory() throws {
        let items = samples()
        let w = try TraceWriter(inMemory: testHeader(), options: TraceWriterOptions(recordsPerBlock: 7))
        try write(w, items)
        let summary = try w.finish(finalDigest: 99)
        #expect(summary.records == UInt64(items.count))
        #expect(summary.blocks == 6)
        let reader = try TraceReader(bytes: w.bytes)
        try check(reader, items)
        #expect(reader.footer?.finalDigest == 99)
        #expect(reader.header == testHeader())
    }

    @Test func everyFieldTypeRoundTripsThroughAFile() throws {
        let path = temporaryPath("everything")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let items = samples()
        let w = try TraceWriter(path: path, header: testHeader(), options: TraceWriterOptions(compressionLevel: 5, recordsPerBlock: 16))
        try write(w, items)
        let summary = try w.finish(finalDigest: 1)
        let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as! Int
        #expect(summary.fileBytes == size)
        try check(try TraceReader(path: path), items)
    }

    @Test func recordsWithoutBodyAndEmptyTrace() throws {
        let w = try TraceWriter(inMemory: testHeader())
        try w.finish(finalDigest: 5)
        let r = try TraceReader(bytes: w.bytes)
        #expect(try r.next() == nil)
        #expect(r.blocks.isEmpty)
        #expect(r.info.recordCount == 0)
        #expect(r.verify().isIntact)

        let w2 = try TraceWriter(inMemory: testHeader())
        for i in 0..<5 { try w2.append(kind: UInt16(i), time: .zero + .milliseconds(Int64(i))) }
        try w2.finish(finalDigest: 0)
        let r2 = try TraceReader(bytes: w2.bytes)
        var n = 0
        while let rec = try r2.next() {
            #expect(rec.body.isEmpty)
            #expect(rec.kind == UInt16(n))
            n += 1
        }
        #expect(n == 5)
    }

    /// Each block carries the definitions of the strings it uses, so a block read alone decodes.
    @Test func everyBlockIsSelfDescribing() throws {
        let (bytes, expected) = try syntheticTrace(seed: 3, records: 2_000, perBlock: 100)
        let reader = try TraceReader(bytes: bytes)
        #expect(reader.blocks.count == 20)
        for position in stride(from: reader.blocks.count - 1, through: 0, by: -3) {
            let fresh = try TraceReader(bytes: bytes)  // knows nothing of earlier blocks
            fresh.seek(toBlockAt: position)
            let b = fresh.blocks[position]
            for i in 0..<b.recordCount {
                let t = try #require(try fresh.next())
                #expect(t.index == b.firstRecordIndex + UInt64(i))
                #expect(try SyntheticTraceStream.decode(t) == expected[Int(t.index)])
            }
        }
    }

    @Test func stringIDsAreStableAcrossBlocksAndDefinedPerBlock() throws {
        let w = try TraceWriter(inMemory: testHeader(), options: TraceWriterOptions(recordsPerBlock: 2))
        for i in 0..<6 { try w.append(kind: 1, time: .zero) { $0.string(i % 2 == 0 ? "alpha" : "beta") } }
        try w.finish(finalDigest: 0)
        #expect(w.stringCount == 2)
        let r = try TraceReader(bytes: w.bytes)
        var ids: [UInt32] = []
        while let t = try r.next() {
            #expect(t.block.stringCount == 2)  // both strings defined in each 2-record block
            var d = t.decoder
            ids.append(try d.stringID())
        }
        #expect(ids == [0, 1, 0, 1, 0, 1])
        #expect(r.footer?.stringCount == 2)
    }

    @Test func decoderErrorsAreTypedWithOffsets() throws {
        let w = try TraceWriter(inMemory: testHeader())
        try w.append(kind: 0, time: .zero) { $0.raw([0x80]) }                 // truncated varint
        try w.append(kind: 0, time: .zero) { $0.uvarint(UInt64(7)) }          // string id 7 undefined
        try w.append(kind: 0, time: .zero) { $0.raw([2]) }                    // bool 2
        try w.append(kind: 0, time: .zero) { $0.uvarint(UInt64(5)); $0.raw([1, 2]) }  // bytes: length 5, 2 left
        try w.append(kind: 0, time: .zero) { $0.raw([2, 0xC3, 0x28]) }        // invalid UTF-8
        try w.append(kind: 0, time: .zero) { $0.uvarint(UInt64(1) << 40) }    // too big for UInt32
        try w.append(kind: 0, time: .zero) { $0.uvarint(UInt64(1)); $0.raw([9, 9]) }  // trailing bytes
        try w.append(kind: 0, time: .zero) { $0.raw([1, 2, 3]) }              // fixed64 needs 8
        try w.finish(finalDigest: 0)
        let r = try TraceReader(bytes: w.bytes)
        func next() throws -> RecordDecoder { try #require(try r.next()).decoder }

        var d = try next()
        #expect(throws: RecordDecodeError(record: 0, offset: 0, reason: .truncatedVarint)) { _ = try d.uvarint() }
        d = try next()
        #expect(throws: RecordDecodeError(record: 1, offset: 0, reason: .badStringID(7))) { _ = try d.string() }
        d = try next()
        #expect(throws: RecordDecodeError(record: 2, offset: 0, reason: .invalidBool(2))) { _ = try d.bool() }
        d = try next()
        #expect(throws: RecordDecodeError(record: 3, offset: 0, reason: .truncated(needed: 3))) { _ = try d.bytes() }
        d = try next()
        #expect(throws: RecordDecodeError(record: 4, offset: 0, reason: .invalidUTF8)) { _ = try d.utf8() }
        d = try next()
        #expect(throws: RecordDecodeError(record: 5, offset: 0, reason: .outOfRange(value: 1 << 40, max: UInt64(UInt32.max)))) { _ = try d.uvarint32() }
        d = try next()
        #expect(try d.uvarint() == 1)
        #expect(throws: RecordDecodeError(record: 6, offset: 1, reason: .trailingBytes(2))) { try d.expectEnd() }
        d = try next()
        #expect(throws: RecordDecodeError(record: 7, offset: 0, reason: .truncated(needed: 5))) { _ = try d.fixed64() }
        // The error converts to a TraceError through TraceRecord.decode.
        #expect(try r.next() == nil)
    }

    @Test func internedHandleOwnershipIsChecked() throws {
        // `RecordEncoder.string(_: InternedString)` preconditions on `owns`; check it directly.
        let a = try TraceWriter(inMemory: testHeader())
        let b = try TraceWriter(inMemory: testHeader())
        let h = a.intern("only in a")
        _ = b.intern("something else")
        var interner = StringInterner()
        _ = interner.intern("something else")
        #expect(!interner.owns(h))
        #expect(interner.owns(interner.intern("something else")))
    }

    /// The identity cache in front of the table: small and large strings, the same text in
    /// fresh storage, a cache far smaller than the strings (evictions), and strings freed right
    /// after interning so that the allocator hands their memory — and so their representation —
    /// to the next ones. Every id must be the text's, as a plain dictionary numbers them.
    @Test func identityCacheAlwaysAnswersTheTextsID() {
        var interner = StringInterner()
        var reference: [String: UInt32] = [:]
        var rng = SplitMix64(seed: 11)
        for i in 0..<200_000 {
            let n = Int(rng.next() % 3000)
            // 1/3 small (inline) strings, 2/3 large ones built afresh each time.
            let text = i % 3 == 0 ? "u\(n % 500)" : String(repeating: "m", count: 16 + n % 7) + "-\(n)"
            let fresh = String(decoding: Array(text.utf8), as: UTF8.self)
            let expected = reference[text] ?? UInt32(reference.count)
            reference[text] = expected
            let got = interner.internID(fresh)
            if got != expected {
                Issue.record("string #\(i) \"\(text)\": id \(got), expected \(expected)")
                return
            }
        }
        #expect(interner.strings.count == reference.count)
    }
}
