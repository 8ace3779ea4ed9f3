import IMZstd
import SimKernel

/// A finished block as the writer hands it over: its payload and what the index says of it.
struct FinishedBlock {
    var number: Int
    var firstRecordIndex: UInt64
    var recordCount: Int
    var firstTime: SimTime
    var lastTime: SimTime
}

/// Turns finished blocks into file bytes: CRC-32C of the payload, one zstd frame, the block
/// header, one `write`. Owns the sink, the compressor and the index. Used by one thread at a time.
final class BlockCommitter {
    let sink: TraceSink
    private let compressor: ZstdCompressor
    private var frame: [UInt8] = []
    private var output: [UInt8] = []
    private(set) var index: [TraceBlockInfo] = []
    private(set) var uncompressedTotal = 0

    init(sink: TraceSink, compressor: ZstdCompressor) {
        self.sink = sink
        self.compressor = compressor
    }

    func commit(_ payload: UnsafeRawBufferPointer, _ b: FinishedBlock) throws(TraceError) {
        let crc = CRC32C.checksum(payload)
        let bound = ZstdCompressor.bound(payload.count)
        if frame.count < bound { frame = [UInt8](repeating: 0, count: bound) }
        let result = frame.withUnsafeMutableBytes { dst in compressor.compress(payload, into: dst) }
        let clen: Int
        switch result {
        case .success(let n): clen = n
        case .failure(let f): throw .zstd(block: b.number, offset: sink.offset, message: f.message)
        }
        let info = TraceBlockInfo(
            number: b.number, offset: sink.offset, firstRecordIndex: b.firstRecordIndex, recordCount: b.recordCount,
            compressedLength: clen, uncompressedLength: payload.count, payloadChecksum: crc,
            firstTime: b.firstTime, lastTime: b.lastTime)
        output.removeAll(keepingCapacity: true)
        BlockHeader.encode(info, into: &output)
        output.append(contentsOf: frame[0..<clen])
        try sink.write(output)
        index.append(info)
        uncompressedTotal += payload.count
    }
}

/// Where a `TraceWriter` hands its finished blocks: committed inline before `submit` returns, or
/// copied and committed in order by a writer thread (`SerialWorker`) while the recording thread
/// goes on encoding the next block. The file is byte-for-byte the same either way. With the
/// thread, a killed process loses the blocks still queued, as an inline writer loses the block it
/// was filling: every block in the file is complete.
final class BlockPipeline {
    /// Blocks queued or being committed by the thread, at most (the block being filled aside).
    static let maxQueued = 2

    private typealias Item = (payload: [UInt8], block: FinishedBlock)
    private let committer: BlockCommitter
    private let worker: SerialWorker<Item>?
    /// The next block is copied into it, then swapped for a recycled one by `SerialWorker.submit`.
    private var item: Item
    private var inlineBlocks = 0
    private var headerBytes: Int

    init(committer: BlockCommitter, background: Bool) {
        self.committer = committer
        headerBytes = committer.sink.offset
        let empty = { Item([], FinishedBlock(number: 0, firstRecordIndex: 0, recordCount: 0, firstTime: .zero, lastTime: .zero)) }
        item = empty()
        worker = background ? SerialWorker(
            name: "imsim-trace-writer", maxQueued: Self.maxQueued, makeItem: empty,
            process: { [committer] (item: inout Item) throws(TraceError) -> Int in
                let block = item.block
                try item.payload.withBytes { (p) throws(TraceError) in try committer.commit(p, block) }
                item.payload.removeAll(keepingCapacity: true)
                return committer.sink.offset
            }) : nil
    }

    var sink: TraceSink { committer.sink }

    /// Rewrites the file header; only before the first block (the thread is idle then).
    func replaceHeader(_ bytes: [UInt8]) throws(TraceError) {
        precondition(blocksWritten == 0, "the header can only be replaced before the first block")
        try committer.sink.rewrite(bytes)
        headerBytes = committer.sink.offset
    }

    /// Blocks in the file so far.
    var blocksWritten: Int { worker?.status.processed ?? inlineBlocks }

    /// Bytes in the file so far.
    var bytesWritten: Int {
        guard let worker else { return committer.sink.offset }
        let s = worker.status
        return s.processed == 0 ? headerBytes : s.progress
    }

    /// Commits `payload` (inline) or queues a copy of it (waits while the queue is full).
    /// Throws the failure of an earlier block, or of this one when inline.
    func submit(_ payload: UnsafeRawBufferPointer, _ block: FinishedBlock) throws(TraceError) {
        guard let worker else {
            try committer.commit(payload, block)
            inlineBlocks += 1
            return
        }
        item.payload.removeAll(keepingCapacity: true)
        item.payload.append(contentsOf: payload)
        item.block = block
        try worker.submit(&item)
    }

    /// Waits until every submitted block is in the file; throws the first failure.
    func drain() throws(TraceError) { try worker?.drain() }

    /// Drains, stops the thread, then gives the committer to `body` on the calling thread.
    func finish<R>(_ body: (BlockCommitter) throws(TraceError) -> R) throws(TraceError) -> R {
        try drain()
        stop()
        return try body(committer)
    }

    /// Ends the writer thread (its owner must: the thread holds the worker).
    func stop() { worker?.stop() }
}
