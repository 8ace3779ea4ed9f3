import Testing
@testable import IMTrace
@testable import IMTraceFormat
import SimKernel

/// Truncations and byte flips at deterministic random places: every outcome is a typed error or
/// records identical to the ones written; salvage recovers every block the damage did not touch.
@Suite struct CorruptionTests {
    struct Fixture {
        var bytes: [UInt8]
        var expected: [SyntheticTraceStream.Record]
        var blocks: [TraceBlockInfo]
        var headerLength: Int
        var footerOffset: Int
    }

    static let fixture: Fixture = {
        let (bytes, expected) = try! syntheticTrace(seed: 21, records: 400, perBlock: 40, level: 1)
        let r = try! TraceReader(bytes: bytes)
        return Fixture(bytes: bytes, expected: expected, blocks: r.blocks, headerLength: r.headerLength, footerOffset: r.footer!.offset)
    }()

    enum Damage {
        case truncate(at: Int)
        case flip([(offset: Int, mask: UInt8)])
        case zero(offset: Int, count: Int)

        /// Whether a byte range is altered (for truncation: cut into or removed).
        func touches(_ range: Range<Int>) -> Bool {
            switch self {
            case .truncate(let at): return at < range.upperBound
            case .flip(let flips): return flips.contains { range.contains($0.offset) }
            case .zero(let o, let n): return range.overlaps(o..<(o + n))
            }
        }

        func apply(_ bytes: [UInt8]) -> [UInt8] {
            var b = bytes
            switch self {
            case .truncate(let at): b.removeSubrange(at...)
            case .flip(let flips): for f in flips { b[f.offset] ^= f.mask }
            case .zero(let o, let n): for i in o..<min(o + n, b.count) { b[i] = 0 }
            }
            return b
        }
    }

    static func damage(_ caseIndex: Int, size: Int) -> Damage {
        var rng = RandomStreams(seed: 0x00C0_FFEE).stream("corruption", caseIndex)
        switch rng.below(10) {
        case 0..<4:
            return .truncate(at: Int(rng.below(UInt64(size))))
        case 4..<9:
            let n = 1 + Int(rng.below(3))
            return .flip((0..<n).map { _ in (Int(rng.below(UInt64(size))), UInt8(1 + rng.below(255))) })
        default:
            return .zero(offset: Int(rng.below(UInt64(size))), count: 1 + Int(rng.below(64)))
        }
    }

