import IMClient
import IMStore
import IMWire
import SimKernel

/// How to replay a capture.
public struct ReplayOptions: Sendable {
    /// Client bug switches of the replayed core; nil = the recording's (the header's `bugs`).
    public var bugs: ClientBugs?
    /// Capture records shown before and after the divergence.
    public var context = 5
    public init(bugs: ClientBugs? = nil, context: Int = 5) {
        self.bugs = bugs
        self.context = context
    }
}

/// Replays a capture into a real `ClientCore` with a fresh in-memory store: every input record
/// is fed at its captured device time (`now = t`), app starts create a new core over the same
/// store, kills drop it; the core's outputs for each input are compared with the captured ones
/// (frames byte for byte, callbacks field by field, snapshots against the replayed store), and
/// the per-device checks (`ReplayChecks`) watch the replayed core. Streaming: memory holds the
/// store, the core and a few context lines, not the capture. Deterministic: the same capture and
/// options give the same report.
public final class Replayer {
    public let header: CaptureHeader
    public let options: ReplayOptions
    private let reader: CaptureReader
    private let config: ClientConfig
    private let store: IMStore
    private var core: ClientCore?
    private let checks: ReplayChecks
    private var tap: FrameTap
    // Replayed connection numbering (as the recorder numbers them).
    private var replayedConn: Int?
    private var replayedConnCount = 0
    // The group being compared: the current input and its captured / replayed outputs.
    private var input: CaptureRecord?
    private var inputText: Recent?
    private var captured: [CaptureRecord] = []
    private var replayed: [CaptureEvent] = []
    /// Captured snapshots of the group (compared when it closes: the store changes only with inputs).
    private var snapshots: [CaptureRecord] = []
    // Report state.
    private var recordCount = 0
    private var inputCount = 0
    private var outputsCompared = 0
    private var divergentInputs = 0
    private var divergence: ReplayDivergence?
    /// The last records, described only when a divergence report needs them (building every
    /// record's text was most of a replay's cost).
    private var recent: [Recent] = []
    private var recentCapacity: Int { options.context + 256 }
    private var afterNeeded = 0
    private var statuses: [String] = []
    private var notes: [String] = []
    private var lastT: Int64
    private var lastLine = 0
    /// Imported and message-framing captures: frames are compared as a stream per connection
    /// (`FrameComparison`), not write by write; imported ones have no callbacks to compare.
    private let frameMode: Bool
    private let compareCallbacks: Bool
    private var frames: FrameComparison
    private var framesDiverged = false

    public init(reader: CaptureReader, options: ReplayOptions = ReplayOptions()) throws(CaptureError) {
        self.reader = reader
        header = reader.header
        self.options = options
        // Message framing (WebSocket) is replayed by converting each frame to stream framing for
        // the core and comparing the core's frames with the captured ones.
        frameMode = header.imported != nil || header.framing == .message
        compareCallbacks = header.imported == nil
        frames = FrameComparison(framing: header.framing, maxFrameSize: header.config.maxFrameSize, obfuscated: header.config.obfuscatedStream)
        var c = header.config
        if let b = options.bugs { c.bugs = b }
        config = c
        do { store = try IMStore(location: .memory, options: header.storeOptions) } catch {
            throw CaptureError(.io, line: 0, "cannot open an in-memory store: \(error)")
        }
        checks = ReplayChecks(config: c, startMs: header.startMs, device: header.identity.deviceId)
        checks.timersFollow = c.bugs == header.config.bugs
        checks.virtualClock = header.sdk.hasPrefix(WorldCaptureObserver.sdkNamePrefix)
        tap = FrameTap(userId: header.identity.userId, maxFrameSize: header.config.maxFrameSize, obfuscated: header.config.obfuscatedStream)
        lastT = header.startMs
        if let origin = header.imported {
            notes.append("imported from \(origin): only the client's frames and connections are compared (the capture has no callbacks or store)")
        }
        if !header.freshStore {
            notes.append("the capture did not start with an empty database (freshStore false): messageIds and clientUniqueIds may differ")
        }
    }

    public convenience init(path: String, options: ReplayOptions = ReplayOptions(),
                            maxLineLength: Int = CaptureReader.defaultMaxLineLength) throws(CaptureError) {
        try self.init(reader: try CaptureReader(path: path, maxLineLength: maxLineLength), options: options)
    }

