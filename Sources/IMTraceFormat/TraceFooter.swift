import IMZstd
import SimKernel

/// The footer of a finished trace: the block index, totals and the run's final digest.
public struct TraceFooter: Hashable, Sendable {
    /// File offset of the footer.
    public var offset: Int
    public var totalRecords: UInt64
    /// The determinism digest of the run, as given to `TraceWriter.finish(finalDigest:)`.
    public var finalDigest: UInt64
    /// Distinct interned strings in the whole trace.
    public var stringCount: Int
    public var blocks: [TraceBlockInfo]

    /// Footer bytes then trailer bytes.
    ///
    /// Footer: `"IMTF" · blockCount u32 · totalRecords u64 · finalDigest u64 · stringCount u32 ·
    /// reserved u32 · blockCount × entry · CRC-32C u32`; entry: `offset u64 · firstRecordIndex u64 ·
    /// recordCount u32 · compressedLength u32 · uncompressedLength u32 · payloadCRC u32 ·
    /// firstTime i64 · lastTime i64`. Trailer (last 24 bytes of the file): `footerOffset u64 ·
    /// footerLength u32 · CRC-32C of those 12 bytes u32 · "IMTR-END"`.
    func encoded() -> [UInt8] {
        var out = TraceFormat.footerMagic
        out.appendLittleEndian(UInt32(blocks.count))
        out.appendLittleEndian(totalRecords)
        out.appendLittleEndian(finalDigest)
        out.appendLittleEndian(UInt32(stringCount))
        out.appendLittleEndian(UInt32(0))
        for b in blocks {
            out.appendLittleEndian(UInt64(b.offset))
            out.appendLittleEndian(b.firstRecordIndex)
            out.appendLittleEndian(UInt32(b.recordCount))
            out.appendLittleEndian(UInt32(b.compressedLength))
            out.appendLittleEndian(UInt32(b.uncompressedLength))
            out.appendLittleEndian(b.payloadChecksum)
            out.appendLittleEndian(UInt64(bitPattern: b.firstTime.nanoseconds))
            out.appendLittleEndian(UInt64(bitPattern: b.lastTime.nanoseconds))
        }
        out.appendLittleEndian(CRC32C.checksum(out))
        let footerLength = out.count
        let trailerStart = out.count
        out.appendLittleEndian(UInt64(offset))
        out.appendLittleEndian(UInt32(footerLength))
        let tcrc = out.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[trailerStart..<(trailerStart + 12)])) }
        out.appendLittleEndian(tcrc)
        out.append(contentsOf: TraceFormat.trailerMagic)
        return out
    }

    /// How finding the footer went.
    enum Lookup {
        case found(TraceFooter)
        /// No trailer magic at the end of the file.
        case missing
        /// A trailer, but it or the footer is damaged. `footerOffset` is where the trailer says
        /// the footer starts, when the trailer itself is intact.
        case damaged(TraceError, footerOffset: Int?)
    }

    /// Finds and validates the footer through the trailer.
    static func locate(in source: TraceSource, headerEnd: Int, minor: UInt16) throws(TraceError) -> Lookup {
        let size = source.size
        guard size >= headerEnd + TraceFormat.trailerSize else { return .missing }
        let trailerAt = size - TraceFormat.trailerSize
        let t = try source.read(at: trailerAt, count: TraceFormat.trailerSize)
        guard Array(t[16..<24]) == TraceFormat.trailerMagic else { return .missing }
        let (footerOffset, footerLength, stored, computed) = t.withUnsafeBytes {
            (Int(clamping: $0.u64(0)), Int($0.u32(8)), $0.u32(12), CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[0..<12])))
        }
        guard stored == computed else {
            return .damaged(.badFooter(offset: trailerAt, reason: "trailer checksum mismatch"), footerOffset: nil)
        }
        guard footerOffset >= headerEnd, footerLength >= TraceFormat.footerFixedSize + 4,
              footerOffset <= trailerAt, trailerAt - footerOffset == footerLength else {
            return .damaged(.badFooter(offset: trailerAt, reason: "trailer points outside the file (footer at \(footerOffset), \(footerLength) bytes)"), footerOffset: nil)
        }
        switch try parse(source: source, at: footerOffset, length: footerLength, headerEnd: headerEnd, minor: minor) {
        case .success(let f): return .found(f)
        case .failure(let e): return .damaged(e, footerOffset: footerOffset)
        }
    }

    /// Parses the footer at `offset`. With `length` nil (salvage found "IMTF" where a block was
    /// expected), the length is derived from the block count.
    static func parse(source: TraceSource, at offset: Int, length: Int?, headerEnd: Int, minor: UInt16) throws(TraceError) -> Result<TraceFooter, TraceError> {
        func bad(_ at: Int, _ r: String) -> Result<TraceFooter, TraceError> { .failure(.badFooter(offset: at, reason: r)) }
        let fixed = try source.read(at: offset, count: TraceFormat.footerFixedSize)
        guard fixed.count == TraceFormat.footerFixedSize else { return bad(offset, "file ends inside the footer") }
        guard Array(fixed[0..<4]) == TraceFormat.footerMagic else { return bad(offset, "no footer magic") }
        let blockCount = fixed.withUnsafeBytes { Int($0.u32(4)) }
        let minimum = TraceFormat.footerFixedSize + blockCount * TraceFormat.footerEntrySize + 4
        let total = length ?? minimum
        guard total >= minimum else { return bad(offset + 4, "block count \(blockCount) does not fit the footer length \(total)") }
        if minor <= TraceFormat.minorVersion && total != minimum {
            return bad(offset, "footer length \(total), expected \(minimum)")
        }
        let bytes = try source.read(at: offset, count: total)
        guard bytes.count == total else { return bad(offset, "file ends inside the footer") }
        return bytes.withUnsafeBytes { raw in
            let stored = raw.u32(total - 4)
            let computed = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[0..<(total - 4)]))
            guard stored == computed else { return bad(offset + total - 4, "footer checksum mismatch") }
            var footer = TraceFooter(offset: offset, totalRecords: raw.u64(8), finalDigest: raw.u64(16),
                                     stringCount: Int(raw.u32(24)), blocks: [])
            footer.blocks.reserveCapacity(blockCount)
            var expectedOffset = headerEnd
            var expectedIndex: UInt64 = 0
            for i in 0..<blockCount {
                let e = TraceFormat.footerFixedSize + i * TraceFormat.footerEntrySize
                let b = TraceBlockInfo(
                    number: i, offset: Int(clamping: raw.u64(e)), firstRecordIndex: raw.u64(e + 8),
                    recordCount: Int(raw.u32(e + 16)), compressedLength: Int(raw.u32(e + 20)),
                    uncompressedLength: Int(raw.u32(e + 24)), payloadChecksum: raw.u32(e + 28),
                    firstTime: SimTime(nanoseconds: raw.i64(e + 32)), lastTime: SimTime(nanoseconds: raw.i64(e + 40)))
                // Blocks are contiguous from the header to the footer, records numbered without gaps.
                guard b.offset == expectedOffset else {
                    return bad(offset + e, "index entry \(i): block at \(b.offset), expected \(expectedOffset)")
                }
                guard b.firstRecordIndex == expectedIndex, b.recordCount >= 1, b.recordCount <= TraceFormat.maxBlockRecords else {
                    return bad(offset + e + 8, "index entry \(i): records \(b.firstRecordIndex)+\(b.recordCount), expected first \(expectedIndex)")
                }
                guard b.uncompressedLength <= TraceFormat.maxBlockPayload,
                      b.compressedLength <= ZstdCompressor.bound(TraceFormat.maxBlockPayload) else {
                    return bad(offset + e + 20, "index entry \(i): lengths exceed the format limits")
                }
                expectedOffset = b.endOffset
                expectedIndex += UInt64(b.recordCount)
                footer.blocks.append(b)
            }
            guard expectedOffset == offset else {
                return bad(offset, "blocks end at \(expectedOffset), footer starts at \(offset)")
            }
            guard footer.totalRecords == expectedIndex else {
                return bad(offset + 8, "total records \(footer.totalRecords), index sums to \(expectedIndex)")
            }
            return .success(footer)
        }
    }
}
