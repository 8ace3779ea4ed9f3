import IMZstd
import SimKernel

/// Knobs of a `TraceWriter`.
public struct TraceWriterOptions: Hashable, Sendable {
    /// zstd level (1 fastest … 19; default 3).
    public var compressionLevel: Int32
    /// A block is flushed after this many records (1 … 2^24).
    public var recordsPerBlock: Int
    /// … or once its uncompressed payload reaches this many bytes (4 KiB … 16 MiB), whichever
    /// comes first. Together they bound the writer's memory.
    public var maxBlockBytes: Int
    /// `fsync` after every block and at finish: survives power loss, not just a killed process.
    /// Off by default (a killed process already loses nothing that reached `write`).
    public var syncEachBlock: Bool
    /// Checksum, compress and write finished blocks on a writer thread (default), so the thread
    /// that records only encodes; off, all of it happens in `append`. Same file bytes either way
    /// (`BlockPipeline`).
    public var writerThread: Bool
    /// Format major version to write: 2 (default), or 1 for readers older than format 2 (record
    /// bodies without context fields: larger files, byte-identical to what those builds wrote).
    public var formatMajor: UInt16

    public init(compressionLevel: Int32 = 3, recordsPerBlock: Int = 8192, maxBlockBytes: Int = 1 << 20,
                syncEachBlock: Bool = false, writerThread: Bool = true, formatMajor: UInt16 = TraceFormat.majorVersion) {
        self.formatMajor = formatMajor
        self.compressionLevel = compressionLevel
        self.recordsPerBlock = recordsPerBlock
        self.maxBlockBytes = maxBlockBytes
        self.syncEachBlock = syncEachBlock
        self.writerThread = writerThread
    }

    func validate() throws(TraceError) {
        guard (1...TraceFormat.maxBlockRecords).contains(recordsPerBlock) else {
            throw .invalidOptions("recordsPerBlock \(recordsPerBlock) outside 1...\(TraceFormat.maxBlockRecords)")
        }
        guard TraceFormat.readableMajorVersions.contains(formatMajor) else {
            throw .invalidOptions("format version \(formatMajor) outside \(TraceFormat.readableMajorVersions)")
        }
        guard (4096...(16 << 20)).contains(maxBlockBytes) else {
            throw .invalidOptions("maxBlockBytes \(maxBlockBytes) outside 4096...\(16 << 20)")
        }
    }
}

/// What `TraceWriter.finish(finalDigest:)` wrote.
public struct TraceWriteSummary: Hashable, Sendable, Codable {
    public var records: UInt64
    public var blocks: Int
    /// Sum of the blocks' uncompressed payloads.
    public var uncompressedBytes: Int
    /// Size of the whole file (header, blocks, footer, trailer).
    public var fileBytes: Int
    public var finalDigest: UInt64
}

/// Streams records into a trace: header at creation, a checksummed zstd block every
/// `recordsPerBlock` records (or `maxBlockBytes`, or `flush()`), footer at `finish`.
///
/// Crash behaviour: blocks go straight to the final path, each with a single `write`, so a run
/// killed at any point leaves the header and every complete block readable
/// (`TraceReader(path:mode: .salvage)`); only the blocks not yet written (the one being filled,
/// and with the writer thread up to `BlockPipeline.maxQueued` more) and the footer are lost.
/// A trace without footer is never mistaken for a complete one: the strict reader refuses it.
///
/// Not thread-safe (one simulation thread writes it; its own writer thread only takes finished
/// blocks). Memory: one block buffer, up to `BlockPipeline.maxQueued` queued copies, one
/// compressed buffer, the string table and 48 bytes of index per block.
public final class TraceWriter {
    public private(set) var header: TraceHeader
    public let options: TraceWriterOptions

    private enum Status { case open, finished, failed }
    @exclusivity(unchecked) private var status = Status.open
    private let pipeline: BlockPipeline
    private let state: EncoderState
    @exclusivity(unchecked) private var encoder: RecordEncoder

