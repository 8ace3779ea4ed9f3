import SimKernel
import Testing
@testable import IMTraceFormat

/// `CoreTraceRecorder`, the simulator-free half of recording.
@Suite struct CoreRecorderTests {
    /// Every kernel record counts as a kernel event in the checkpoints, the room-wide workload
    /// event (kind 32) too: the readers number kernel events by record, so a checkpoint that
    /// skipped kind 32 (the recorder once counted kinds 1–19 only) renumbered every later event.
    @Test func checkpointsCountEveryKernelRecordAsTheReadersDo() throws {
        let writer = try TraceWriter(inMemory: testHeader(), options: TraceWriterOptions(recordsPerBlock: 3))
        let recorder = CoreTraceRecorder(writer: writer, options: TraceRecorderOptions(), epochMs: 0)
        let kernel: [KernelRecord] = [.appStart(device: 0), .workload(user: -1, kind: .burstLike), .appStart(device: 1),
                                      .workload(user: -1, kind: .burstLike), .heal, .appStart(device: 2), .end]
        for (i, k) in kernel.enumerated() {
            recorder.record(.kernel(k), at: SimTime(nanoseconds: Int64(i) * 1_000))
        }
        #expect(recorder.nextEvent == UInt64(kernel.count))
        try recorder.close(finalDigest: 0)

        let reader = try TraceEventReader(bytes: writer.bytes)
        var numbered: [UInt64?] = []
        var checkpoints = 0
        while let e = try reader.next() {
            if case .kernel = e.event { numbered.append(e.eventIndex) }
            if case .meta(.checkpoint) = e.event { checkpoints += 1 }
        }
        #expect(checkpoints > 2)  // several blocks, so later events are numbered from checkpoints
        #expect(numbered == (0..<UInt64(kernel.count)).map { $0 })
    }
}
