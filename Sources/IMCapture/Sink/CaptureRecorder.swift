import IMClient
import IMStore
import IMWire

/// Turns one device's SDK inputs and effects into a capture (`Docs/capture-format.md`).
///
/// The driver of a `ClientCore` — the simulated world, or a real network runtime — calls
/// `record(input:at:)` just before `core.handle(input, now:)` and `record(effects:at:)` with what
/// it returned, both with the same device-local ms; plus `recordAppStart` / `recordAppKill` when
/// the app process starts or dies (a new `ClientCore` over the same store) and `recordClockStep`
/// when the wall clock jumps. The recorder numbers connections itself (each `.openConnection`
/// effect starts the next one). Call it from one thread (the one that drives the core); it is
/// not `Sendable`.
///
/// Writing never throws from the hot path: the first I/O error is kept and thrown by `finish()`
/// (and later records are dropped). `finish()` writes the end of the file and, for a file sink,
/// renames `PATH.partial` to `PATH`.
public final class CaptureRecorder {
    public struct Options: Sendable {
        /// `hex` (readable, default) or `base64` (smaller) for frame bytes.
        public var bytesEncoding: CaptureBytesEncoding = .hex
        /// Add a decoded one-line summary of each frame to `in`/`out` records (informational:
        /// the bytes are the truth). Costs one extra decode per frame.
        public var frameSummaries = true
        public init() {}
    }

    public let header: CaptureHeader
    public let options: Options
    private let sink: any CaptureSink
    private var failure: CaptureError?
    private var finished = false
    /// The connection the core currently owns (nil between connections).
    public private(set) var currentConnection: Int?
    private var connectionCount = 0
    private var summaryIn: StreamDecoder?
    private var summaryOut: StreamDecoder?
    /// Records written (the header not counted).
    public private(set) var recordCount = 0

    /// Starts a capture on `sink`: the header line is written at once.
    public init(header: CaptureHeader, sink: any CaptureSink, options: Options = Options()) {
        self.header = header
        self.sink = sink
        self.options = options
        write(header.json)
    }

    /// Starts a capture file (`PATH.partial` until `finish()`; `.zst` → zstd-compressed).
    public convenience init(header: CaptureHeader, path: String, options: Options = Options()) throws(CaptureError) {
        self.init(header: header, sink: try CaptureFileSink(path: path), options: options)
    }

    // MARK: - Recording

    /// An input about to be handed to the core at device time `localMs`.
    public func record(input: ClientInput, at localMs: Int64) {
        switch input {
        case .api(let call): add(localMs, .api(call))
        case .transport(.opened): add(localMs, .opened(conn: currentConnection ?? 0))
        case .transport(.bytes(let b)): add(localMs, .bytesIn(conn: currentConnection ?? 0, bytes: b))
        case .transport(.closed(let reason)):
            add(localMs, .closed(conn: currentConnection ?? 0, reason: reason))
            currentConnection = nil
        case .timerFired(let t): add(localMs, .timer(t))
        case .lifecycle(.foreground): add(localMs, .app(.foreground))
        case .lifecycle(.background): add(localMs, .app(.background))
        case .networkChanged(let available): add(localMs, .network(available: available))
        }
    }

    /// The effects the core returned for the last input (timers and notes are not recorded:
    /// timers that fire are inputs, notes are the core's internals).
    public func record(effects: [ClientEffect], at localMs: Int64) {
        for e in effects {
            switch e {
            case .openConnection:
                connectionCount += 1
                currentConnection = connectionCount
                add(localMs, .open(conn: connectionCount))
            case .send(let b, _): add(localMs, .bytesOut(conn: currentConnection ?? 0, bytes: b))
            case .closeConnection:
                add(localMs, .close(conn: currentConnection ?? 0))
                currentConnection = nil
            case .callback(let cb): add(localMs, .callback(cb))
            case .setTimer, .cancelTimer, .note: break
            }
        }
    }

    /// A record built by a driver that is not a core's (an importer): inputs may say why they
    /// were inferred. Connection numbering follows `open`, `close` and `closed` as usual.
    public func record(_ event: CaptureEvent, at localMs: Int64, inferred: String? = nil) {
        switch event {
        case .open(let c): connectionCount = c; currentConnection = c
        case .close, .closed: currentConnection = nil
        case .app(.kill): currentConnection = nil
        default: break
        }
        add(localMs, event, inferred: inferred)
    }

    /// The app process started: a new `ClientCore` over the same store follows.
    public func recordAppStart(at localMs: Int64) { add(localMs, .app(.start)) }

    /// The app process died: its connection, timers and memory are gone (no core input).
    public func recordAppKill(at localMs: Int64) {
        add(localMs, .app(.kill))
        currentConnection = nil
    }

    /// The device wall clock stepped by `byMs`; `localMs` is the time after the step.
    public func recordClockStep(byMs: Int64, at localMs: Int64) { add(localMs, .clock(stepMs: byMs)) }

    /// A snapshot of the store (optional; replay compares it with the replayed store).
    public func recordSnapshot(of store: IMStore, at localMs: Int64) { add(localMs, .snapshot(StoreSnapshot.of(store))) }

    /// Flushes and closes the capture; a file sink renames its temporary file into place.
    /// Throws the first error met while recording.
    public func finish() throws(CaptureError) {
        guard !finished else { return }
        finished = true
        if let failure {
            sink.abandon()
            throw failure
        }
        do { try sink.finish() } catch {
            sink.abandon()
            throw error
        }
    }

    /// Gives up the capture (a file sink deletes its temporary file).
    public func abandon() {
        finished = true
        sink.abandon()
    }

    // MARK: - Writing

    private func add(_ t: Int64, _ event: CaptureEvent, inferred: String? = nil) {
        var frames: [String]?
        if options.frameSummaries {
            switch event {
            case .open:
                summaryIn = StreamDecoder(direction: .serverToClient, maxFrameSize: header.config.maxFrameSize, obfuscated: header.config.obfuscatedStream)
                summaryOut = StreamDecoder(direction: .clientToServer, maxFrameSize: header.config.maxFrameSize, obfuscated: header.config.obfuscatedStream)
            case .bytesIn(_, let b): frames = summarize(b, &summaryIn, .serverToClient)
            case .bytesOut(_, let b): frames = summarize(b, &summaryOut, .clientToServer)
            default: break
            }
        }
        recordCount += 1
        write(CaptureLineCodec.encode(CaptureRecord(t: t, event: event, inferred: inferred), bytes: options.bytesEncoding, frames: frames))
    }

    private func summarize(_ b: [UInt8], _ decoder: inout StreamDecoder?, _ dir: WireDirection) -> [String]? {
        guard header.framing == .stream, decoder != nil else { return nil }
        guard let fs = try? decoder!.feed(b) else {
            decoder = nil
            return ["(does not decode)"]
        }
        return fs.map { FrameText.headerLine($0, direction: dir) }
    }

    private func write(_ value: JSONValue) {
        guard failure == nil, !finished else { return }
        var bytes = value.serialized()
        bytes.append(0x0A)
        do { try sink.write(bytes) } catch { failure = error }
    }
}