    /// The block being filled. Records are encoded straight into it: head, a length byte, the
    /// body; then the length is patched (widened if the body reached 128 bytes) and any string
    /// definitions the record needs are slid in before it.
    private let block = ByteBuffer(capacity: 1 << 17)
    /// Scratch for definitions and for a record moved to the next block.
    private let scratch = ByteBuffer(capacity: 256)
    @exclusivity(unchecked) private var blockRecords = 0
    @exclusivity(unchecked) private var blockFirstTime = SimTime.zero
    @exclusivity(unchecked) private var previousTime: Int64 = 0
    private var blockFirstIndex: UInt64 = 0
    /// Format 2 record-head time codes.
    private let headCodes: Bool
    private var blocksSubmitted = 0

    /// Records appended so far.
    @exclusivity(unchecked) public private(set) var recordCount: UInt64 = 0
    /// Blocks written to the file so far (with the writer thread, blocks still queued are not).
    public var blockCount: Int { pipeline.blocksWritten }
    /// Records appended to the block being filled (0: the next record starts a new block, unless
    /// it overflows `maxBlockBytes` of a block that is still empty — impossible).
    public var pendingRecordCount: Int { blockRecords }
    /// Bytes written to the file so far.
    public var bytesWritten: Int { pipeline.bytesWritten }
    /// Distinct interned strings so far.
    public var stringCount: Int { state.interner.strings.count }

    /// Creates (truncates) the trace file at `path` and writes the header.
    public convenience init(path: String, header: TraceHeader, options: TraceWriterOptions = .init()) throws(TraceError) {
        try options.validate()
        let compressor = try ZstdCompressor.traceBlocks(level: options.compressionLevel)
        let sink = try TraceSink(path: path, sync: options.syncEachBlock)
        try self.init(header: header, options: options, sink: sink, compressor: compressor)
    }

    /// A writer that keeps the trace in memory (`bytes`): for tests and fuzzing. `limit` makes
    /// writes past that many bytes fail like a full disk (tests of write errors).
    public convenience init(inMemory header: TraceHeader, options: TraceWriterOptions = .init(), limit: Int = .max) throws(TraceError) {
        try options.validate()
        let compressor = try ZstdCompressor.traceBlocks(level: options.compressionLevel)
        try self.init(header: header, options: options, sink: TraceSink(memory: (), limit: limit), compressor: compressor)
    }

    private init(header: TraceHeader, options: TraceWriterOptions, sink: TraceSink, compressor: ZstdCompressor) throws(TraceError) {
        var header = header
        header.majorVersion = options.formatMajor
        header.minorVersion = TraceFormat.minorVersion
        self.options = options
        headCodes = options.formatMajor >= 2
        if options.formatMajor < 2 { header.strings = [] }
        self.header = header
        state = EncoderState(body: block, formatMajor: options.formatMajor)
        encoder = RecordEncoder(state: state)
        for (i, s) in header.strings.enumerated() where state.interner.predefine(s) != UInt32(i) {
            throw .invalidHeader("predefined string \"\(s)\" repeats")
        }
        try sink.write(header.encoded(major: options.formatMajor))
        pipeline = BlockPipeline(committer: BlockCommitter(sink: sink, compressor: compressor), background: options.writerThread)
    }

    deinit { pipeline.stop() }

    /// The trace bytes of an in-memory writer (empty for a file writer), once every submitted
    /// block is written.
    public var bytes: [UInt8] {
        try? pipeline.drain()
        return pipeline.sink.memory
    }

