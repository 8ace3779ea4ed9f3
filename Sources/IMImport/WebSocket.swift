/// A WebSocket message (RFC 6455): text or binary payload, or a control frame.
public struct WebSocketMessage: Sendable, Equatable {
    public var opcode: UInt8
    public var payload: [UInt8]
}

/// Incremental RFC 6455 reader for one direction, after the HTTP upgrade: frames may be split at
/// any byte; fragmented messages are joined; client frames must be masked, server frames must not.
public struct WebSocketDecoder: Sendable {
    public let fromClient: Bool
    /// Largest message accepted (a frame header claiming more is refused at once).
    public let maxMessageSize: Int
    private var buffer: [UInt8] = []
    private var consumed = 0
    private var fragments: [UInt8] = []
    private var fragmentOpcode: UInt8?
    public private(set) var failure: ImportError?

    public init(fromClient: Bool, maxMessageSize: Int = 16 * 1024 * 1024) {
        self.fromClient = fromClient
        self.maxMessageSize = maxMessageSize
    }

    /// Offset in this direction's WebSocket stream of the next unread byte.
    public var offset: Int { consumed }

    public mutating func feed(_ bytes: [UInt8]) throws(ImportError) -> [WebSocketMessage] {
        if let failure { throw failure }
        buffer += bytes
        var out: [WebSocketMessage] = []
        var i = 0
        func fail(_ text: String) -> ImportError {
            let e = ImportError(.webSocket, "\(fromClient ? "client" : "server") WebSocket stream offset \(consumed + i): \(text)")
            failure = e
            return e
        }
        while buffer.count - i >= 2 {
            let b0 = buffer[i], b1 = buffer[i + 1]
            let fin = b0 & 0x80 != 0, opcode = b0 & 0x0F, masked = b1 & 0x80 != 0
            if b0 & 0x70 != 0 { throw fail("reserved bits set (0x\(String(b0, radix: 16))) without a negotiated extension") }
            var len = Int(b1 & 0x7F)
            var h = 2
            if len == 126 {
                guard buffer.count - i >= 4 else { break }
                len = Int(buffer[i + 2]) << 8 | Int(buffer[i + 3])
                h = 4
            } else if len == 127 {
                guard buffer.count - i >= 10 else { break }
                var v: UInt64 = 0
                for k in 0..<8 { v = v << 8 | UInt64(buffer[i + 2 + k]) }
                guard v <= UInt64(maxMessageSize) else { throw fail("frame claims \(v) bytes (limit \(maxMessageSize)); refused, nothing allocated") }
                len = Int(v)
                h = 10
            }
            guard len <= maxMessageSize else { throw fail("frame claims \(len) bytes (limit \(maxMessageSize))") }
            if masked != fromClient {
                throw fail(fromClient ? "client frame is not masked (RFC 6455 §5.1)" : "server frame is masked (RFC 6455 §5.1)")
            }
            let maskAt = i + h
            if masked { h += 4 }
            guard buffer.count - i >= h + len else { break }
            var payload = Array(buffer[(i + h)..<(i + h + len)])
            if masked {
                let key = buffer[maskAt..<(maskAt + 4)].map { $0 }
                for k in payload.indices { payload[k] ^= key[k & 3] }
            }
            switch opcode {
            case 0:
                guard let op = fragmentOpcode else { throw fail("continuation frame without a message to continue") }
                guard fragments.count + payload.count <= maxMessageSize else { throw fail("fragmented message over \(maxMessageSize) bytes") }
                fragments += payload
                if fin {
                    out.append(WebSocketMessage(opcode: op, payload: fragments))
                    fragments = []
                    fragmentOpcode = nil
                }
            case 1, 2:
                guard fragmentOpcode == nil else { throw fail("a new message starts inside a fragmented one") }
                if fin { out.append(WebSocketMessage(opcode: opcode, payload: payload)) } else {
                    fragmentOpcode = opcode
                    fragments = payload
                }
            case 8, 9, 10:
                guard fin, len <= 125 else { throw fail("control frame fragmented or over 125 bytes") }
                out.append(WebSocketMessage(opcode: opcode, payload: payload))
            default:
                throw fail("unknown opcode \(opcode)")
            }
            i += h + len
        }
        consumed += i
        buffer.removeFirst(i)
        return out
    }
}

/// The HTTP/1.1 upgrade request of a WebSocket connection.
public struct HTTPUpgrade: Sendable {
    public var target: String
    public var headers: [(String, String)]
    /// Bytes of the request, CRLFCRLF included.
    public var length: Int

    /// Parses a request at the start of `bytes`; nil while incomplete; throws if it is not an
    /// HTTP request.
    public static func parseRequest(_ bytes: [UInt8]) -> HTTPUpgrade?? {
        let limit = min(bytes.count, 64 * 1024)
        guard let end = findCRLFCRLF(bytes, limit: limit) else { return bytes.count >= 64 * 1024 ? .some(nil) : nil }
        let text = String(decoding: bytes[0..<end], as: UTF8.self)
        var lines = text.components(separatedBy: "\r\n")
        let first = lines.removeFirst().split(separator: " ")
        guard first.count == 3, first[0] == "GET", first[2].hasPrefix("HTTP/") else { return .some(nil) }
        let headers = lines.compactMap { l -> (String, String)? in
            guard let c = l.firstIndex(of: ":") else { return nil }
            return (l[..<c].lowercased(), l[l.index(after: c)...].trimmingCharacters(in: .whitespaces))
        }
        return .some(HTTPUpgrade(target: String(first[1]), headers: headers, length: end + 4))
    }

    public func header(_ name: String) -> String? { headers.first { $0.0 == name }?.1 }

    public var isWebSocket: Bool { header("upgrade")?.lowercased() == "websocket" }

    /// Query parameters of the target (`/ws?appId=…&token=…`), percent-decoded.
    public var query: [(String, String)] { Self.query(of: target) }

    public static func query(of url: String) -> [(String, String)] {
        guard let q = url.firstIndex(of: "?") else { return [] }
        return url[url.index(after: q)...].split(separator: "&").map { pair in
            let kv = pair.split(separator: "=", maxSplits: 1)
            return (percentDecode(String(kv[0])), kv.count > 1 ? percentDecode(String(kv[1])) : "")
        }
    }

    static func percentDecode(_ s: String) -> String {
        var out: [UInt8] = []
        let b = Array(s.utf8)
        var i = 0
        while i < b.count {
            if b[i] == UInt8(ascii: "%"), i + 2 < b.count, let v = UInt8(String(decoding: b[(i + 1)...(i + 2)], as: UTF8.self), radix: 16) {
                out.append(v)
                i += 3
            } else {
                out.append(b[i] == UInt8(ascii: "+") ? 0x20 : b[i])
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func findCRLFCRLF(_ b: [UInt8], limit: Int) -> Int? {
        guard limit >= 4 else { return nil }
        for i in 0...(limit - 4) where b[i] == 13 && b[i + 1] == 10 && b[i + 2] == 13 && b[i + 3] == 10 { return i }
        return nil
    }
}
