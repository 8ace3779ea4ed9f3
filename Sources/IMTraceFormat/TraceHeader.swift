import IMWire
import SimKernel

/// One start option of a run, recorded in the header (`--seed`-like knobs, scenario overrides).
public struct TraceOption: Hashable, Sendable, CustomStringConvertible {
    public var key: String
    public var value: String
    public init(_ key: String, _ value: String) {
        self.key = key
        self.value = value
    }
    public var description: String { "\(key)=\(value)" }
}

/// What a trace says about the run that produced it. Written once, at the start of the file.
public struct TraceHeader: Hashable, Sendable {
    /// Format version of the file this header was read from (the writer always writes the current one).
    public internal(set) var majorVersion: UInt16 = TraceFormat.majorVersion
    public internal(set) var minorVersion: UInt16 = TraceFormat.minorVersion
    public var seed: UInt64
    /// Stable digest of the scenario definition (e.g. `StableHash` over its canonical JSON).
    public var scenarioDigest: UInt64
    public var scenarioName: String
    /// Build identity, `imsim 0.1.0 (release)` by default.
    public var build: String
    /// Start options, kept sorted by the UTF-8 bytes of the key (unique keys), so the header
    /// bytes never depend on the order options were collected in.
    public private(set) var options: [TraceOption]
    /// Whether message content is stored (otherwise only length + hash; privacy by default).
    public var keepContent: Bool
    /// Format 2: interned strings with ids `0 ..< strings.count`, defined for every block (the
    /// world's user and device ids: a block then never spends bytes defining them).
    public internal(set) var strings: [String] = []

    public static var currentBuild: String { "imsim \(IMSimVersion.string) (\(IMSimVersion.buildConfiguration))" }

    /// - Throws: `TraceError.invalidHeader` for duplicate option keys.
    public init(
        seed: UInt64, scenarioDigest: UInt64, scenarioName: String, build: String = TraceHeader.currentBuild,
        options: [TraceOption] = [], keepContent: Bool = false
    ) throws(TraceError) {
        self.seed = seed
        self.scenarioDigest = scenarioDigest
        self.scenarioName = scenarioName
        self.build = build
        self.keepContent = keepContent
        self.options = []
        try setOptions(options)
    }

    /// Replaces the options (sorted by key bytes; duplicate keys are an error).
    public mutating func setOptions(_ list: [TraceOption]) throws(TraceError) {
        let sorted = list.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
        for i in sorted.indices.dropFirst() where sorted[i].key == sorted[i - 1].key {
            throw .invalidHeader("duplicate option key \"\(sorted[i].key)\"")
        }
        options = sorted
    }

    /// The value of an option, if present.
    public func option(_ key: String) -> String? { options.first { $0.key == key }?.value }

    /// Header bytes: magic, major u16, minor u16, payload length u32, payload, CRC-32C u32.
    func encoded(major: UInt16 = TraceFormat.majorVersion) -> [UInt8] {
        var payload: [UInt8] = []
        payload.appendLittleEndian(seed)
        payload.appendLittleEndian(scenarioDigest)
        payload.appendLittleEndian(keepContent ? TraceFormat.flagKeepContent : 0)
        payload.appendLengthPrefixed(scenarioName)
        payload.appendLengthPrefixed(build)
        payload.appendVarint(UInt64(options.count))
        for o in options {
            payload.appendLengthPrefixed(o.key)
            payload.appendLengthPrefixed(o.value)
        }
        if major >= 2 {
            payload.appendVarint(UInt64(strings.count))
            for s in strings { payload.appendLengthPrefixed(s) }
        }
        var out = TraceFormat.magic
        out.appendLittleEndian(major)
        out.appendLittleEndian(TraceFormat.minorVersion)
        out.appendLittleEndian(UInt32(payload.count))
        out.append(contentsOf: payload)
        out.appendLittleEndian(CRC32C.checksum(out))
        return out
    }

