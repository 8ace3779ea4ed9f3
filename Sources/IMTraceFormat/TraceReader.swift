import IMZstd
import SimKernel

/// Reads a trace one block at a time (memory: one compressed and one uncompressed block).
///
/// Two modes:
/// - `.strict`: the trace must be finished and intact. Any damage throws a `TraceError` naming
///   the block and offset, at open (header, footer) or when the damaged block is reached.
/// - `.salvage`: reads every intact block and skips the rest, recording each skip in `damage`.
///   A missing or damaged footer is rebuilt by scanning block headers (`BlockScanner`). Only a
///   damaged file header is fatal. Every record returned has passed the block's CRC-32C and
///   framing checks, so salvage never returns a wrong record, only fewer.
public final class TraceReader {
    public enum Mode: Hashable, Sendable { case strict, salvage }

    public let mode: Mode
    public let header: TraceHeader
    /// Bytes of the file header (blocks start here).
    public let headerLength: Int
    /// The footer, when intact (or recovered by the salvage scan despite a damaged trailer).
    public let footer: TraceFooter?
    public let footerStatus: TraceFooterStatus
    /// The blocks this reader will visit, in file order: the footer's index, or the scan's.
    public let blocks: [TraceBlockInfo]
    /// Damage found so far: at open (salvage scan) and by blocks that failed to load.
    public private(set) var damage: [TraceDamage] = []
    public var fileSize: Int { source.size }
    public var path: String { source.path }

    private let source: TraceSource
    // Without a window limit zstd cannot fail to make a context short of memory.
    private let decompressor = try! ZstdDecompressor()
    private var compressed: [UInt8] = []
    /// The loaded block; refilled in place when no record references it any more.
    @exclusivity(unchecked) private var current = TraceBlock(info: TraceBlockInfo(
        number: -1, offset: 0, firstRecordIndex: 0, recordCount: 0, compressedLength: 0, uncompressedLength: 0,
        payloadChecksum: 0, firstTime: .zero, lastTime: .zero))
    @exclusivity(unchecked) private var currentBlock = -1
    @exclusivity(unchecked) private var cursor = 0
    @exclusivity(unchecked) private var remainingInBlock = 0
    @exclusivity(unchecked) private var previousTime: Int64 = 0
    @exclusivity(unchecked) private var nextIndex: UInt64 = 0
    @exclusivity(unchecked) private var nextPosition = 0
    /// Every string definition seen, to catch an id defined differently in two blocks.
    private var knownStrings: [UInt32: String] = [:]
    /// Format 2 record-head time codes.
    private var headCodes: Bool { header.majorVersion >= 2 }
    /// The header's predefined strings (format 2), part of every block's table.
    private var predefined: [UInt32: String] = [:]
    private var damagedPositions: [Int] = []

    /// Opens the trace at `path`.
    public convenience init(path: String, mode: Mode = .strict) throws(TraceError) {
        try self.init(source: try TraceSource(path: path), mode: mode)
    }

    /// Reads a trace held in memory.
    public convenience init(bytes: [UInt8], mode: Mode = .strict) throws(TraceError) {
        try self.init(source: TraceSource(bytes: bytes), mode: mode)
    }

    private init(source: TraceSource, mode: Mode) throws(TraceError) {
        self.source = source
        self.mode = mode
        (header, headerLength) = try TraceHeader.read(from: source)
        for (i, s) in header.strings.enumerated() { predefined[UInt32(i)] = s }
        knownStrings = predefined
        var scanEnd = source.size
        switch try TraceFooter.locate(in: source, headerEnd: headerLength, minor: header.minorVersion) {
        case .found(let f):
            footer = f
            footerStatus = .present
            blocks = f.blocks
            return
        case .missing:
            if mode == .strict { throw .missingFooter(fileSize: source.size) }
            footerStatus = .missing
        case let .damaged(e, footerOffset):
            if mode == .strict { throw e }
            footerStatus = .damaged(e)
            damage.append(TraceDamage(offset: footerOffset ?? source.size - TraceFormat.trailerSize, error: e))
            if let footerOffset { scanEnd = footerOffset }
        }
        let scan = try BlockScanner(source: source, start: headerLength, end: scanEnd, minor: header.minorVersion).scan()
        blocks = scan.blocks
        footer = scan.footer
        damage.append(contentsOf: scan.damage)
        damage.sort { $0.offset < $1.offset }
    }

