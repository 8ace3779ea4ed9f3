import IMZstd
import IMReplay
import IMCapture
import IMClient
import IMStore
import IMWire
import SimKernel

/// `imsim fuzz capture`: mutated capture files, plain JSONL and zstd-compressed (mutated before
/// or after compression), read to the end and, when they read cleanly, replayed. Every input
/// must end in records or a `CaptureError` naming a line inside the input.
public struct CaptureFuzz: FuzzTarget {
    public static let name = "capture"
    public static let abstract = "Mutated capture JSONL and .jsonl.zst files through CaptureReader and the Replayer."

    let base: [UInt8]

    public init() {
        base = Self.makeBase()
    }

    /// A small valid capture: header, app start, connect, transport open, CONNECT out, CONNACK in,
    /// a send and a few network changes.
    static func makeBase() -> [UInt8] {
        var config = ClientConfig()
        config.bugs = []
        let header = CaptureHeader(identity: DeviceIdentity(userId: "alice", deviceId: "alice-phone", platform: .mobile),
                                   config: config, storeOptions: IMStore.Options(dedupByMessageUId: false), startMs: 1_000,
                                   sdk: "fuzz", source: "imsim fuzz capture")
        let sink = CaptureMemorySink()
        let rec = CaptureRecorder(header: header, sink: sink)
        guard let store = try? IMStore(location: .memory) else { return [] }
        var core = ClientCore(identity: header.identity, config: header.config, store: store)
        rec.recordAppStart(at: 1_000)
        var t: Int64 = 1_000
        func feed(_ input: ClientInput) {
            rec.record(input: input, at: t)
            rec.record(effects: core.handle(input, now: DeviceTime(milliseconds: t)), at: t)
            t += 50
        }
        feed(.api(.connect(token: "tok", timeLimitSeconds: 0)))
        feed(.transport(.opened))
        if let connack = try? StreamFraming.encode(.connack(Frame.Connack(status: .accepted, session: .init(userId: "alice", sessionId: "s", timestamp: 1_090))),
                                                   direction: .serverToClient) {
            feed(.transport(.bytes(connack)))
        }
        feed(.api(.send(conversation: ConversationKey(.privateChat, "bob"), objectName: "RC:TxtMsg", content: #"{"content":"hi"}"#,
                        pushText: nil, mentioned: false)))
        feed(.networkChanged(available: false))
        feed(.networkChanged(available: true))
        try? rec.finish()
        return sink.bytes
    }

    public mutating func fuzzOne(_ rng: inout RandomStream) -> FuzzOutcome {
        var text = base
        let compressed = rng.below(4) == 0
        FuzzRunner.mutate(&text, &rng)
        var input = text
        if compressed {
            guard let z = try? ZstdCompressor(level: 1, checksum: true, contentSize: true), let c = try? z.compressStream(text, end: true) else {
                return FuzzOutcome(inputBytes: 0, violation: "zstd compression failed")
            }
            input = c
            if rng.below(2) == 0 { FuzzRunner.mutate(&input, &rng) }
        }
        let lineCount = text.reduce(1) { $0 + ($1 == 0x0A ? 1 : 0) }
        do {
            let reader = try CaptureReader(bytes: input)
            var records = 0
            while try reader.next() != nil { records += 1 }
            if let torn = reader.tornTail, torn.line < 1 || torn.line > lineCount + 1 {
                return FuzzOutcome(inputBytes: input.count, violation: "torn tail names line \(torn.line) of \(lineCount)")
            }
            // A capture that reads cleanly replays (or fails with a CaptureError).
            let report = try Replayer(reader: try CaptureReader(bytes: input)).run()
            return FuzzOutcome(inputBytes: input.count, error: reader.tornTail.map { "torn:" + $0.kind.rawValue },
                               fingerprint: UInt64(records) << 32 | UInt64(report.records))
        } catch {
            // Decompressed text can hold more lines than the mutated text when the compressed
            // bytes were mutated; only plain text gives a line bound.
            if error.line < 0 || (!compressed && error.line > lineCount + 1) {
                return FuzzOutcome(inputBytes: input.count, error: error.kind.rawValue,
                                   violation: "error names line \(error.line) of \(lineCount): \(error)")
            }
            return FuzzOutcome(inputBytes: input.count, error: error.kind.rawValue, fingerprint: UInt64(error.line))
        }
    }
}
