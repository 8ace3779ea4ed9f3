import Foundation
import IMWorld
import SimKernel
import Testing
@testable import IMTrace
@testable import IMTraceFormat

/// Encoding on the writer thread (`TraceHandoff`) writes the file the simulation thread would.
@Suite struct HandoffTests {
    private func bytes(_ options: TraceRecorderOptions) throws -> [UInt8] {
        try recordRun(try smallScenario(), options: options).bytes
    }

    /// Small blocks put a checkpoint (the run's digest at that record) every few records: the
    /// digest handed over with each call must be the one the inline recorder reads.
    @Test func theWriterThreadWritesTheSameBytesAsTheSimulationThread() throws {
        for keep in [false, true] {
            for perBlock in [3, 64, 8192] {
                for level in [TraceLevel.events, .outcomes, .full] {
                    let threaded = TraceRecorderOptions(keepContent: keep, level: level,
                                                        writer: TraceWriterOptions(recordsPerBlock: perBlock))
                    let a = try bytes(threaded)
                    let b = try bytes(threaded.singleThreaded)
                    #expect(a == b, "keep \(keep), \(perBlock) a block, level \(level)")
                    let checkpoints = try readEntries(a).filter { isCheckpoint($0.event) }.count
                    #expect(checkpoints > 0)
                }
            }
        }
    }

    /// Many batches (a batch is `TraceHandoff.batchSize` calls) and a small queue: the writer
    /// thread runs them in order whatever the timing; ledger parts come out of the writer thread
    /// in place.
    @Test func manyBatchesAndASplitLedgerKeepTheirOrder() throws {
        let options = TraceRecorderOptions(writer: TraceWriterOptions(recordsPerBlock: 100), ledgerPartBytes: 40)
        let quickstart = try Scenario.load(pathOrName: "quickstart").0
        let (a, run) = try recordRun(quickstart, seed: 1, until: .seconds(180), options: options)
        let b = try recordRun(quickstart, seed: 1, until: .seconds(180), options: options.singleThreaded).bytes
        #expect(a == b)
        let entries = try readEntries(a)
        #expect(entries.count > TraceHandoff.batchSize, "more than one batch")
        #expect(try TraceLedgerView.read(try TraceReader(bytes: a)).ledger == run.ledger())
    }

    /// `flush` hands over what is pending and writes it as complete blocks mid-run.
    @Test func flushWritesWhatWasHandedOver() throws {
        let scenario = try smallScenario()
        let run = try ScenarioRun(scenario: scenario, seed: 5)
        let recorder = try TraceRecorder(inMemory: scenario, seed: 5, options: TraceRecorderOptions())
        recorder.attach(to: run)
        run.run(until: SimTime.zero + .seconds(10))
        try recorder.flush()
        let n = recorder.writer.recordCount
        #expect(n > 0)
        #expect(recorder.writer.pendingRecordCount == 0)
        let reader = try TraceReader(bytes: recorder.writer.bytes, mode: .salvage)
        #expect(reader.blocks.reduce(0) { $0 + $1.recordCount } == Int(n))
    }
}
