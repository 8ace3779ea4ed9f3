/// A strict JSON reader for scenario files (RFC 8259, nothing more): it runs before Foundation's
/// decoder, which on Linux accepts trailing commas and lets the first of two duplicate keys win.
/// It keeps each number's literal text, so field limits (`ScenarioLimits`) can tell 1.5 from 1
/// and 2^64 from 2^64 − 1 exactly. Every error names the JSON path and the line.
public enum StrictJSON {
    public indirect enum Value: Sendable, Equatable {
        case object([(key: String, value: Value, line: Int)])
        case array([(value: Value, line: Int)])
        case string(String)
        /// The literal text, exactly as written.
        case number(String)
        case bool(Bool)
        case null

        public static func == (a: Value, b: Value) -> Bool {
            switch (a, b) {
            case (.object(let x), .object(let y)):
                x.count == y.count && zip(x, y).allSatisfy { $0.key == $1.key && $0.value == $1.value }
            case (.array(let x), .array(let y)): x.count == y.count && zip(x, y).allSatisfy { $0.value == $1.value }
            case (.string(let x), .string(let y)): x == y
            case (.number(let x), .number(let y)): x == y
            case (.bool(let x), .bool(let y)): x == y
            case (.null, .null): true
            default: false
            }
        }

        public var typeName: String {
            switch self {
            case .object: "an object"
            case .array: "an array"
            case .string: "a string"
            case .number: "a number"
            case .bool: "true or false"
            case .null: "null"
            }
        }
    }

    /// Nesting deeper than this is refused (no scenario needs more than 6; a hostile file must not
    /// exhaust the stack of Foundation's recursive decoder).
    public static let maxDepth = 32
    /// Scenario files larger than this are refused before parsing.
    public static let maxBytes = 16 << 20

    public static func parse(_ bytes: [UInt8]) throws(ScenarioError) -> Value {
        guard bytes.count <= maxBytes else {
            throw ScenarioError(path: "$", message: "file is \(bytes.count) bytes; scenario files are at most \(maxBytes) bytes")
        }
        var p = Parser(bytes: bytes)
        p.skipSpace()
        let v = try p.value(path: "$", depth: 0)
        p.skipSpace()
        guard p.i == bytes.count else { throw p.fail("$", "unexpected text after the top-level value") }
        return v
    }

    struct Parser {
        let bytes: [UInt8]
        var i = 0
        var line = 1

        init(bytes: [UInt8]) { self.bytes = bytes }

        func fail(_ path: String, _ message: String) -> ScenarioError {
            ScenarioError(path: path, message: "not valid JSON: " + message, line: line)
        }

        mutating func skipSpace() {
            while i < bytes.count {
                switch bytes[i] {
                case 0x20, 0x09, 0x0D: i += 1
                case 0x0A: i += 1; line += 1
                default: return
                }
            }
        }

        func describeHere() -> String {
            guard i < bytes.count else { return "end of file" }
            let b = bytes[i]
            return b >= 0x20 && b < 0x7F ? "'\(Character(UnicodeScalar(b)))'" : "byte 0x\(String(b, radix: 16))"
        }

        mutating func value(path: String, depth: Int) throws(ScenarioError) -> Value {
            guard depth < StrictJSON.maxDepth else { throw fail(path, "nested deeper than \(StrictJSON.maxDepth) levels") }
            guard i < bytes.count else { throw fail(path, "unexpected end of file") }
            switch bytes[i] {
            case UInt8(ascii: "{"): return try object(path: path, depth: depth)
            case UInt8(ascii: "["): return try array(path: path, depth: depth)
            case UInt8(ascii: "\""): return .string(try string(path: path))
            case UInt8(ascii: "t"): try literal("true", path: path); return .bool(true)
            case UInt8(ascii: "f"): try literal("false", path: path); return .bool(false)
            case UInt8(ascii: "n"): try literal("null", path: path); return .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number(path: path))
            default: throw fail(path, "expected a value, found \(describeHere())")
            }
        }

        mutating func literal(_ word: StaticString, path: String) throws(ScenarioError) {
            let w = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
            guard i + w.count <= bytes.count, bytes[i..<(i + w.count)].elementsEqual(w) else {
                throw fail(path, "expected a value, found \(describeHere())")
            }
            i += w.count
        }

        mutating func object(path: String, depth: Int) throws(ScenarioError) -> Value {
            i += 1
            var members: [(key: String, value: Value, line: Int)] = []
            var seen: [String: Int] = [:]
            skipSpace()
            if i < bytes.count, bytes[i] == UInt8(ascii: "}") { i += 1; return .object(members) }
            while true {
                skipSpace()
                guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else {
                    if i < bytes.count, bytes[i] == UInt8(ascii: "}"), !members.isEmpty {
                        throw fail(path, "trailing comma before '}'")
                    }
                    throw fail(path, "expected a field name in quotes, found \(describeHere())")
                }
                let keyLine = line
                let key = try string(path: path)
                let childPath = path + "." + key
                if let first = seen[key] {
                    throw ScenarioError(path: childPath, message: "duplicate field \"\(key)\" (first on line \(first))", line: keyLine)
                }
                seen[key] = keyLine
                skipSpace()
                guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { throw fail(childPath, "expected ':' after the field name, found \(describeHere())") }
                i += 1
                skipSpace()
                let v = try value(path: childPath, depth: depth + 1)
                members.append((key, v, keyLine))
                skipSpace()
                guard i < bytes.count else { throw fail(path, "unexpected end of file (an object is not closed)") }
                if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
                if bytes[i] == UInt8(ascii: "}") { i += 1; return .object(members) }
                throw fail(childPath, "expected ',' or '}', found \(describeHere())")
            }
        }