    /// Replays the whole capture. Throws only for a malformed capture (the error names the line).
    public func run() throws(CaptureError) -> ReplayReport {
        while let r = try reader.next() {
            step(r)
        }
        if let torn = reader.tornTail {
            notes.append("warning: the capture ends in a torn line (line \(torn.line): \(torn.message)); replayed the \(recordCount) complete records before it")
        }
        closeGroup()
        compareFrames(atEnd: true)
        checks.finish(store: store, serverTimes: tap.serverTimes, t: lastT, line: lastLine)
        let recordedBugs = header.bugs.map(\.rawValue)
        let replayedBugs = BugSwitch.allCases.filter { $0.side == .client && config.bugs.contains(ClientBugs([$0])) }.map(\.rawValue)
        return ReplayReport(
            capture: reader.origin, device: header.identity.deviceId, user: header.identity.userId, sdk: header.sdk,
            recordedBugs: recordedBugs, replayedBugs: replayedBugs, records: recordCount, inputs: inputCount,
            outputsCompared: outputsCompared + frames.matched, divergence: divergence, divergentInputs: divergentInputs,
            divergenceExpected: config.bugs != header.config.bugs, violations: checks.violations,
            ledger: ReplayLedger.read(store, identity: header.identity, statuses: statuses), notes: notes)
    }

    // MARK: - One record

    private func step(_ r: CaptureRecord) {
        recordCount += 1
        lastT = r.t
        lastLine = r.line
        var frames: [Frame]?
        switch r.event {
        case .open: tap.open()
        case .bytesIn(_, let b):
            let before = tap.messages.count
            frames = tap.inbound(FrameComparison.streamBytes(b, framing: header.framing, direction: .serverToClient), t: r.t, line: r.line)
            for m in tap.messages[before...] { checks.delivered(m) }
        case .bytesOut(_, let b): frames = tap.outbound(FrameComparison.streamBytes(b, framing: header.framing, direction: .clientToServer), t: r.t, line: r.line)
        case .closed, .close: tap.close()
        default: break
        }
        let isOut: Bool = if case .bytesOut = r.event { true } else { false }
        let text = Recent(line: r.line, event: r.event, frames: frames, outbound: isOut)
        remember(text)

        if r.event.isOutput, frameMode {
            switch r.event {
            case .open: self.frames.capturedOpen(line: r.line, t: r.t)
            case .close: self.frames.capturedClose(line: r.line, t: r.t)
            case .bytesOut(_, let b): self.frames.capturedBytes(b, line: r.line, t: r.t)
            case .callback where compareCallbacks: captured.append(r)
            case .snapshot: snapshots.append(r)
            default: break
            }
            compareFrames(atEnd: false)
            return
        }
        if r.event.isOutput {
            if case .snapshot = r.event {
                snapshots.append(r)
            } else {
                captured.append(r)
            }
            return
        }
        closeGroup()
        input = r
        inputText = text
        inputCount += 1
        feed(r)
    }

    private func feed(_ r: CaptureRecord) {
        let clientInput: ClientInput
        switch r.event {
        case .app(.start):
            startCore()
            return
        case .app(.kill):
            checks.appKilled(t: r.t, line: r.line)
            core = nil
            replayedConn = nil
            return
        case .clock(let ms):
            checks.clockStepped(byMs: ms)
            return
        case .api(let call): clientInput = .api(call)
        case .opened: clientInput = .transport(.opened)
        case .bytesIn(_, let b): clientInput = .transport(.bytes(FrameComparison.streamBytes(b, framing: header.framing, direction: .serverToClient)))
        case .closed(_, let reason): clientInput = .transport(.closed(reason))
        case .timer(let t): clientInput = .timerFired(t)
        case .network(let a): clientInput = .networkChanged(available: a)
        case .app(.foreground): clientInput = .lifecycle(.foreground)
        case .app(.background): clientInput = .lifecycle(.background)
        case .open, .bytesOut, .close, .callback, .snapshot: return
        }
        if core == nil {
            if notes.count < 20 { notes.append("line \(r.line): an input before any app start — the SDK instance is created there") }
            startCore()
        }
        // Once the replayed core's outputs differ from the capture (a fixed build), the captured
        // server frames no longer answer its requests: checks that wait for an answer stop.
        if divergence != nil { checks.serverAnswersFollow = false }
        checks.input(clientInput, t: r.t, line: r.line)
        let effects = core!.handle(clientInput, now: DeviceTime(milliseconds: r.t))
        if case .transport(.closed) = clientInput { replayedConn = nil }
        replayed = convert(effects)
        if frameMode {
            for e in replayed {
                switch e {
                case .open: frames.replayedOpen(line: r.line, t: r.t)
                case .close: frames.replayedClose(line: r.line, t: r.t)
                case .bytesOut(_, let b): frames.replayedBytes(b, line: r.line, t: r.t)
                default: break
                }
            }
            replayed = replayed.filter { if case .callback = $0 { compareCallbacks } else { false } }
            compareFrames(atEnd: false)
        }
        checks.effects(effects, store: store, serverTimes: tap.serverTimes, t: r.t, line: r.line)
    }