    // MARK: Iteration

    /// The next record, or nil at the end. Strict mode throws on a damaged block; salvage mode
    /// skips it (see `damage`).
    public func next() throws(TraceError) -> TraceRecord? {
        while true {
            if remainingInBlock > 0 { return try nextInBlock() }
            guard nextPosition < blocks.count else { return nil }
            let position = nextPosition
            nextPosition += 1
            do {
                try load(position)
            } catch {
                if mode == .strict { throw error }
                noteDamage(position, error)
            }
        }
    }

    private func nextInBlock() throws(TraceError) -> TraceRecord {
        while true {
            let step = current.bytes.withUnsafeBytes { raw in
                Result { () throws(BlockPayload.Failure) in try BlockPayload.next(raw, &cursor, previousTime: previousTime, headCodes: headCodes) }
            }
            switch step {
            case .success(.record(let kind, let time, let body)):
                previousTime = time
                remainingInBlock -= 1
                let index = nextIndex
                nextIndex += 1
                return TraceRecord(index: index, kind: kind, time: SimTime(nanoseconds: time), block: current, bodyRange: body)
            case .success(.meta):
                continue
            case .failure(let error):
                // Unreachable after `validate`; reported, never trapped.
                remainingInBlock = 0
                let b = current.info
                throw .malformedBlock(block: b.number, offset: b.offset, payloadOffset: error.at, reason: error.reason)
            }
        }
    }

    /// Loads the block at `position` of `blocks`, checking everything, and positions at its first record.
    private func load(_ position: Int) throws(TraceError) {
        remainingInBlock = 0
        let b = blocks[position]
        let total = TraceFormat.blockHeaderSize + b.compressedLength
        try source.read(at: b.offset, count: total, into: &compressed)
        guard compressed.count == total else {
            throw .truncatedBlock(block: b.number, offset: b.offset, needed: total, available: compressed.count)
        }
        let decoded = compressed.withUnsafeBytes {
            BlockHeader.decode(UnsafeRawBufferPointer(rebasing: $0[0..<TraceFormat.blockHeaderSize]), offset: b.offset)
        }
        let h: TraceBlockInfo
        switch decoded {
        case .success(let v): h = v
        case .failure(let f): throw .badBlockHeader(block: b.number, offset: b.offset, reason: f.reason)
        }
        if h != b { throw .indexMismatch(block: b.number, offset: b.offset, reason: Self.difference(index: b, header: h)) }

        // Records of the last block still alive keep it: then decode into a new one.
        if !isKnownUniquelyReferenced(&current) { current = TraceBlock(info: b) }
        current.info = b
        current.strings = [:]
        current.bytes.removeAll(keepingCapacity: true)
        current.bytes.append(contentsOf: repeatElement(0, count: b.uncompressedLength))
        let zstdError = compressed.withUnsafeBytes { src in
            current.bytes.withUnsafeMutableBytes { dst in
                decompressor.decompressFrame(UnsafeRawBufferPointer(rebasing: src[TraceFormat.blockHeaderSize...]), into: dst)
            }
        }
        if let zstdError { throw .zstd(block: b.number, offset: b.offset, message: zstdError.message) }
        let crc = CRC32C.checksum(current.bytes)
        guard crc == b.payloadChecksum else {
            throw .checksumMismatch(block: b.number, offset: b.offset, expected: b.payloadChecksum, actual: crc)
        }
        let table: [UInt32: String]
        do {
            let known = knownStrings
            let acceptUnknown = header.minorVersion > TraceFormat.minorVersion
            table = try current.bytes.withBytes { (raw) throws(BlockPayload.Failure) in
                try BlockPayload.validate(raw, block: b, knownStrings: known, acceptUnknownMeta: acceptUnknown, headCodes: headCodes)
            }
        } catch {
            throw .malformedBlock(block: b.number, offset: b.offset, payloadOffset: error.at, reason: error.reason)
        }
        for (id, s) in table { knownStrings[id] = s }  // order-independent: a plain merge
        if predefined.isEmpty {
            current.strings = table
        } else {
            var all = predefined
            for (id, s) in table { all[id] = s }
            current.strings = all
        }
        current.legacy = header.majorVersion == 1
        currentBlock = position
        cursor = 0
        previousTime = 0
        nextIndex = b.firstRecordIndex
        remainingInBlock = b.recordCount
    }