        mutating func array(path: String, depth: Int) throws(ScenarioError) -> Value {
            i += 1
            var items: [(value: Value, line: Int)] = []
            skipSpace()
            if i < bytes.count, bytes[i] == UInt8(ascii: "]") { i += 1; return .array(items) }
            while true {
                skipSpace()
                let itemPath = "\(path)[\(items.count)]"
                if i < bytes.count, bytes[i] == UInt8(ascii: "]") { throw fail(path, "trailing comma before ']'") }
                let l = line
                items.append((try value(path: itemPath, depth: depth + 1), l))
                skipSpace()
                guard i < bytes.count else { throw fail(path, "unexpected end of file (an array is not closed)") }
                if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
                if bytes[i] == UInt8(ascii: "]") { i += 1; return .array(items) }
                throw fail(itemPath, "expected ',' or ']', found \(describeHere())")
            }
        }

        mutating func string(path: String) throws(ScenarioError) -> String {
            i += 1
            let start = i
            var plain = true
            while i < bytes.count {
                let b = bytes[i]
                if b == UInt8(ascii: "\"") {
                    if plain {
                        let s = String(decoding: bytes[start..<i], as: UTF8.self)
                        guard s.utf8.count == i - start else { throw fail(path, "a string is not valid UTF-8") }
                        i += 1
                        return s
                    }
                    break
                }
                if b < 0x20 { throw fail(path, b == 0x0A ? "a string is not closed on its line" : "control byte 0x\(String(b, radix: 16)) in a string") }
                if b == UInt8(ascii: "\\") { plain = false; i += 2; continue }
                i += 1
            }
            if i >= bytes.count { throw fail(path, "unexpected end of file in a string") }
            // With escapes: decode them.
            var out: [UInt8] = []
            var j = start
            while j < i {
                let b = bytes[j]
                guard b == UInt8(ascii: "\\") else { out.append(b); j += 1; continue }
                guard j + 1 < i else { throw fail(path, "bad escape in a string") }
                let e = bytes[j + 1]
                j += 2
                switch e {
                case UInt8(ascii: "\""): out.append(0x22)
                case UInt8(ascii: "\\"): out.append(0x5C)
                case UInt8(ascii: "/"): out.append(0x2F)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    guard j + 4 <= i, let u = UInt32(String(decoding: bytes[j..<(j + 4)], as: UTF8.self), radix: 16) else {
                        throw fail(path, "bad \\u escape in a string")
                    }
                    j += 4
                    var scalar = u
                    if (0xD800...0xDBFF).contains(u) {
                        guard j + 6 <= i, bytes[j] == UInt8(ascii: "\\"), bytes[j + 1] == UInt8(ascii: "u"),
                              let lo = UInt32(String(decoding: bytes[(j + 2)..<(j + 6)], as: UTF8.self), radix: 16),
                              (0xDC00...0xDFFF).contains(lo) else { throw fail(path, "unpaired surrogate in a string") }
                        j += 6
                        scalar = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(u) {
                        throw fail(path, "unpaired surrogate in a string")
                    }
                    guard let s = Unicode.Scalar(scalar) else { throw fail(path, "bad \\u escape in a string") }
                    out.append(contentsOf: Array(String(Character(s)).utf8))
                default:
                    throw fail(path, "bad escape '\\\(Character(UnicodeScalar(e)))' in a string")
                }
            }
            let s = String(decoding: out, as: UTF8.self)
            guard s.utf8.count == out.count else { throw fail(path, "a string is not valid UTF-8") }
            i += 1
            return s
        }

        mutating func number(path: String) throws(ScenarioError) -> String {
            let start = i
            func digits() -> Int {
                let s = i
                while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 { i += 1 }
                return i - s
            }
            if bytes[i] == UInt8(ascii: "-") { i += 1 }
            let intStart = i
            let n = digits()
            guard n > 0 else { throw fail(path, "a number needs digits") }
            if n > 1 && bytes[intStart] == UInt8(ascii: "0") { throw fail(path, "a number must not start with 0") }
            if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
                i += 1
                guard digits() > 0 else { throw fail(path, "a number needs digits after '.'") }
            }
            if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
                i += 1
                if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
                guard digits() > 0 else { throw fail(path, "a number needs digits in its exponent") }
            }
            guard i - start <= 64 else { throw fail(path, "a number of more than 64 characters") }
            return String(decoding: bytes[start..<i], as: UTF8.self)
        }
    }
}
