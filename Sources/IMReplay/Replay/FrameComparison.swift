import IMWire

/// Frame-by-frame comparison of what the client sent, for captures whose socket writes cannot be
/// matched one to one with the core's: imported captures (TCP segments and reads are not the SDK's
/// writes; inputs are inferred) and message-framing captures (the core speaks stream framing).
/// Each side is a queue of connection opens, frames and closes in order; equal heads are matched
/// as they arrive, so a write seen a little later than the core made it is not a divergence.
struct FrameComparison {
    enum Item: Equatable {
        case open
        case close
        /// The frame in message framing (independent of the stream framing and of how writes split).
        case frame([UInt8])
    }

    struct Entry {
        var item: Item
        var frame: Frame?
        var line: Int
        var t: Int64
    }

    private(set) var captured: [Entry] = []
    private(set) var replayed: [Entry] = []
    private(set) var matched = 0
    private var capturedDecoder: StreamDecoder?
    private var replayedDecoder: StreamDecoder?
    let framing: CaptureFraming
    let maxFrameSize: Int
    let obfuscated: Bool

    init(framing: CaptureFraming, maxFrameSize: Int, obfuscated: Bool) {
        self.framing = framing
        self.maxFrameSize = maxFrameSize
        self.obfuscated = obfuscated
    }

    private func decoder() -> StreamDecoder {
        StreamDecoder(direction: .clientToServer, maxFrameSize: maxFrameSize, obfuscated: obfuscated)
    }

    private static func entries(_ frames: [Frame], line: Int, t: Int64) -> [Entry] {
        frames.map { Entry(item: .frame((try? MessageFraming.encode($0, direction: .clientToServer)) ?? []), frame: $0, line: line, t: t) }
    }

    mutating func capturedOpen(line: Int, t: Int64) {
        capturedDecoder = decoder()
        captured.append(Entry(item: .open, line: line, t: t))
    }

    mutating func capturedClose(line: Int, t: Int64) { captured.append(Entry(item: .close, line: line, t: t)) }

    /// A captured write: stream bytes (any split) or one message.
    mutating func capturedBytes(_ b: [UInt8], line: Int, t: Int64) {
        switch framing {
        case .message:
            if let f = try? MessageFraming.decode(b, direction: .clientToServer) { captured += Self.entries([f], line: line, t: t) }
        case .stream:
            if capturedDecoder == nil { capturedDecoder = decoder() }
            captured += Self.entries((try? capturedDecoder!.feed(b)) ?? [], line: line, t: t)
        }
    }

    mutating func replayedOpen(line: Int, t: Int64) {
        replayedDecoder = decoder()
        replayed.append(Entry(item: .open, line: line, t: t))
    }

    mutating func replayedClose(line: Int, t: Int64) { replayed.append(Entry(item: .close, line: line, t: t)) }

    /// The core's write (always stream framing).
    mutating func replayedBytes(_ b: [UInt8], line: Int, t: Int64) {
        if replayedDecoder == nil { replayedDecoder = decoder() }
        replayed += Self.entries((try? replayedDecoder!.feed(b)) ?? [], line: line, t: t)
    }

    /// Matches equal heads; returns the first pair that differs (either side may be missing
    /// only when `atEnd`).
    mutating func match(atEnd: Bool) -> (captured: Entry?, replayed: Entry?)? {
        var n = 0
        while n < captured.count, n < replayed.count {
            if captured[n].item != replayed[n].item { return (captured[n], replayed[n]) }
            n += 1
        }
        matched += n
        captured.removeFirst(n)
        replayed.removeFirst(n)
        if atEnd, !captured.isEmpty || !replayed.isEmpty { return (captured.first, replayed.first) }
        // A connection boundary on one side while the other still owes frames of the old one.
        if let c = captured.first, let i = replayed.firstIndex(where: { $0.item == .open }), c.item != .open, i == 0 {
            return (c, replayed[0])
        }
        if let r = replayed.first, let i = captured.firstIndex(where: { $0.item == .open }), r.item != .open, i == 0 {
            return (captured[0], r)
        }
        return nil
    }

    static func describe(_ e: Entry?) -> String {
        guard let e else { return "nothing" }
        switch e.item {
        case .open: return "open (a new connection)"
        case .close: return "close"
        case .frame: return e.frame.map { FrameText.headerLine($0, direction: .clientToServer) } ?? "frame"
        }
    }

    static func details(_ who: String, _ e: Entry?) -> [String] {
        guard let e, let f = e.frame else { return ["\(who): \(describe(e))"] }
        return ["\(who) (line \(e.line)):"] + FrameText.describe(f, direction: .clientToServer).split(separator: "\n").map { "  " + $0 }
    }

    /// Converts one message-framing frame to stream bytes (what the core reads); stream bytes pass.
    static func streamBytes(_ b: [UInt8], framing: CaptureFraming, direction: WireDirection) -> [UInt8] {
        guard framing == .message else { return b }
        guard let f = try? MessageFraming.decode(b, direction: direction),
              let s = try? StreamFraming.encode(f, direction: direction, obfuscated: false) else { return [] }
        return s
    }
}