    private func noteDamage(_ position: Int, _ error: TraceError) {
        guard !damagedPositions.contains(position) else { return }
        damagedPositions.append(position)
        let b = blocks[position]
        damage.append(TraceDamage(offset: b.offset, length: TraceFormat.blockHeaderSize + b.compressedLength, block: b.number,
                                  records: b.firstRecordIndex..<b.endRecordIndex, error: error))
        damage.sort { $0.offset < $1.offset }
    }

    private static func difference(index b: TraceBlockInfo, header h: TraceBlockInfo) -> String {
        var d: [String] = []
        if h.number != b.number { d.append("number \(h.number) vs index \(b.number)") }
        if h.firstRecordIndex != b.firstRecordIndex { d.append("first record \(h.firstRecordIndex) vs index \(b.firstRecordIndex)") }
        if h.recordCount != b.recordCount { d.append("record count \(h.recordCount) vs index \(b.recordCount)") }
        if h.compressedLength != b.compressedLength { d.append("compressed length \(h.compressedLength) vs index \(b.compressedLength)") }
        if h.uncompressedLength != b.uncompressedLength { d.append("uncompressed length \(h.uncompressedLength) vs index \(b.uncompressedLength)") }
        if h.payloadChecksum != b.payloadChecksum { d.append("payload checksum differs") }
        if h.firstTime != b.firstTime || h.lastTime != b.lastTime { d.append("times differ") }
        return d.joined(separator: ", ")
    }

    // MARK: Seeking

    /// Positions before the first record of `blocks[position]` (`blocks.count`: at the end).
    public func seek(toBlockAt position: Int) {
        precondition(position >= 0 && position <= blocks.count, "block position \(position) outside 0...\(blocks.count)")
        remainingInBlock = 0
        nextPosition = position
    }

    /// Positions before the record with trace-wide index `index`. Returns false (and positions
    /// at the next available record) when that record is not in any listed block.
    @discardableResult
    public func seek(toRecord index: UInt64) throws(TraceError) -> Bool {
        // First block whose range ends after `index`.
        let position = partitionPoint { $0.endRecordIndex > index }
        seek(toBlockAt: position)
        guard position < blocks.count, blocks[position].firstRecordIndex <= index else { return false }
        try skip { $0.index < index }
        return remainingInBlock > 0 && nextIndex == index
    }

    /// Positions before the first record with `time >= t`, for traces whose times never
    /// decrease (the index's first/last times are then sorted).
    public func seek(toTime t: SimTime) throws(TraceError) {
        let position = partitionPoint { $0.lastTime >= t }
        seek(toBlockAt: position)
        try skip { $0.time < t }
    }

