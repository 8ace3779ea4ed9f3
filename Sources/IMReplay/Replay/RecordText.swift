import IMClient
import IMWire

/// One-line readable descriptions of capture records (replay reports, `imsim replay` context).
enum RecordText {
    static let maxLength = 220

    /// `frames`: decoded frames of an in/out record (from a decoder that saw the connection).
    static func describe(_ event: CaptureEvent, frames: [Frame]? = nil, outbound: Bool = false) -> String {
        switch event {
        case .bytesIn(let c, let b), .bytesOut(let c, let b):
            let dir = outbound ? "→" : "←"
            let name = outbound ? "out" : "in"
            guard let frames, !frames.isEmpty else { return "\(name) conn \(c) \(dir) \(b.count) bytes (part of a frame)" }
            return clip("\(name) conn \(c) \(dir) " + frames.map { FrameText.headerLine($0, direction: outbound ? .clientToServer : .serverToClient) }
                .joined(separator: " | "))
        case .opened(let c): return "opened conn \(c)"
        case .open(let c): return "open conn \(c)"
        case .close(let c): return "close conn \(c)"
        case .closed(let c, let r): return "closed conn \(c) (\(r.rawValue))"
        case .network(let a): return "network \(a ? "available" : "unavailable")"
        case .app(let e): return "app \(e.rawValue)"
        case .clock(let s): return "clock step \(s) ms"
        case .timer(let t): return "timer \(t)"
        case .api, .callback, .snapshot:
            var json = CaptureLineCodec.encode(CaptureRecord(t: 0, event: event))
            if case .object(let m) = json { json = .object(m.filter { $0.key != "t" && $0.key != "kind" }) }
            let prefix = event.kind == "cb" ? "cb" : event.kind
            return clip("\(prefix) \(json.serializedString)")
        }
    }

    /// Outbound bytes are whole frames (the core writes frames, coalesced): decoded alone.
    static func decodeWhole(_ bytes: [UInt8], direction: WireDirection, obfuscated: Bool, maxFrameSize: Int) -> [Frame]? {
        var d = StreamDecoder(direction: direction, maxFrameSize: maxFrameSize, obfuscated: obfuscated)
        return try? d.feed(bytes)
    }

    static func clip(_ s: String) -> String {
        s.count <= maxLength ? s : String(s.prefix(maxLength - 1)) + "…"
    }
}