    @Test func thousandDamagedTraces() throws {
        let f = Self.fixture
        #expect(f.blocks.count == 10)
        var strictFailures = 0, salvagedRecords = 0, headerFatal = 0
        for c in 0..<1_000 {
            let d = Self.damage(c, size: f.bytes.count)
            let bytes = d.apply(f.bytes)
            if bytes == f.bytes { continue }  // a zeroed run over zeros changes nothing

            // Strict: a typed error, or every record exactly as written.
            do {
                let r = try TraceReader(bytes: bytes)
                let got = try readAll(r)
                #expect(got.map(\.1) == f.expected, "case \(c): strict read succeeded with different records")
            } catch let e as TraceError {
                strictFailures += 1
                _ = e.description  // every error renders
            }

            // Salvage: only a damaged file header is fatal.
            let reader: TraceReader
            do {
                reader = try TraceReader(bytes: bytes, mode: .salvage)
            } catch {
                headerFatal += 1
                #expect(d.touches(0..<f.headerLength), "case \(c): salvage open failed without header damage: \(error)")
                continue
            }
            var got: [UInt64: SyntheticTraceStream.Record] = [:]
            var lastIndex: UInt64?
            while let t = try reader.next() {
                // Never a silently wrong record.
                let rec = try SyntheticTraceStream.decode(t)
                #expect(rec == f.expected[Int(t.index)], "case \(c): record \(t.index) differs")
                if let lastIndex { #expect(t.index > lastIndex, "case \(c): indices not increasing") }
                lastIndex = t.index
                got[t.index] = rec
            }
            salvagedRecords += got.count
            // Every block the damage did not touch is recovered in full.
            for b in f.blocks where !d.touches(b.offset..<b.endOffset) {
                for i in b.firstRecordIndex..<b.endRecordIndex {
                    #expect(got[i] != nil, "case \(c) (\(d)): record \(i) of untouched block \(b.number) not salvaged; damage \(reader.damage)")
                }
            }
            // Lost records are reported, never silent: a damaged region, or (a clean cut between
            // blocks) a missing footer.
            if got.count < f.expected.count {
                #expect(!reader.damage.isEmpty || reader.footerStatus != .present, "case \(c): records lost without a report")
            }
            let report = reader.verify()
            #expect(report.recordsRecovered == UInt64(got.count), "case \(c)")
            if d.touches(f.footerOffset..<f.bytes.count) || bytes.count < f.bytes.count {
                #expect(!report.isIntact, "case \(c): damaged footer not reported")
            }
        }
        // The mix really exercised both paths.
        #expect(strictFailures > 900)
        #expect(headerFatal > 0)
        #expect(salvagedRecords > 200_000)
    }

    /// Specific damage, specific typed errors.
    @Test func typedErrorsNameTheBlockAndOffset() throws {
        let f = Self.fixture
        let b3 = f.blocks[3]

        // A payload byte of block 3: zstd or checksum error for block 3, at its offset.
        var payload = f.bytes
        payload[b3.offset + TraceFormat.blockHeaderSize + b3.compressedLength / 2] ^= 0x40
        do {
            let r = try TraceReader(bytes: payload)
            _ = try readAll(r)
            Issue.record("strict read of a damaged block succeeded")
        } catch let e as TraceError {
            switch e {
            case let .checksumMismatch(block, offset, _, _), let .zstd(block, offset, _):
                #expect(block == 3)
                #expect(offset == b3.offset)
            default: Issue.record("unexpected \(e)")
            }
        }
        let s = try TraceReader(bytes: payload, mode: .salvage)
        let got = try readAll(s)
        #expect(got.count == 360)
        #expect(s.damage.count == 1)
        #expect(s.damage.first?.block == 3)
        #expect(s.damage.first?.records == b3.firstRecordIndex..<b3.endRecordIndex)

        // Block 3's header: bad block header via the footer's index.
        var header = f.bytes
        header[b3.offset + 10] ^= 0x01
        #expect(throws: TraceError.badBlockHeader(block: 3, offset: b3.offset, reason: "block header checksum mismatch")) {
            _ = try readAll(try TraceReader(bytes: header))
        }

        // Truncated inside block 5: strict → no footer; salvage → blocks 0...4 and a truncated block.
        let cut = Array(f.bytes[0..<(f.blocks[5].offset + 30)])
        #expect(throws: TraceError.missingFooter(fileSize: cut.count)) { try TraceReader(bytes: cut) }
        let t = try TraceReader(bytes: cut, mode: .salvage)
        #expect(t.blocks.count == 5)
        #expect(t.damage == [TraceDamage(offset: f.blocks[5].offset, length: 30,
                                         error: .truncatedBlock(block: nil, offset: f.blocks[5].offset, needed: 56, available: 30))])
        let cut2 = Array(f.bytes[0..<(f.blocks[5].offset + 60)])
        let t2 = try TraceReader(bytes: cut2, mode: .salvage)
        #expect(t2.damage.first?.error == .truncatedBlock(block: 5, offset: f.blocks[5].offset,
                                                            needed: TraceFormat.blockHeaderSize + f.blocks[5].compressedLength, available: 60))
        #expect(t2.damage.first?.records == f.blocks[5].firstRecordIndex..<f.blocks[5].endRecordIndex)

        // Footer checksum: strict names the footer; salvage rebuilds the index by scanning.
        var footer = f.bytes
        footer[f.footerOffset + 40] ^= 0x01
        #expect(throws: TraceError.badFooter(offset: f.bytes.count - 24 - 4, reason: "footer checksum mismatch")) {
            try TraceReader(bytes: footer)
        }
        let sf = try TraceReader(bytes: footer, mode: .salvage)
        #expect(sf.blocks == f.blocks)
        #expect(try readAll(sf).count == 400)

        // Trailer damaged, footer intact: the scan finds the footer and its digest.
        var trailer = f.bytes
        trailer[trailer.count - 20] ^= 0x01
        let st = try TraceReader(bytes: trailer, mode: .salvage)
        #expect(st.footer?.finalDigest == 0x5EED)
        #expect(st.blocks == f.blocks)
    }

    /// A damaged block header loses the length; the scan resyncs on the next block's magic.
    @Test func scanResyncsAfterADamagedBlockHeaderWithoutFooter() throws {
        let f = Self.fixture
        var bytes = Array(f.bytes[0..<f.footerOffset])  // no footer, no trailer
        bytes[f.blocks[2].offset + 1] ^= 0xFF             // magic of block 2
        let r = try TraceReader(bytes: bytes, mode: .salvage)
        #expect(r.blocks.map(\.number) == [0, 1, 3, 4, 5, 6, 7, 8, 9])
        #expect(r.damage.count == 1)
        let d = try #require(r.damage.first)
        #expect(d.offset == f.blocks[2].offset)
        #expect(d.length == f.blocks[3].offset - f.blocks[2].offset)
        let report = r.verify()
        #expect(report.recordsRecovered == 360)
        #expect(report.recordsLost == 40)  // the numbering gap between blocks 1 and 3
    }
}

@Suite struct SalvageAccountingTests {
    @Test func coverageMergesOverlaps() {
        #expect(TraceReader.coverage([]) == 0)
        #expect(TraceReader.coverage([0..<10, 5..<15, 20..<25, 21..<22]) == 20)
        #expect(TraceReader.coverage([30..<40, 0..<5]) == 15)
    }

    @Test func tornTailAndDamagedBlockAreCountedOnce() throws {
        let f = CorruptionTests.fixture
        var bytes = Array(f.bytes[0..<(f.blocks[6].offset + 100)])  // block 6 torn, header intact
        bytes[f.blocks[1].offset + TraceFormat.blockHeaderSize + 5] ^= 0x10  // block 1 payload
        let r = try TraceReader(bytes: bytes, mode: .salvage)
        let report = r.verify()
        #expect(report.blocksListed == 6)
        #expect(report.blocksIntact == 5)
        #expect(report.recordsRecovered == 200)
        #expect(report.recordsLost == 80)  // block 1 and the torn block 6
        #expect(report.damage.map(\.block) == [1, 6])
    }
}