    private func partitionPoint(_ isAfter: (TraceBlockInfo) -> Bool) -> Int {
        var lo = 0, hi = blocks.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if isAfter(blocks[mid]) { hi = mid } else { lo = mid + 1 }
        }
        return lo
    }

    /// Consumes records while `predicate` holds, leaving the first that fails it as the next.
    private func skip(while predicate: (TraceRecord) -> Bool) throws(TraceError) {
        while true {
            if remainingInBlock == 0 {
                guard nextPosition < blocks.count else { return }
                let position = nextPosition
                nextPosition += 1
                do { try load(position) } catch {
                    if mode == .strict { throw error }
                    noteDamage(position, error)
                    continue
                }
            }
            let savedCursor = cursor, savedTime = previousTime, savedIndex = nextIndex, savedRemaining = remainingInBlock
            let r = try nextInBlock()
            if !predicate(r) {
                cursor = savedCursor
                previousTime = savedTime
                nextIndex = savedIndex
                remainingInBlock = savedRemaining
                return
            }
        }
    }

    // MARK: Whole-trace views

    /// Reads every block (decompress, checksum, framing) and reports what is intact. Never
    /// throws for damage, in either mode; leaves the reader positioned at the start.
    public func verify() -> TraceSalvageReport {
        var intact = 0
        var recovered: UInt64 = 0
        var lost: [Range<UInt64>] = []
        var expected: UInt64 = 0
        for position in blocks.indices {
            let b = blocks[position]
            if b.firstRecordIndex > expected { lost.append(expected..<b.firstRecordIndex) }  // a gap the scan skipped
            expected = b.endRecordIndex
            do {
                try load(position)
                intact += 1
                recovered += UInt64(b.recordCount)
            } catch {
                noteDamage(position, error)
            }
        }
        if let footer, footer.totalRecords > expected { lost.append(expected..<footer.totalRecords) }
        lost += damage.compactMap(\.records)  // damaged listed blocks, and the torn tail's block
        seek(toBlockAt: 0)
        return TraceSalvageReport(footerStatus: footerStatus, blocksListed: blocks.count, blocksIntact: intact,
                                  recordsRecovered: recovered, recordsLost: Self.coverage(lost), damage: damage)
    }

    /// Records covered by a set of possibly overlapping ranges.
    static func coverage(_ ranges: [Range<UInt64>]) -> UInt64 {
        var total: UInt64 = 0
        var reach: UInt64 = 0
        for r in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) where r.upperBound > reach {
            total += r.upperBound - max(r.lowerBound, reach)
            reach = r.upperBound
        }
        return total
    }

    /// Sizes and totals from the index (no block is decompressed).
    public var info: TraceInfo {
        TraceInfo(
            header: header, footerStatus: footerStatus, fileSize: source.size, headerLength: headerLength,
            blockCount: blocks.count, recordCount: blocks.reduce(0) { $0 + UInt64($1.recordCount) },
            compressedBytes: blocks.reduce(0) { $0 + TraceFormat.blockHeaderSize + $1.compressedLength },
            uncompressedBytes: blocks.reduce(0) { $0 + $1.uncompressedLength },
            firstTime: blocks.first?.firstTime, lastTime: blocks.last?.lastTime,
            finalDigest: footer?.finalDigest, stringCount: footer?.stringCount)
    }
}

/// Summary of a trace from its header and index.
public struct TraceInfo: Sendable {
    public var header: TraceHeader
    public var footerStatus: TraceFooterStatus
    public var fileSize: Int
    public var headerLength: Int
    public var blockCount: Int
    public var recordCount: UInt64
    /// Bytes of the blocks on disk (block headers + zstd frames).
    public var compressedBytes: Int
    /// Bytes of the blocks' payloads after decompression.
    public var uncompressedBytes: Int
    public var firstTime: SimTime?
    public var lastTime: SimTime?
    /// The run's final digest (nil without a footer).
    public var finalDigest: UInt64?
    public var stringCount: Int?

    /// Uncompressed / compressed.
    public var compressionRatio: Double { compressedBytes == 0 ? 0 : Double(uncompressedBytes) / Double(compressedBytes) }
    /// Whole-file bytes per record.
    public var bytesPerRecord: Double { recordCount == 0 ? 0 : Double(fileSize) / Double(recordCount) }
}
