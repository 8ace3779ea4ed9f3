import IMWire
import SimKernel

/// Typed, strict access to one JSON object of a capture line: every accessor names the line and
/// the field in its error, and `finish()` rejects fields the record kind does not define.
struct FieldReader {
    let members: [JSONValue.Member]
    let line: Int
    /// Prefix for nested field names (`message.`).
    let prefix: String
    /// Which members were asked for, by index (keys are unique: the parser refuses duplicates).
    /// A bit per member up to 64, an array beyond (a hashed `Set<String>` of keys was a third of
    /// decoding a line).
    private var usedBits: UInt64 = 0
    private var usedMore: [Bool] = []

    init(_ value: JSONValue, line: Int, prefix: String = "", what: String) throws(CaptureError) {
        guard case .object(let m) = value else {
            throw CaptureError(.invalidField, line: line, field: prefix.isEmpty ? nil : String(prefix.dropLast()),
                               "\(what) must be a JSON object")
        }
        members = m
        self.line = line
        self.prefix = prefix
    }

    func has(_ key: String) -> Bool { members.contains { $0.key == key } }

    private mutating func markUsed(_ i: Int) {
        if i < 64 { usedBits |= 1 << UInt64(i); return }
        if usedMore.isEmpty { usedMore = Array(repeating: false, count: members.count) }
        usedMore[i] = true
    }

    private func isUsed(_ i: Int) -> Bool {
        i < 64 ? usedBits & (1 << UInt64(i)) != 0 : (!usedMore.isEmpty && usedMore[i])
    }

    private mutating func raw(_ key: String) -> JSONValue? {
        guard let i = members.firstIndex(where: { $0.key == key }) else { return nil }
        markUsed(i)
        return members[i].value
    }

    func fail(_ key: String, _ kind: CaptureError.Kind, _ msg: String) -> CaptureError {
        CaptureError(kind, line: line, field: prefix + key, msg)
    }

    mutating func value(_ key: String) throws(CaptureError) -> JSONValue {
        guard let v = raw(key), !v.isNull else { throw fail(key, .missingField, "missing required field") }
        return v
    }

    mutating func optionalValue(_ key: String) -> JSONValue? {
        guard let v = raw(key), !v.isNull else { return nil }
        return v
    }

    mutating func string(_ key: String) throws(CaptureError) -> String {
        guard let s = try value(key).stringValue else { throw fail(key, .invalidField, "expected a string") }
        return s
    }

    mutating func optionalString(_ key: String) throws(CaptureError) -> String? {
        guard let v = optionalValue(key) else { return nil }
        guard let s = v.stringValue else { throw fail(key, .invalidField, "expected a string") }
        return s
    }

    mutating func bool(_ key: String) throws(CaptureError) -> Bool {
        guard let b = try value(key).boolValue else { throw fail(key, .invalidField, "expected true or false") }
        return b
    }

    mutating func optionalBool(_ key: String) throws(CaptureError) -> Bool? {
        guard let v = optionalValue(key) else { return nil }
        guard let b = v.boolValue else { throw fail(key, .invalidField, "expected true or false") }
        return b
    }

    mutating func int64(_ key: String) throws(CaptureError) -> Int64 {
        guard let i = try value(key).int64Value else { throw fail(key, .invalidField, "expected an integer (64-bit)") }
        return i
    }

    mutating func optionalInt64(_ key: String) throws(CaptureError) -> Int64? {
        guard let v = optionalValue(key) else { return nil }
        guard let i = v.int64Value else { throw fail(key, .invalidField, "expected an integer (64-bit)") }
        return i
    }

    mutating func int32(_ key: String) throws(CaptureError) -> Int32 {
        let v = try int64(key)
        guard let i = Int32(exactly: v) else { throw fail(key, .invalidField, "\(v) does not fit in 32 bits") }
        return i
    }

    mutating func optionalInt32(_ key: String) throws(CaptureError) -> Int32? {
        guard let v = try optionalInt64(key) else { return nil }
        guard let i = Int32(exactly: v) else { throw fail(key, .invalidField, "\(v) does not fit in 32 bits") }
        return i
    }

    mutating func int(_ key: String, in range: ClosedRange<Int64>) throws(CaptureError) -> Int {
        let v = try int64(key)
        guard range.contains(v) else { throw fail(key, .invalidField, "\(v) is outside \(range.lowerBound)…\(range.upperBound)") }
        return Int(v)
    }

    mutating func array(_ key: String) throws(CaptureError) -> [JSONValue] {
        guard let a = try value(key).arrayValue else { throw fail(key, .invalidField, "expected an array") }
        return a
    }

    mutating func conversation(_ key: String) throws(CaptureError) -> ConversationKey {
        let text = try string(key)
        guard let c = ConversationKey(captureText: text) else {
            throw fail(key, .invalidField, "expected TYPE:TARGET (e.g. \"private:bob\"), got \"\(text)\"")
        }
        return c
    }

    mutating func duration(_ key: String) throws(CaptureError) -> SimDuration {
        let text = try string(key)
        do { return try SimDuration(parsing: text) } catch {
            throw fail(key, .invalidField, "invalid duration \"\(text)\"")
        }
    }

    /// Marks informational fields as known (they are not interpreted).
    mutating func ignore(_ keys: String...) { for k in keys { _ = raw(k) } }

    /// Fails on a field this record does not define.
    func finish() throws(CaptureError) {
        for (i, m) in members.enumerated() where !isUsed(i) {
            // A repeated key (only in a value built in memory: the parser refuses them) counts as
            // used when one of its copies was, as the set of used keys had it.
            if members.indices.contains(where: { isUsed($0) && members[$0].key == m.key }) { continue }
            throw fail(m.key, .invalidField, "unknown field for this record")
        }
    }
}

extension ConversationKey {
    /// Parses `private:bob` (the `description` form).
    init?(captureText text: String) {
        guard let colon = text.firstIndex(of: ":"), let type = ConversationType(name: String(text[..<colon])) else { return nil }
        let target = String(text[text.index(after: colon)...])
        guard !target.isEmpty else { return nil }
        self.init(type, target)
    }
}

/// Builds a JSON object member by member (keeps insertion order).
package struct ObjectBuilder {
    package init() {}
    package var members: [JSONValue.Member] = []
    package mutating func add(_ key: String, _ v: JSONValue) { members.append(.init(key, v)) }
    package mutating func add(_ key: String, _ s: String) { members.append(.init(key, .string(s))) }
    package mutating func add(_ key: String, _ b: Bool) { members.append(.init(key, .bool(b))) }
    package mutating func add<I: BinaryInteger>(_ key: String, _ i: I) { members.append(.init(key, .int(i))) }
    package mutating func addIfPresent(_ key: String, _ s: String?) { if let s { add(key, s) } }
    package mutating func addIfPresent<I: BinaryInteger>(_ key: String, _ i: I?) { if let i { add(key, i) } }
    package var value: JSONValue { .object(members) }
}

extension JSONValue {
    /// The same value with every object's members sorted by key (for comparisons that must not
    /// depend on the order fields were written in).
    package var canonical: JSONValue {
        switch self {
        case .object(let m): .object(m.map { .init($0.key, $0.value.canonical) }.sorted { $0.key < $1.key })
        case .array(let a): .array(a.map(\.canonical))
        default: self
        }
    }
}
