import Foundation
import Testing
@testable import IMTrace
@testable import IMTraceFormat
import SimKernel

@Suite struct WriterReaderTests {
    /// A million tiny records (kind + time + one small varint) through a file, level 1.
    @Test func oneMillionRecordsThroughWriterAndReader() throws {
        let path = temporaryPath("million")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let n = 1_000_000
        let w = try TraceWriter(path: path, header: testHeader(), options: TraceWriterOptions(compressionLevel: 1))
        var t = SimTime.zero
        for i in 0..<n {
            t += .microseconds(Int64(i % 7) * 250)
            try w.append(kind: UInt16(i & 7), time: t) { $0.uvarint(UInt64(i & 1023)) }
        }
        let summary = try w.finish(finalDigest: 0xD16E57)
        #expect(summary.records == UInt64(n))
        #expect(summary.blocks == (n + 8191) / 8192)

        let r = try TraceReader(path: path)
        #expect(r.info.recordCount == UInt64(n))
        #expect(r.footer?.finalDigest == 0xD16E57)
        var i = 0
        t = .zero
        var mismatches = 0
        while let rec = try r.next() {
            t += .microseconds(Int64(i % 7) * 250)
            var d = rec.decoder
            let v = try d.uvarint()
            if rec.index != UInt64(i) || rec.kind != UInt16(i & 7) || rec.time != t || v != UInt64(i & 1023) { mismatches += 1 }
            i += 1
        }
        #expect(i == n)
        #expect(mismatches == 0)
    }

    @Test func flushOnDemandAndByBytesMakesBlocks() throws {
        let w = try TraceWriter(inMemory: testHeader(), options: TraceWriterOptions(recordsPerBlock: 1000, maxBlockBytes: 4096))
        try w.append(kind: 1, time: .zero)
        try w.flush()
        try w.flush()  // nothing pending: no empty block
        #expect(w.blockCount == 1)
        let blob = [UInt8](repeating: 0xAB, count: 1500)
        for _ in 0..<5 { try w.append(kind: 2, time: .zero) { $0.bytes(blob) } }
        // 4 KiB blocks hold two 1.5 KB records; a third would overflow, so it starts the next block.
        try w.finish(finalDigest: 0)
        let r = try TraceReader(bytes: w.bytes)
        #expect(r.blocks.map(\.recordCount) == [1, 2, 2, 1])
        #expect(r.blocks.allSatisfy { $0.uncompressedLength <= 4096 })
        #expect(r.blocks.map(\.firstRecordIndex) == [0, 1, 3, 5])
    }

    /// Records are encoded in place in the block; one that overflows `maxBlockBytes` moves to the
    /// next block, where its time delta becomes absolute and its strings are defined again. Bodies
    /// of 127, 128 and 300 bytes exercise the widened length field.
    @Test func overflowingRecordMovesWithItsStringsAndTime() throws {
        let w = try TraceWriter(inMemory: testHeader(), options: TraceWriterOptions(recordsPerBlock: 1000, maxBlockBytes: 4096))
        var expected: [(kind: UInt16, time: SimTime, name: String, blob: Int)] = []
        var t = SimTime.zero
        let sizes = [10, 127, 128, 300, 1500, 900, 2000, 5, 1200]
        for i in 0..<60 {
            t += .milliseconds(Int64(1 + i % 5))
            let name = "user-\(i % 7)", blob = sizes[i % sizes.count]
            try w.append(kind: UInt16(1 + i % 3), time: t) {
                $0.string(name)
                $0.bytes([UInt8](repeating: UInt8(truncatingIfNeeded: i), count: blob))
                $0.time(t + .seconds(1))
            }
            expected.append((UInt16(1 + i % 3), t, name, blob))
        }
        try w.finish(finalDigest: 0)
        let r = try TraceReader(bytes: w.bytes)
        #expect(r.blocks.count > 10)
        #expect(r.blocks.allSatisfy { $0.uncompressedLength <= 4096 })
        var i = 0
        while let rec = try r.next() {
            var d = rec.decoder
            let e = expected[i]
            #expect(rec.kind == e.kind && rec.time == e.time, "record \(i)")
            #expect(try d.string() == e.name, "record \(i)")
            let blob = try d.bytes()
            #expect(blob.count == e.blob && blob.allSatisfy { $0 == UInt8(truncatingIfNeeded: i) }, "record \(i)")
            #expect(try d.time() == e.time + .seconds(1), "record \(i)")
            i += 1
        }
        #expect(i == expected.count)
    }

    @Test func writerStateMachine() throws {
        let w = try TraceWriter(inMemory: testHeader())
        try w.append(kind: 1, time: .zero)
        try w.finish(finalDigest: 0)
        #expect(throws: TraceError.writerClosed) { try w.append(kind: 1, time: .zero) }
        #expect(throws: TraceError.writerClosed) { try w.flush() }
        #expect(throws: TraceError.writerClosed) { try w.finish(finalDigest: 0) }
    }

