import Foundation
import Testing
@testable import IMTrace
@testable import IMTraceFormat
import SimKernel

/// The writer thread (`TraceWriterOptions.writerThread`, on by default) compresses and writes
/// blocks off the recording thread: the file must be the same, byte for byte, and a write
/// failure on the thread must reach the caller.
@Suite struct WriterThreadTests {
    private func synthetic(_ records: [SyntheticTraceStream.Record], thread: Bool, perBlock: Int, flushEvery: Int? = nil,
                           limit: Int = .max) -> (bytes: [UInt8], error: TraceError?, appended: Int) {
        let options = TraceWriterOptions(compressionLevel: 1, recordsPerBlock: perBlock, writerThread: thread)
        let w = try! TraceWriter(inMemory: testHeader(seed: 9), options: options, limit: limit)
        var appended = 0
        do throws(TraceError) {
            for (i, r) in records.enumerated() {
                try SyntheticTraceStream.append(r, to: w)
                appended += 1
                if let f = flushEvery, i % f == f - 1 { try w.flush() }
            }
            try w.finish(finalDigest: 0x7EAD)
            return (w.bytes, nil, appended)
        } catch {
            return (w.bytes, error, appended)
        }
    }

    @Test func theThreadWritesTheSameBytesAsInline() throws {
        let records = SyntheticTraceStream.records(seed: 9, count: 20_000)
        for (perBlock, flushEvery) in [(512, nil), (64, 1_000), (8192, 333)] as [(Int, Int?)] {
            let inline = synthetic(records, thread: false, perBlock: perBlock, flushEvery: flushEvery)
            let threaded = synthetic(records, thread: true, perBlock: perBlock, flushEvery: flushEvery)
            #expect(inline.error == nil && threaded.error == nil)
            #expect(threaded.bytes == inline.bytes, "\(perBlock) records/block, flush every \(flushEvery ?? 0)")
            let r = try TraceReader(bytes: threaded.bytes)
            #expect(try readAll(r).map(\.1) == records)
        }
    }

    @Test func flushWaitsForTheThreadAndCountsWhatIsInTheFile() throws {
        let w = try TraceWriter(inMemory: testHeader(), options: TraceWriterOptions(recordsPerBlock: 100))
        for r in SyntheticTraceStream.records(seed: 3, count: 1_050) { try SyntheticTraceStream.append(r, to: w) }
        try w.flush()
        #expect(w.blockCount == 11)
        #expect(w.bytesWritten == w.bytes.count)
        let r = try TraceReader(bytes: w.bytes, mode: .salvage)
        #expect(r.blocks.count == 11)
        #expect(try readAll(r).count == 1_050)
    }

    /// A full disk while the thread writes block 2: the error reaches a later call with the
    /// thread (at once inline), nothing after it is written, the writer refuses more records,
    /// and the file holds the header and the two blocks before it.
    @Test func aWriteFailureOnTheThreadReachesTheCaller() throws {
        let records = SyntheticTraceStream.records(seed: 4, count: 5_000)
        let clean = synthetic(records, thread: false, perBlock: 256)
        let blocks = try TraceReader(bytes: clean.bytes).blocks
        let limit = blocks[2].offset + 10
        for thread in [false, true] {
            let got = synthetic(records, thread: thread, perBlock: 256, limit: limit)
            #expect(got.error == .io(path: "<memory>", operation: "write", errno: ENOSPC), "thread \(thread)")
            if thread {
                // Noticed by a later append (or finish), but never more than the queue allows.
                #expect(got.appended >= 3 * 256 && got.appended <= (3 + BlockPipeline.maxQueued + 1) * 256)
            } else {
                #expect(got.appended == 3 * 256 - 1)  // the append that filled block 2 threw
            }
            #expect(got.bytes == Array(clean.bytes[0..<blocks[2].offset]))
            let salvaged = try TraceReader(bytes: got.bytes, mode: .salvage)
            #expect(salvaged.blocks.count == 2)
            #expect(try readAll(salvaged).map(\.1) == Array(records[0..<512]))
        }
        // After the failure the writer is closed.
        let w = try TraceWriter(inMemory: testHeader(seed: 4), options: TraceWriterOptions(compressionLevel: 1, recordsPerBlock: 256),
                                limit: limit)
        var failure: TraceError?
        do throws(TraceError) {
            for r in records { try SyntheticTraceStream.append(r, to: w) }
            try w.flush()
        } catch { failure = error }
        #expect(failure != nil)
        #expect(throws: TraceError.writerClosed) { try w.append(kind: 1, time: .zero) }
        #expect(throws: TraceError.writerClosed) { try w.finish(finalDigest: 0) }
    }

    /// A whole recorded run: writer thread on and off give the same trace.
    @Test func aRecordedRunIsTheSameWithAndWithoutTheThread() throws {
        let scenario = try smallScenario()
        let threaded = try recordRun(scenario, options: TraceRecorderOptions(writer: TraceWriterOptions(recordsPerBlock: 64)))
        let inline = try recordRun(scenario, options: TraceRecorderOptions(writer: TraceWriterOptions(recordsPerBlock: 64)).singleThreaded)
        #expect(threaded.bytes == inline.bytes)
        #expect(try TraceReader(bytes: threaded.bytes).blocks.count > 3)
    }
}