    /// Parses a header from the start of a source. Returns the header and its total length.
    static func read(from source: TraceSource) throws(TraceError) -> (TraceHeader, Int) {
        let size = source.size
        let prefix = try source.read(at: 0, count: min(size, TraceFormat.headerPrefixSize))
        let magicCount = min(prefix.count, TraceFormat.magic.count)
        guard Array(prefix[0..<magicCount]) == Array(TraceFormat.magic[0..<magicCount]) else {
            throw .notATrace(found: Array(prefix[0..<magicCount]))
        }
        guard prefix.count == TraceFormat.headerPrefixSize else {
            throw .truncatedHeader(needed: TraceFormat.headerPrefixSize, fileSize: size)
        }
        let (major, minor, length) = prefix.withUnsafeBytes { ($0.u16(8), $0.u16(10), Int($0.u32(12))) }
        guard TraceFormat.readableMajorVersions.contains(major) else { throw .unsupportedVersion(major: major, minor: minor) }
        guard length <= TraceFormat.maxHeaderPayload else {
            throw .badHeader(offset: 12, reason: "header length \(length) exceeds \(TraceFormat.maxHeaderPayload)")
        }
        let total = TraceFormat.headerPrefixSize + length + 4
        guard size >= total else { throw .truncatedHeader(needed: total, fileSize: size) }
        let all = try source.read(at: 0, count: total)
        return try all.withBytes { (raw) throws(TraceError) -> (TraceHeader, Int) in
            let stored = raw.u32(total - 4)
            let computed = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[0..<(total - 4)]))
            guard stored == computed else {
                throw .badHeader(offset: total - 4, reason: "checksum mismatch (stored \(stored), computed \(computed))")
            }
            var p = TraceFormat.headerPrefixSize
            let end = total - 4
            let body = UnsafeRawBufferPointer(rebasing: raw[0..<end])
            func fail(_ at: Int, _ why: String) -> TraceError { .badHeader(offset: at, reason: why) }
            func fixed(_ n: Int, _ field: String) throws(TraceError) -> Int {
                guard end - p >= n else { throw fail(p, "\(field): header ends inside the field") }
                defer { p += n }
                return p
            }
            func varint(_ field: String) throws(TraceError) -> UInt64 {
                let at = p
                do { return try Varint.read(body, &p) } catch { throw fail(at, "\(field): \(error == .truncated ? "truncated" : "overlong") varint") }
            }
            func string(_ field: String) throws(TraceError) -> String {
                let at = p
                let n = try varint(field + " length")
                guard n <= UInt64(end - p) else { throw fail(at, "\(field): length \(n) runs past the header") }
                let s = String(validating: UnsafeRawBufferPointer(rebasing: body[p..<(p + Int(n))]), as: UTF8.self)
                guard let s else { throw fail(p, "\(field): not valid UTF-8") }
                p += Int(n)
                return s
            }
            let seed = raw.u64(try fixed(8, "seed"))
            let digest = raw.u64(try fixed(8, "scenario digest"))
            let flags = raw.u32(try fixed(4, "flags"))
            let name = try string("scenario name")
            let build = try string("build")
            let countAt = p
            let count = try varint("option count")
            guard count <= UInt64(end - p) / 2 else { throw fail(countAt, "option count \(count) exceeds the header") }
            var options: [TraceOption] = []
            for i in 0..<Int(count) {
                let keyAt = p
                let k = try string("option \(i) key")
                let v = try string("option \(i) value")
                if let last = options.last, !last.key.utf8.lexicographicallyPrecedes(k.utf8) {
                    throw fail(keyAt, "option keys not sorted/unique at \"\(k)\"")
                }
                options.append(TraceOption(k, v))
            }
            var strings: [String] = []
            if major >= 2 {
                let stringsAt = p
                let n = try varint("string count")
                guard n <= UInt64(end - p) else { throw fail(stringsAt, "string count \(n) exceeds the header") }
                strings.reserveCapacity(Int(n))
                for i in 0..<Int(n) { strings.append(try string("string \(i)")) }
            }
            // Same minor: nothing may follow. Newer minor: appended fields this reader skips.
            if minor <= TraceFormat.minorVersion && p != end {
                throw fail(p, "\(end - p) unexpected bytes after the last field")
            }
            var h = try TraceHeader(seed: seed, scenarioDigest: digest, scenarioName: name, build: build,
                                    options: [], keepContent: flags & TraceFormat.flagKeepContent != 0)
            h.options = options
            h.strings = strings
            h.majorVersion = major
            h.minorVersion = minor
            return (h, total)
        }
    }
}