    private func startCore() {
        checks.appStarted()
        core = ClientCore(identity: header.identity, config: config, store: store)
        replayedConn = nil
    }

    /// The replayed core's effects as the records a recorder would have written.
    private func convert(_ effects: [ClientEffect]) -> [CaptureEvent] {
        var out: [CaptureEvent] = []
        for e in effects {
            switch e {
            case .openConnection:
                replayedConnCount += 1
                replayedConn = replayedConnCount
                out.append(.open(conn: replayedConnCount))
            case .send(let b, _): out.append(.bytesOut(conn: replayedConn ?? 0, bytes: b))
            case .closeConnection:
                out.append(.close(conn: replayedConn ?? 0))
                replayedConn = nil
            case .callback(let cb):
                if case .connectionStatus(let s) = cb, statuses.last != s.description { statuses.append(s.description) }
                out.append(.callback(cb))
            case .setTimer, .cancelTimer, .note:
                break
            }
        }
        return out
    }

    // MARK: - Comparing

    private static func key(_ e: CaptureEvent) -> JSONValue { CaptureLineCodec.encode(CaptureRecord(t: 0, event: e)).canonical }

    /// Whether a captured and a replayed output are the same record — the same answer as
    /// comparing their canonical JSON forms (`key`), without building them in the common cases:
    /// frames and connection numbers compare directly (their JSON is a function of exactly those
    /// fields), different kinds differ, and other records compare as written (one encoder, one
    /// field order) before falling back to the canonical forms.
    static func sameOutput(_ a: CaptureEvent, _ b: CaptureEvent) -> Bool {
        switch (a, b) {
        case let (.bytesOut(c1, b1), .bytesOut(c2, b2)): return c1 == c2 && b1 == b2
        case let (.open(c1), .open(c2)), let (.close(c1), .close(c2)): return c1 == c2
        case let (.callback(x), .callback(y)) where CallbackEquality.same(x, y): return true
        default:
            guard a.kind == b.kind else { return false }
            let x = CaptureLineCodec.encode(CaptureRecord(t: 0, event: a)), y = CaptureLineCodec.encode(CaptureRecord(t: 0, event: b))
            return x == y || x.canonical == y.canonical
        }
    }

    private func closeGroup() {
        defer {
            captured = []
            replayed = []
            snapshots = []
        }
        outputsCompared += captured.count
        let n = max(captured.count, replayed.count)
        guard let i = (0..<n).first(where: { k in
            k >= captured.count || k >= replayed.count || !Self.sameOutput(captured[k].event, replayed[k])
        }) else {
            for case let r in snapshots { if case .snapshot(let s) = r.event { compareSnapshot(s, r) } }
            return
        }
        let inputLine = input?.line ?? 0, inputT = input?.t ?? header.startMs
        divergentInputs += 1
        guard divergence == nil else { return }
        let line = i < captured.count ? captured[i].line : inputLine
        let t = i < captured.count ? captured[i].t : inputT
        var frameDiff: [String] = []
        if i < captured.count, i < replayed.count, case .bytesOut(_, let a) = captured[i].event, case .bytesOut(_, let b) = replayed[i] {
            frameDiff = describeFrames("captured", a) + describeFrames("replayed", b)
        }
        let before = window.filter { $0.line < line }.suffix(options.context)
        let atAndAfter = window.filter { $0.line >= line }
        divergence = ReplayDivergence(
            line: line, t: t, time: relativeTime(t, header.startMs), inputLine: inputLine, input: inputText?.text ?? "(no input yet)", index: i,
            captured: captured.map { describe($0.event) }, replayed: replayed.map { describe($0) }, frameDiff: frameDiff,
            context: before.map { "\($0.line): \($0.text)" } + atAndAfter.prefix(options.context + 1).map {
                ($0.line == line ? "▶ " : "") + "\($0.line): \($0.text)"
            })
        afterNeeded = max(0, options.context + 1 - atAndAfter.count)
    }