    @Test func invalidOptionsAndHeaders() throws {
        #expect(throws: TraceError.self) { try TraceWriter(inMemory: testHeader(), options: TraceWriterOptions(compressionLevel: 99)) }
        #expect(throws: TraceError.self) { try TraceWriter(inMemory: testHeader(), options: TraceWriterOptions(recordsPerBlock: 0)) }
        #expect(throws: TraceError.self) { try TraceWriter(inMemory: testHeader(), options: TraceWriterOptions(maxBlockBytes: 100)) }
        #expect(throws: TraceError.invalidHeader("duplicate option key \"a\"")) {
            try TraceHeader(seed: 1, scenarioDigest: 0, scenarioName: "x", options: [TraceOption("a", "1"), TraceOption("a", "2")])
        }
        #expect(throws: TraceError.io(path: "/nonexistent-dir/x.imtrace", operation: "open", errno: ENOENT)) {
            try TraceWriter(path: "/nonexistent-dir/x.imtrace", header: testHeader())
        }
        #expect(throws: TraceError.io(path: "/nonexistent-dir/x.imtrace", operation: "open", errno: ENOENT)) {
            try TraceReader(path: "/nonexistent-dir/x.imtrace")
        }
    }

    @Test func recordTooLarge() throws {
        let w = try TraceWriter(inMemory: testHeader())
        let huge = [UInt8](repeating: 0, count: TraceFormat.maxRecordBody + 1)
        #expect(throws: TraceError.recordTooLarge(bytes: huge.count + 4, limit: TraceFormat.maxRecordBody)) {
            try w.append(kind: 0, time: .zero) { $0.bytes(huge) }
        }
        // The writer is still usable.
        try w.append(kind: 0, time: .zero) { $0.uvarint(UInt64(1)) }
        try w.finish(finalDigest: 0)
        #expect(try TraceReader(bytes: w.bytes).info.recordCount == 1)
    }

    @Test func headerRoundTripSortsOptions() throws {
        var h = try TraceHeader(seed: .max, scenarioDigest: 42, scenarioName: "mixed-1k ✓", build: "imsim test",
                                options: [TraceOption("zeta", "1"), TraceOption("alpha", "x=y"), TraceOption("Beta", "")],
                                keepContent: true)
        #expect(h.options.map(\.key) == ["Beta", "alpha", "zeta"])
        #expect(h.option("alpha") == "x=y")
        let w = try TraceWriter(inMemory: h)
        try w.finish(finalDigest: 0)
        let r = try TraceReader(bytes: w.bytes)
        #expect(r.header == h)
        #expect(r.header.keepContent)
        #expect(r.header.build == "imsim test")
        h.keepContent = false
        #expect(r.header != h)
        #expect(TraceHeader.currentBuild.hasPrefix("imsim \(IMSimVersion.string) ("))
    }

    @Test func badMagicVersionAndTruncatedHeader() throws {
        let w = try TraceWriter(inMemory: testHeader())
        try w.finish(finalDigest: 0)
        let good = w.bytes

        #expect(throws: TraceError.notATrace(found: Array("{\"a\":1}\n".utf8))) { try TraceReader(bytes: Array("{\"a\":1}\n and more".utf8)) }
        #expect(throws: TraceError.truncatedHeader(needed: 16, fileSize: 5)) { try TraceReader(bytes: Array(good[0..<5])) }
        #expect(throws: TraceError.truncatedHeader(needed: 16, fileSize: 0)) { try TraceReader(bytes: []) }
        var v3 = good
        v3[8] = 3
        #expect(throws: TraceError.unsupportedVersion(major: 3, minor: 0)) { try TraceReader(bytes: v3) }
        var flipped = good
        flipped[20] ^= 0x01  // inside the seed
        #expect(throws: TraceError.self) { try TraceReader(bytes: flipped) }
        do { _ = try TraceReader(bytes: flipped, mode: .salvage) } catch {
            guard case .badHeader = error else { Issue.record("unexpected \(error)"); return }
        }
    }

    /// Versioning policy: a newer minor version may append header fields; this reader skips them.
    @Test func newerMinorVersionWithExtraHeaderFieldsIsReadable() throws {
        let (bytes, expected) = try syntheticTrace(seed: 9, records: 50, perBlock: 20, finish: false)
        let header = testHeader(seed: 9).encoded()
        let payloadLength = header.count - 20
        var newer = Array(header[0..<(header.count - 4)])
        newer[10] = 1  // minor 1
        newer.append(contentsOf: [0xEE, 0xEE, 0xEE])  // a field this reader does not know
        let newLength = UInt32(payloadLength + 3)
        withUnsafeBytes(of: newLength.littleEndian) { for (i, b) in $0.enumerated() { newer[12 + i] = b } }
        newer.appendLittleEndian(CRC32C.checksum(newer))
        let file = newer + bytes[header.count...]
        let r = try TraceReader(bytes: file, mode: .salvage)  // unfinished: salvage
        #expect(r.header.minorVersion == 1)
        #expect(r.headerLength == header.count + 3)
        #expect(try readAll(r).map(\.1) == expected)
        // The same extra bytes under minor 0 are an error.
        var same = newer
        same[10] = 0
        same.replaceSubrange((same.count - 4)..<same.count, with: [])
        same.appendLittleEndian(CRC32C.checksum(same))
        #expect(throws: TraceError.self) { try TraceReader(bytes: same, mode: .salvage) }
    }

    @Test func unfinishedTraceIsRefusedStrictAndReadBySalvage() throws {
        let (bytes, expected) = try syntheticTrace(seed: 4, records: 500, perBlock: 64, finish: false)
        #expect(throws: TraceError.missingFooter(fileSize: bytes.count)) { try TraceReader(bytes: bytes) }
        let r = try TraceReader(bytes: bytes, mode: .salvage)
        #expect(r.footerStatus == .missing)
        #expect(r.footer == nil)
        #expect(r.blocks.count == 8)
        #expect(try readAll(r).map(\.1) == expected)
        let report = r.verify()
        #expect(report.blocksIntact == 8)
        #expect(report.recordsRecovered == 500)
        #expect(report.damage.isEmpty)
        #expect(!report.isIntact)  // no footer
    }

    @Test func writerDroppedWithoutFinishLeavesFlushedBlocks() throws {
        let path = temporaryPath("dropped")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let expected = SyntheticTraceStream.records(seed: 5, count: 300)
        do {
            let w = try TraceWriter(path: path, header: testHeader(seed: 5), options: TraceWriterOptions(recordsPerBlock: 100))
            for r in expected.prefix(250) { try SyntheticTraceStream.append(r, to: w) }
            // 50 records pending in memory are lost with the writer; 2 blocks are on disk.
        }
        let r = try TraceReader(path: path, mode: .salvage)
        let got = try readAll(r)
        #expect(got.map(\.1) == Array(expected.prefix(200)))
        #expect(r.damage.isEmpty)
    }

    @Test func seekByBlockRecordAndTime() throws {
        let (bytes, expected) = try syntheticTrace(seed: 6, records: 1_000, perBlock: 64)
        let r = try TraceReader(bytes: bytes)
        for index in [UInt64(0), 1, 63, 64, 65, 500, 999] {
            #expect(try r.seek(toRecord: index))
            let t = try #require(try r.next())
            #expect(t.index == index)
            #expect(try SyntheticTraceStream.decode(t) == expected[Int(index)])
        }
        #expect(try !r.seek(toRecord: 1_000))
        #expect(try r.next() == nil)

        for target in [expected[0].time, expected[321].time, expected[999].time, expected[640].time + .nanoseconds(1)] {
            try r.seek(toTime: target)
            let t = try #require(try r.next())
            let firstAtOrAfter = expected.firstIndex { $0.time >= target }!
            #expect(t.index == UInt64(firstAtOrAfter))
        }
        try r.seek(toTime: expected[999].time + .seconds(1))
        #expect(try r.next() == nil)

        r.seek(toBlockAt: 3)
        #expect(try r.next()?.index == 192)
        r.seek(toBlockAt: r.blocks.count)
        #expect(try r.next() == nil)
    }

    @Test func recordsOutliveTheirBlock() throws {
        let (bytes, expected) = try syntheticTrace(seed: 8, records: 300, perBlock: 10)
        let r = try TraceReader(bytes: bytes)
        var kept: [TraceRecord] = []
        while let t = try r.next() { kept.append(t) }  // the reader moved through 30 blocks
        #expect(try kept.map { try SyntheticTraceStream.decode($0) } == expected)
    }

    @Test func infoFromTheIndex() throws {
        let (bytes, expected) = try syntheticTrace(seed: 2, records: 700, perBlock: 100)
        let info = try TraceReader(bytes: bytes).info
        #expect(info.blockCount == 7)
        #expect(info.recordCount == 700)
        #expect(info.fileSize == bytes.count)
        #expect(info.firstTime == expected.first!.time)
        #expect(info.lastTime == expected.last!.time)
        #expect(info.finalDigest == 0x5EED)
        #expect(info.stringCount == Set(expected.map(\.text).filter { !$0.isEmpty }).count)
        #expect(info.compressedBytes < info.uncompressedBytes)
        #expect(info.headerLength + info.compressedBytes + 32 + 7 * 48 + 4 + 24 == info.fileSize)
    }

    /// Same records, same options: byte-identical files (nbWorkers = 0, no clock in the format).
    @Test func writingIsDeterministic() throws {
        let a = try syntheticTrace(seed: 11, records: 3_000, perBlock: 500, level: 3).bytes
        let b = try syntheticTrace(seed: 11, records: 3_000, perBlock: 500, level: 3).bytes
        #expect(a == b)
        let c = try syntheticTrace(seed: 12, records: 3_000, perBlock: 500, level: 3).bytes
        #expect(a != c)
    }
}
