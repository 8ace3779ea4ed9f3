/// A JSON value with deterministic output: objects keep their members in order (codecs build them
/// in a fixed field order), numbers keep their exact literal text (no floating-point round trip),
/// and `serialized()` is a pure function of the value. Used for message content and frame dumps.
///
/// The parser is strict RFC 8259 (UTF-8, no duplicate keys, nesting ≤ 64) and answers bad input
/// with `WireError.badJSON` naming the byte offset; it never crashes.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    /// A number as its JSON literal (e.g. `"1700000000123"`, `"-1.5e3"`).
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([Member])

    public struct Member: Sendable, Hashable {
        public var key: String
        public var value: JSONValue
        public init(_ key: String, _ value: JSONValue) {
            self.key = key
            self.value = value
        }
    }

    /// An integer number.
    public static func int<I: BinaryInteger>(_ v: I) -> JSONValue { .number(String(v)) }

    /// An object from `(key, value)` pairs, in this order.
    public static func object(_ pairs: KeyValuePairs<String, JSONValue>) -> JSONValue {
        .object(pairs.map { Member($0.key, $0.value) })
    }

    /// The member named `key` of an object.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    public var stringValue: String? { if case .string(let s) = self { s } else { nil } }
    public var boolValue: Bool? { if case .bool(let b) = self { b } else { nil } }
    public var arrayValue: [JSONValue]? { if case .array(let a) = self { a } else { nil } }
    public var isNull: Bool { self == .null }

    /// The value of an integer literal (no fraction, no exponent) that fits in Int64.
    public var int64Value: Int64? {
        guard case .number(let s) = self else { return nil }
        return Int64(s)
    }

    // MARK: Writing

    /// Compact JSON text: no whitespace, members in stored order, minimal escaping
    /// (`"`, `\`, control characters), non-ASCII written as UTF-8.
    public func serialized() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64)
        write(into: &out)
        return out
    }

    public var serializedString: String { String(decoding: serialized(), as: UTF8.self) }

    public func write(into out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .number(let s): out.append(contentsOf: s.utf8)
        case .string(let s): Self.writeString(s, into: &out)
        case .array(let a):
            out.append(UInt8(ascii: "["))
            for (i, v) in a.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                v.write(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (i, m) in members.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                Self.writeString(m.key, into: &out)
                out.append(UInt8(ascii: ":"))
                m.value.write(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    static func writeString(_ s: String, into out: inout [UInt8]) {
        JSONText.string(s, into: &out)
    }

    /// Indented text for people (two spaces, one member per line).
    public func prettyString(indent: Int = 0) -> String {
        let pad = String(repeating: "  ", count: indent)
        let inner = String(repeating: "  ", count: indent + 1)
        switch self {
        case .array(let a) where !a.isEmpty:
            return "[\n" + a.map { inner + $0.prettyString(indent: indent + 1) }.joined(separator: ",\n") + "\n\(pad)]"
        case .object(let m) where !m.isEmpty:
            return "{\n" + m.map {
                inner + JSONValue.string($0.key).serializedString + ": " + $0.value.prettyString(indent: indent + 1)
            }.joined(separator: ",\n") + "\n\(pad)}"
        default:
            return serializedString
        }
    }

    // MARK: Parsing

    /// Parses one JSON text (surrounding whitespace allowed).
    public static func parse(_ bytes: [UInt8]) throws(WireError) -> JSONValue {
        try bytes.withUnsafeBufferPointer { (buf) throws(WireError) -> JSONValue in
            var p = JSONParser(buf)
            return try p.parseDocument()
        }
    }

    public static func parse(_ text: String) throws(WireError) -> JSONValue {
        try parse(Array(text.utf8))
    }

    /// Parses one JSON text and also returns the byte offset of each top-level object member's
    /// value (parallel to the members; empty if the value is not an object) — for error messages.
    static func parseWithMemberOffsets(_ bytes: [UInt8]) throws(WireError) -> (JSONValue, [Int]) {
        try bytes.withUnsafeBufferPointer { (buf) throws(WireError) -> (JSONValue, [Int]) in
            var p = JSONParser(buf)
            p.memberOffsets = []
            let v = try p.parseDocument()
            return (v, p.memberOffsets ?? [])
        }
    }
}

private struct JSONParser {
    let b: UnsafeBufferPointer<UInt8>
    var i = 0
    /// When non-nil, collects the offsets of the top-level object's member values.
    var memberOffsets: [Int]?
    static let maxDepth = 64

    init(_ b: UnsafeBufferPointer<UInt8>) { self.b = b }

    func fail(_ reason: String, _ at: Int? = nil) -> WireError { .badJSON(reason: reason, offset: at ?? i) }

    mutating func skipWhitespace() {
        while i < b.count, b[i] == 0x20 || b[i] == 0x0A || b[i] == 0x0D || b[i] == 0x09 { i += 1 }
    }

    mutating func parseDocument() throws(WireError) -> JSONValue {
        skipWhitespace()
        let v = try parseValue(depth: 0)
        skipWhitespace()
        if i != b.count { throw fail("unexpected data after the value") }
        return v
    }

    mutating func parseValue(depth: Int) throws(WireError) -> JSONValue {
        guard depth < Self.maxDepth else { throw fail("nesting deeper than \(Self.maxDepth)") }
        guard i < b.count else { throw fail("unexpected end of input") }
        switch b[i] {
        case UInt8(ascii: "{"):
            i += 1
            var members: [JSONValue.Member] = []
            var keys: Set<String>?     // built only for large objects; small ones scan linearly
            skipWhitespace()
            if i < b.count, b[i] == UInt8(ascii: "}") { i += 1; return .object(members) }
            while true {
                skipWhitespace()
                let keyAt = i
                guard i < b.count, b[i] == UInt8(ascii: "\"") else { throw fail("expected a string key") }
                let key = try parseString()
                let duplicate: Bool
                if keys == nil, members.count < 16 {
                    duplicate = members.contains { $0.key == key }
                } else {
                    if keys == nil { keys = Set(members.map(\.key)) }
                    duplicate = !keys!.insert(key).inserted
                }
                if duplicate { throw fail("duplicate key \"\(key)\"", keyAt) }
                skipWhitespace()
                guard i < b.count, b[i] == UInt8(ascii: ":") else { throw fail("expected ':'") }
                i += 1
                skipWhitespace()
                if depth == 0 { memberOffsets?.append(i) }
                members.append(.init(key, try parseValue(depth: depth + 1)))
                skipWhitespace()
                guard i < b.count else { throw fail("unterminated object") }
                if b[i] == UInt8(ascii: ",") { i += 1; continue }
                if b[i] == UInt8(ascii: "}") { i += 1; return .object(members) }
                throw fail("expected ',' or '}'")
            }
        case UInt8(ascii: "["):
            i += 1
            var items: [JSONValue] = []
            skipWhitespace()
            if i < b.count, b[i] == UInt8(ascii: "]") { i += 1; return .array(items) }
            while true {
                skipWhitespace()
                items.append(try parseValue(depth: depth + 1))
                skipWhitespace()
                guard i < b.count else { throw fail("unterminated array") }
                if b[i] == UInt8(ascii: ",") { i += 1; continue }
                if b[i] == UInt8(ascii: "]") { i += 1; return .array(items) }
                throw fail("expected ',' or ']'")
            }
        case UInt8(ascii: "\""):
            return .string(try parseString())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return .number(try parseNumber())
        default:
            throw fail("unexpected character")
        }
    }

    mutating func literal(_ word: StaticString) throws(WireError) {
        let n = word.utf8CodeUnitCount
        guard b.count - i >= n else { throw fail("invalid literal") }
        let w = word.utf8Start
        for k in 0..<n where b[i + k] != w[k] { throw fail("invalid literal") }
        i += n
    }

    mutating func parseNumber() throws(WireError) -> String {
        let start = i
        func digit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }
        if b[i] == UInt8(ascii: "-") { i += 1 }
        guard i < b.count, digit(b[i]) else { throw fail("invalid number", start) }
        if b[i] == 0x30 {
            i += 1
            if i < b.count, digit(b[i]) { throw fail("leading zero in number", start) }
        } else {
            while i < b.count, digit(b[i]) { i += 1 }
        }
        if i < b.count, b[i] == UInt8(ascii: ".") {
            i += 1
            guard i < b.count, digit(b[i]) else { throw fail("invalid fraction", start) }
            while i < b.count, digit(b[i]) { i += 1 }
        }
        if i < b.count, b[i] == UInt8(ascii: "e") || b[i] == UInt8(ascii: "E") {
            i += 1
            if i < b.count, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") { i += 1 }
            guard i < b.count, digit(b[i]) else { throw fail("invalid exponent", start) }
            while i < b.count, digit(b[i]) { i += 1 }
        }
        return String(decoding: UnsafeBufferPointer(rebasing: b[start..<i]), as: UTF8.self)
    }

    mutating func hex4() throws(WireError) -> UInt32 {
        guard b.count - i >= 4 else { throw fail("truncated \\u escape") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            guard let d = Hex.digitValue(b[i]) else { throw fail("invalid hex digit in \\u escape") }
            v = v << 4 | UInt32(d)
            i += 1
        }
        return v
    }

    /// At the opening quote.
    mutating func parseString() throws(WireError) -> String {
        let open = i
        i += 1
        // Fast path: no escapes.
        var j = i
        while j < b.count, b[j] != UInt8(ascii: "\""), b[j] != UInt8(ascii: "\\"), b[j] >= 0x20 { j += 1 }
        if j < b.count, b[j] == UInt8(ascii: "\"") {
            let slice = UnsafeBufferPointer(rebasing: b[i..<j])
            guard let s = FastUTF8.string(slice) else { throw fail("invalid UTF-8 in string", i) }
            i = j + 1
            return s
        }
        var out: [UInt8] = []
        while true {
            guard i < b.count else { throw fail("unterminated string", open) }
            let c = b[i]
            if c == UInt8(ascii: "\"") { i += 1; break }
            if c < 0x20 { throw fail("control character in string") }
            if c != UInt8(ascii: "\\") { out.append(c); i += 1; continue }
            let escAt = i
            i += 1
            guard i < b.count else { throw fail("unterminated escape", escAt) }
            let e = b[i]
            i += 1
            switch e {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var cp = try hex4()
                if (0xD800...0xDBFF).contains(cp) {
                    guard b.count - i >= 6, b[i] == UInt8(ascii: "\\"), b[i + 1] == UInt8(ascii: "u") else {
                        throw fail("unpaired surrogate", escAt)
                    }
                    i += 2
                    let low = try hex4()
                    guard (0xDC00...0xDFFF).contains(low) else { throw fail("unpaired surrogate", escAt) }
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(cp) {
                    throw fail("unpaired surrogate", escAt)
                }
                guard let scalar = Unicode.Scalar(cp) else { throw fail("invalid code point", escAt) }
                out.append(contentsOf: Array(String(Character(scalar)).utf8))
            default:
                throw fail("invalid escape", escAt)
            }
        }
        guard let s = String(validating: out, as: UTF8.self) else { throw fail("invalid UTF-8 in string", open) }
        return s
    }
}