    /// Format 2: makes `strings` (unique) the header's predefined strings, ids `0 ..< count`,
    /// defined for every block, and rewrites the header. Only before anything else is interned
    /// or appended; otherwise (and for format 1) it does nothing and returns false.
    @discardableResult
    public func predefine(_ strings: [String]) throws(TraceError) -> Bool {
        guard status == .open else { throw .writerClosed }
        guard options.formatMajor >= 2, recordCount == 0, blocksSubmitted == 0, state.interner.strings.isEmpty else { return false }
        for (i, s) in strings.enumerated() where state.interner.predefine(s) != UInt32(i) {
            throw .invalidHeader("predefined string \"\(s)\" repeats")
        }
        header.strings = strings
        do { try pipeline.replaceHeader(header.encoded(major: options.formatMajor)) } catch {
            status = .failed
            throw error
        }
        return true
    }

    /// Interns `s` once; `RecordEncoder.string(_: InternedString)` then writes it without hashing.
    public func intern(_ s: String) -> InternedString { state.interner.intern(s) }

    /// Set while a body closure runs: re-entrant appends are refused (the hot fields skip the
    /// runtime exclusivity checks, which cost more than encoding a record).
    @exclusivity(unchecked) private var inBody = false

    /// Appends one record. `body` writes the record's fields; it runs once, synchronously, and
    /// must not call back into the writer.
    /// - Throws: `TraceError.io` when a full block cannot be written, `.recordTooLarge`,
    ///   `.writerClosed` after `finish` or an earlier failure.
    @inline(__always)
    public func append(kind: UInt16, time: SimTime, _ body: (inout RecordEncoder) -> Void) throws(TraceError) {
        guard status == .open else { throw .writerClosed }
        precondition(!inBody, "TraceWriter.append called from inside a record body")
        let start = beginRecord(kind: kind, time: time)
        inBody = true
        encoder.recordTime = time
        body(&encoder)
        inBody = false
        if try commit(kind: kind, start: start, time: time) {
            // It did not fit: the block went out without it. Encode it again as the next block's
            // first record (its context fields and string definitions start afresh there);
            // alone in an empty block it cannot overflow again.
            let again = beginRecord(kind: kind, time: time)
            inBody = true
            body(&encoder)
            inBody = false
            _ = try commit(kind: kind, start: again, time: time)
        }
    }

    /// Appends a record without body.
    public func append(kind: UInt16, time: SimTime) throws(TraceError) {
        guard status == .open else { throw .writerClosed }
        precondition(!inBody, "TraceWriter.append called from inside a record body")
        if try commit(kind: kind, start: beginRecord(kind: kind, time: time), time: time) {
            _ = try commit(kind: kind, start: beginRecord(kind: kind, time: time), time: time)
        }
    }

    /// Writes the record head and a one-byte body length placeholder; returns where the record starts.
    @inline(__always)
    private func beginRecord(kind: UInt16, time: SimTime) -> Int {
        let start = block.count
        if blockRecords == 0 { previousTime = 0 }  // the first record's delta is its absolute time: blocks stand alone
        block.appendVarint(UInt64(kind) &+ 1)
        if headCodes { block.appendHeadTimeCode(time.nanoseconds &- previousTime) } else { block.appendTimeCode(time.nanoseconds &- previousTime) }
        block.append(0)
        state.begin(at: block.count)
        return start
    }