    /// Frame mode: the first frame (or open/close) where the core and the capture part ways.
    private func compareFrames(atEnd: Bool) {
        // After the first divergence the two frame streams no longer line up: stop comparing them.
        guard frameMode, !framesDiverged, let (c, rp) = frames.match(atEnd: atEnd) else { return }
        framesDiverged = true
        divergentInputs += 1
        guard divergence == nil else { return }
        let line = c?.line ?? rp?.line ?? lastLine, t = c?.t ?? rp?.t ?? lastT
        let before = window.filter { $0.line < line }.suffix(options.context)
        let atAndAfter = window.filter { $0.line >= line }
        divergence = ReplayDivergence(
            line: line, t: t, time: relativeTime(t, header.startMs), inputLine: input?.line ?? 0,
            input: inputText?.text ?? "(no input yet)", index: frames.matched,
            captured: [FrameComparison.describe(c)], replayed: [FrameComparison.describe(rp)],
            frameDiff: FrameComparison.details("captured", c) + FrameComparison.details("replayed", rp),
            context: before.map { "\($0.line): \($0.text)" } + atAndAfter.prefix(options.context + 1).map {
                ($0.line == line ? "▶ " : "") + "\($0.line): \($0.text)"
            })
        afterNeeded = max(0, options.context + 1 - atAndAfter.count)
    }

    private func describe(_ e: CaptureEvent) -> String {
        if case .bytesOut(_, let b) = e {
            return RecordText.describe(e, frames: RecordText.decodeWhole(b, direction: .clientToServer, obfuscated: config.obfuscatedStream,
                                                                         maxFrameSize: config.maxFrameSize), outbound: true)
        }
        return RecordText.describe(e)
    }

    private func describeFrames(_ who: String, _ bytes: [UInt8]) -> [String] {
        guard let frames = RecordText.decodeWhole(bytes, direction: .clientToServer, obfuscated: config.obfuscatedStream,
                                                   maxFrameSize: config.maxFrameSize) else {
            return ["\(who): \(bytes.count) bytes that do not decode: \(Hex.encode(bytes.prefix(64)))"]
        }
        var lines = ["\(who) (\(bytes.count) bytes, \(Hex.encode(bytes.prefix(24)))\(bytes.count > 24 ? "…" : "")):"]
        for f in frames {
            lines += FrameText.describe(f, direction: .clientToServer).split(separator: "\n").map { "  " + $0 }
        }
        return lines
    }

    private func compareSnapshot(_ s: StoreSnapshot, _ r: CaptureRecord) {
        let mine = StoreSnapshot.of(store)
        guard mine != s else { return }
        divergentInputs += 1
        guard divergence == nil else { return }
        var diffs: [String] = []
        if mine.inbox != s.inbox || mine.sendbox != s.sendbox {
            diffs.append("cursors: captured inbox \(s.inbox) sendbox \(s.sendbox), replayed inbox \(mine.inbox) sendbox \(mine.sendbox)")
        }
        let keys = Set(mine.conversations.map(\.conversation)).union(s.conversations.map(\.conversation)).sorted()
        for k in keys {
            let a = s.conversations.first { $0.conversation == k }, b = mine.conversations.first { $0.conversation == k }
            if a != b {
                diffs.append("\(k): captured \(a.map { "unread \($0.unread), \($0.messages.count) messages" } ?? "absent"), replayed \(b.map { "unread \($0.unread), \($0.messages.count) messages" } ?? "absent")")
            }
        }
        let before = window.filter { $0.line < r.line }.suffix(options.context)
        divergence = ReplayDivergence(
            line: r.line, t: r.t, time: relativeTime(r.t, header.startMs), inputLine: input?.line ?? 0, input: "store snapshot",
            index: 0, captured: ["snapshot"], replayed: diffs, frameDiff: [],
            context: before.map { "\($0.line): \($0.text)" } + ["▶ \(r.line): snapshot"])
        afterNeeded = options.context
    }

    private func remember(_ entry: Recent) {
        if afterNeeded > 0, divergence != nil {
            divergence!.context.append("\(entry.line): \(entry.text)")
            afterNeeded -= 1
        }
        recent.append(entry)
        // Enough to show the context of a group of outputs without keeping the capture; trimmed
        // in batches (removing one from the front per record moved the whole window each time).
        if recent.count > 2 * recentCapacity { recent.removeFirst(recent.count - recentCapacity) }
    }

    /// The last `recentCapacity` records (what the report may show).
    private var window: ArraySlice<Recent> { recent.suffix(recentCapacity) }

    /// A record kept for context; its text is built only when shown.
    struct Recent {
        var line: Int
        var event: CaptureEvent
        var frames: [Frame]?
        var outbound: Bool
        var text: String { RecordText.describe(event, frames: frames, outbound: outbound) }
    }
}
