import IMClient
import IMStore
import IMWire

/// How frame bytes are written in `in` / `out` records.
public enum CaptureBytesEncoding: String, Sendable, CaseIterable {
    case hex
    case base64
}

/// One record ↔ one JSON object (a line). Stateless: the reader checks what spans lines (time
/// order, connections, frame decoding).
package enum CaptureLineCodec {
    /// Largest byte run one `in`/`out` record may claim (`len`) or carry: far above any frame
    /// (the stream decoder refuses frames over 256 MiB anyway), far below anything we would
    /// want to allocate because a file said so.
    static let maxRecordBytes = 16 * 1024 * 1024

    package static func encode(_ r: CaptureRecord, bytes encoding: CaptureBytesEncoding = .hex, frames: [String]? = nil) -> JSONValue {
        var o = ObjectBuilder()
        o.add("t", r.t)
        o.add("kind", r.event.kind)
        func addBytes(_ b: [UInt8]) {
            switch encoding {
            case .hex: o.add("hex", Hex.encode(b))
            case .base64: o.add("b64", Base64.encode(b))
            }
            o.add("len", b.count)
            if let frames { o.add("frames", .array(frames.map { .string($0) })) }
        }
        switch r.event {
        case .api(let call): APICallCoding.encode(call, into: &o)
        case .opened(let c): o.add("conn", c)
        case .bytesIn(let c, let b): o.add("conn", c); addBytes(b)
        case .closed(let c, let reason): o.add("conn", c); o.add("reason", reason.rawValue)
        case .timer(let t): TimerCoding.encode(t, into: &o)
        case .network(let a): o.add("available", a)
        case .app(let e): o.add("event", e.rawValue)
        case .clock(let s): o.add("stepMs", s)
        case .open(let c): o.add("conn", c)
        case .bytesOut(let c, let b): o.add("conn", c); addBytes(b)
        case .close(let c): o.add("conn", c)
        case .callback(let cb): CallbackCoding.encode(cb, into: &o)
        case .snapshot(let s):
            o.add("inbox", s.inbox)
            o.add("sendbox", s.sendbox)
            o.add("conversations", .array(s.conversations.map { c in
                var x = ObjectBuilder()
                x.add("conversation", c.conversation.description)
                x.add("unread", c.unread)
                x.add("messages", .array(c.messages.map { .string($0) }))
                return x.value
            }))
        }
        o.addIfPresent("inferred", r.inferred)
        return o.value
    }

    package static func decode(_ value: JSONValue, line: Int) throws(CaptureError) -> CaptureRecord {
        var r = try FieldReader(value, line: line, what: "a record")
        let t = try r.int64("t")
        let kind = try r.string("kind")
        func conn() throws(CaptureError) -> Int { try r.int("conn", in: 0...Int64(Int32.max)) }
        let event: CaptureEvent
        switch kind {
        case "api": event = .api(try APICallCoding.decode(&r))
        case "opened": event = .opened(conn: try conn())
        case "in": event = .bytesIn(conn: try conn(), bytes: try bytes(&r))
        case "closed":
            let c = try conn()
            let text = try r.string("reason")
            guard let reason = TransportCloseReason(rawValue: text) else {
                throw r.fail("reason", .invalidField, "unknown close reason \"\(text)\" (known: \(TransportCloseReason.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            event = .closed(conn: c, reason: reason)
        case "timer": event = .timer(try TimerCoding.decode(&r))
        case "network": event = .network(available: try r.bool("available"))
        case "app":
            let text = try r.string("event")
            guard let e = AppEvent(rawValue: text) else {
                throw r.fail("event", .invalidField, "unknown app event \"\(text)\" (start, kill, foreground, background)")
            }
            event = .app(e)
        case "clock": event = .clock(stepMs: try r.int64("stepMs"))
        case "open": event = .open(conn: try conn())
        case "out": event = .bytesOut(conn: try conn(), bytes: try bytes(&r))
        case "close": event = .close(conn: try conn())
        case "cb": event = .callback(try CallbackCoding.decode(&r))
        case "snapshot":
            var convs: [StoreSnapshot.Conversation] = []
            for (i, v) in try r.array("conversations").enumerated() {
                var c = try FieldReader(v, line: line, prefix: "conversations[\(i)].", what: "a conversation")
                var msgs: [String] = []
                for (j, m) in try c.array("messages").enumerated() {
                    guard let s = m.stringValue else { throw c.fail("messages[\(j)]", .invalidField, "expected a string") }
                    msgs.append(s)
                }
                convs.append(StoreSnapshot.Conversation(conversation: try c.conversation("conversation"),
                                                        unread: try c.int("unread", in: 0...Int64(Int32.max)), messages: msgs))
                try c.finish()
            }
            event = .snapshot(StoreSnapshot(inbox: try r.int64("inbox"), sendbox: try r.int64("sendbox"), conversations: convs))
        default:
            throw CaptureError(.unknownKind, line: line, field: "kind",
                               "unknown record kind \"\(kind)\" (known: \(CaptureEvent.kinds.joined(separator: ", ")))")
        }
        // Only inputs can be inferred (an importer never invents what the SDK did).
        let inferred = try r.optionalString("inferred")
        if inferred != nil, event.isOutput {
            throw r.fail("inferred", .invalidField, "only input records can be inferred")
        }
        try r.finish()
        return CaptureRecord(t: t, event: event, line: line, inferred: inferred)
    }

    /// `hex` or `b64` (exactly one), with an optional `len` that must match; `frames` is
    /// informational.
    private static func bytes(_ r: inout FieldReader) throws(CaptureError) -> [UInt8] {
        if let len = try r.optionalInt64("len"), len < 0 || len > Int64(maxRecordBytes) {
            throw r.fail("len", .absurdLength, "claims \(len) bytes; a record carries at most \(maxRecordBytes) (refused, nothing allocated)")
        }
        r.ignore("len")
        let declared = r.optionalValue("len")?.int64Value
        if let f = r.optionalValue("frames") {
            guard let list = f.arrayValue, list.allSatisfy({ $0.stringValue != nil }) else {
                throw r.fail("frames", .invalidField, "expected an array of strings")
            }
        }
        let hex = try r.optionalString("hex")
        let b64 = try r.optionalString("b64")
        let out: [UInt8]
        switch (hex, b64) {
        case (let h?, nil):
            guard h.utf8.count <= 2 * maxRecordBytes else { throw r.fail("hex", .absurdLength, "more than \(maxRecordBytes) bytes") }
            switch Hex.decode(h) {
            case .success(let b): out = b
            case .failure(let e): throw r.fail("hex", .invalidField, "\(e)")
            }
        case (nil, let s?):
            switch Base64.decode(s) {
            case .success(let b): out = b
            case .failure(let e): throw r.fail("b64", .invalidField, "invalid base64 at character \(e.offset): \(e.reason)")
            }
        case (nil, nil): throw r.fail("hex", .missingField, "an in/out record needs \"hex\" or \"b64\"")
        default: throw r.fail("b64", .invalidField, "give \"hex\" or \"b64\", not both")
        }
        if out.isEmpty { throw r.fail(hex != nil ? "hex" : "b64", .invalidField, "no bytes") }
        if let declared, declared != Int64(out.count) {
            throw r.fail("len", .invalidField, "says \(declared) bytes but the record holds \(out.count)")
        }
        return out
    }
}