    /// Finishes the record encoded in place from `start`: length, definitions, block limits.
    /// Returns true when the record did not fit: the block was written without it, and the
    /// caller encodes it again (its body depends on the block's context).
    private func commit(kind: UInt16, start: Int, time: SimTime) throws(TraceError) -> Bool {
        var bodyAt = state.bodyStart
        let bodyCount = block.count &- bodyAt
        if bodyCount < 0x80 {
            block.base[bodyAt &- 1] = UInt8(truncatingIfNeeded: bodyCount)
        } else {
            guard bodyCount <= TraceFormat.maxRecordBody else {
                block.count = start
                throw .recordTooLarge(bytes: bodyCount, limit: TraceFormat.maxRecordBody)
            }
            // Widen the length field: slide the body right.
            let extra = Varint.length(UInt64(bodyCount)) &- 1
            block.reserve(extra)
            (block.base + bodyAt + extra).update(from: block.base + bodyAt, count: bodyCount)
            block.count = bodyAt &- 1
            block.appendVarint(UInt64(bodyCount))
            bodyAt &+= extra
            block.count = bodyAt &+ bodyCount
        }
        if state.needsDefinitions { bodyAt &+= insertDefinitions(at: start) }
        if blockRecords > 0 && block.count > options.maxBlockBytes {
            block.count = start
            try flushBlock()
            return true
        } else if blockRecords == 0 {
            blockFirstTime = time
            guard block.count <= TraceFormat.maxBlockPayload else {
                let size = block.count
                block.count = start
                state.interner.nextBlock()  // the definitions just emitted are gone with it
                throw .recordTooLarge(bytes: size, limit: TraceFormat.maxBlockPayload)
            }
        }
        previousTime = time.nanoseconds
        blockRecords &+= 1
        recordCount &+= 1
        if blockRecords >= options.recordsPerBlock || block.count >= options.maxBlockBytes {
            try flushBlock()
        }
        return false
    }

    /// Slides the record at `start` right to put the definitions of its strings that this block
    /// does not have yet in front of it (a reader resolves an id from the definitions before it).
    /// Returns the bytes inserted.
    private func insertDefinitions(at start: Int) -> Int {
        scratch.removeAll()
        state.emitDefinitions(into: scratch)
        let n = scratch.count
        guard n > 0 else { return 0 }
        let recordBytes = block.count &- start
        block.reserve(n)
        (block.base + start + n).update(from: block.base + start, count: recordBytes)
        (block.base + start).update(from: scratch.base, count: n)
        block.count &+= n
        return n
    }

    /// Writes the pending records as a block now (no-op when none are pending) and waits until
    /// every block is in the file.
    public func flush() throws(TraceError) {
        guard status == .open else { throw .writerClosed }
        precondition(!inBody, "TraceWriter.flush called from inside a record body")
        try flushBlock()
        do { try pipeline.drain() } catch {
            status = .failed
            throw error
        }
    }

    /// Hands the block to the pipeline and starts the next one.
    private func flushBlock() throws(TraceError) {
        guard blockRecords > 0 else { return }
        let finished = FinishedBlock(number: blocksSubmitted, firstRecordIndex: blockFirstIndex, recordCount: blockRecords,
                                     firstTime: blockFirstTime, lastTime: SimTime(nanoseconds: previousTime))
        do { try pipeline.submit(block.bytes, finished) } catch {
            status = .failed
            throw error
        }
        blocksSubmitted += 1
        block.removeAll()
        blockRecords = 0
        blockFirstIndex = recordCount
        state.interner.nextBlock()
        state.context.reset()
    }

    /// Flushes, writes the footer (index, totals, `finalDigest`) and trailer, and closes the file.
    @discardableResult
    public func finish(finalDigest: UInt64) throws(TraceError) -> TraceWriteSummary {
        guard status == .open else { throw .writerClosed }
        precondition(!inBody, "TraceWriter.finish called from inside a record body")
        try flushBlock()
        let records = recordCount, strings = state.interner.strings.count, sync = options.syncEachBlock
        do {
            let summary = try pipeline.finish { (c) throws(TraceError) -> TraceWriteSummary in
                let footer = TraceFooter(offset: c.sink.offset, totalRecords: records, finalDigest: finalDigest,
                                         stringCount: strings, blocks: c.index)
                try c.sink.write(footer.encoded())
                if sync { try c.sink.sync() }
                try c.sink.finishClose()
                return TraceWriteSummary(records: records, blocks: c.index.count, uncompressedBytes: c.uncompressedTotal,
                                         fileBytes: c.sink.offset, finalDigest: finalDigest)
            }
            status = .finished
            return summary
        } catch {
            status = .failed
            throw error
        }
    }
}
