import IMZstd
import SimKernel

/// What the index (footer, or a salvage scan) knows about one block, without decompressing it.
public struct TraceBlockInfo: Hashable, Sendable {
    /// Block number, counted from 0 in writing order.
    public var number: Int
    /// File offset of the block header.
    public var offset: Int
    /// Trace-wide index of the block's first record.
    public var firstRecordIndex: UInt64
    public var recordCount: Int
    /// zstd frame bytes (the block occupies `TraceFormat.blockHeaderSize + compressedLength`).
    public var compressedLength: Int
    public var uncompressedLength: Int
    /// CRC-32C of the uncompressed payload. Equal payloads have equal checksums, so two traces
    /// written with the same block size can be compared block by block without decompressing.
    public var payloadChecksum: UInt32
    public var firstTime: SimTime
    public var lastTime: SimTime

    public init(number: Int, offset: Int, firstRecordIndex: UInt64, recordCount: Int, compressedLength: Int,
                uncompressedLength: Int, payloadChecksum: UInt32, firstTime: SimTime, lastTime: SimTime) {
        self.number = number
        self.offset = offset
        self.firstRecordIndex = firstRecordIndex
        self.recordCount = recordCount
        self.compressedLength = compressedLength
        self.uncompressedLength = uncompressedLength
        self.payloadChecksum = payloadChecksum
        self.firstTime = firstTime
        self.lastTime = lastTime
    }

    /// Offset just past the block.
    public var endOffset: Int { offset + TraceFormat.blockHeaderSize + compressedLength }
    /// Trace-wide index just past the block's last record.
    public var endRecordIndex: UInt64 { firstRecordIndex + UInt64(recordCount) }
}

/// The 56-byte block header (all little-endian):
/// `"IMTB" · number u32 · compressedLength u32 · uncompressedLength u32 · recordCount u32 ·
/// codec u32 · firstRecordIndex u64 · firstTime i64 · lastTime i64 · payloadCRC u32 · headerCRC u32`.
enum BlockHeader {
    static func encode(_ b: TraceBlockInfo, into out: inout [UInt8]) {
        let start = out.count
        out.append(contentsOf: TraceFormat.blockMagic)
        out.appendLittleEndian(UInt32(b.number))
        out.appendLittleEndian(UInt32(b.compressedLength))
        out.appendLittleEndian(UInt32(b.uncompressedLength))
        out.appendLittleEndian(UInt32(b.recordCount))
        out.appendLittleEndian(TraceFormat.codecZstd)
        out.appendLittleEndian(b.firstRecordIndex)
        out.appendLittleEndian(UInt64(bitPattern: b.firstTime.nanoseconds))
        out.appendLittleEndian(UInt64(bitPattern: b.lastTime.nanoseconds))
        out.appendLittleEndian(b.payloadChecksum)
        let crc = out.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[start..<(start + 52)])) }
        out.appendLittleEndian(crc)
    }

    /// Parses a block header at `offset` (the buffer holds at least `blockHeaderSize` bytes).
    /// Returns a reason string when the magic, checksum or limits are wrong.
    static func decode(_ raw: UnsafeRawBufferPointer, offset: Int) -> Result<TraceBlockInfo, BlockHeaderFailure> {
        precondition(raw.count >= TraceFormat.blockHeaderSize)
        guard raw[0] == TraceFormat.blockMagic[0], raw[1] == TraceFormat.blockMagic[1],
              raw[2] == TraceFormat.blockMagic[2], raw[3] == TraceFormat.blockMagic[3] else {
            return .failure(.init(number: nil, reason: "no block magic"))
        }
        let stored = raw.u32(52)
        let computed = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[0..<52]))
        guard stored == computed else {
            return .failure(.init(number: nil, reason: "block header checksum mismatch"))
        }
        let number = Int(raw.u32(4))
        let info = TraceBlockInfo(
            number: number, offset: offset, firstRecordIndex: raw.u64(24), recordCount: Int(raw.u32(16)),
            compressedLength: Int(raw.u32(8)), uncompressedLength: Int(raw.u32(12)), payloadChecksum: raw.u32(48),
            firstTime: SimTime(nanoseconds: raw.i64(32)), lastTime: SimTime(nanoseconds: raw.i64(40)))
        func fail(_ r: String) -> Result<TraceBlockInfo, BlockHeaderFailure> { .failure(.init(number: number, reason: r)) }
        let codec = raw.u32(20)
        if codec != TraceFormat.codecZstd { return fail("unknown codec \(codec)") }
        if info.uncompressedLength > TraceFormat.maxBlockPayload {
            return fail("uncompressed length \(info.uncompressedLength) exceeds \(TraceFormat.maxBlockPayload)")
        }
        if info.compressedLength > ZstdCompressor.bound(TraceFormat.maxBlockPayload) {
            return fail("compressed length \(info.compressedLength) exceeds the zstd bound")
        }
        if info.recordCount == 0 || info.recordCount > TraceFormat.maxBlockRecords {
            return fail("record count \(info.recordCount) outside 1...\(TraceFormat.maxBlockRecords)")
        }
        if info.firstRecordIndex > UInt64.max - UInt64(info.recordCount) {
            return fail("first record index \(info.firstRecordIndex) overflows")
        }
        return .success(info)
    }
}

struct BlockHeaderFailure: Error {
    var number: Int?
    var reason: String
}
