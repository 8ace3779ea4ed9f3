import Foundation
import SimKernel

// A sweep's result file (`imsim sweep --out DIR`, one per shard): JSONL with a header line, one
// line per seed sorted by seed, and a closing summary line. Every field is a pure function of
// (scenario, seeds, shard, build), so rerunning a shard writes the same bytes; wall times stay out.

/// The first line: which sweep this file belongs to (a resumed run must match it exactly).
public struct SweepHeader: Codable, Sendable, Equatable {
    public var type = "header"
    public var format = 1
    public var scenario: String
    /// How the scenario was named on the command line (what `seeds recheck` loads again).
    public var scenarioArgument: String
    public var scenarioDigest: String
    public var build: String
    public var bugs: [String]
    public var swarm: Bool
    public var until: String?
    /// The whole sweep's seed text (shard not applied), e.g. `1..200`.
    public var seeds: String
    public var shard: Int
    public var shards: Int

    public init(scenario: String, scenarioArgument: String, scenarioDigest: String, build: String, bugs: [String],
                swarm: Bool, until: String?, seeds: String, shard: Int, shards: Int) {
        self.scenario = scenario
        self.scenarioArgument = scenarioArgument
        self.scenarioDigest = scenarioDigest
        self.build = build
        self.bugs = bugs
        self.swarm = swarm
        self.until = until
        self.seeds = seeds
        self.shard = shard
        self.shards = shards
    }

    /// The seeds this file must hold.
    public func expectedSeeds() throws(SeedSelectionError) -> [UInt64] {
        try SeedSelection(parsing: seeds, shard: "\(shard)/\(shards)").seeds
    }

    /// The same sweep in another shard (what merge checks across files).
    public func sameSweep(as o: SweepHeader) -> Bool {
        scenario == o.scenario && scenarioDigest == o.scenarioDigest && build == o.build && bugs == o.bugs
            && swarm == o.swarm && until == o.until && seeds == o.seeds && shards == o.shards
    }

    /// The file name of a shard's results (`results.jsonl` for an unsharded sweep).
    public static func fileName(shard: Int, shards: Int) -> String {
        shards == 1 ? "results.jsonl" : "shard-\(pad(shard))-of-\(pad(shards)).jsonl"
    }

    static func pad(_ n: Int) -> String {
        let s = String(n)
        return s.count >= 4 ? s : String(repeating: "0", count: 4 - s.count) + s
    }
}

/// One seed's line: the worker's result without its wall time.
public struct SweepSeedLine: Codable, Sendable, Equatable {
    public var seed: UInt64
    public var outcome: SweepResult.Outcome
    public var oracle: String?
    public var eventIndex: UInt64?
    public var simTime: String?
    public var simNanoseconds: Int64
    public var events: UInt64
    public var digest: String
    public var detail: String?
    public var repro: String?
    public var coverage: [String: Int]?

    public init(_ r: SweepResult) {
        seed = r.seed
        outcome = r.outcome
        oracle = r.oracle
        eventIndex = r.eventIndex
        simTime = r.simTime
        simNanoseconds = r.simNanoseconds
        events = r.events
        digest = r.digest
        detail = r.detail
        repro = r.repro
        coverage = r.coverage
    }
}

/// The last line: totals, and a digest of the seed lines so a damaged file is caught.
public struct SweepSummaryLine: Codable, Sendable, Equatable {
    public var type = "summary"
    public var seedsRun: Int
    public var passed: Int
    public var failures: Int
    public var errors: Int
    public var byOracle: [String: Int]
    public var coverage: [String: Int]
    public var linesDigest: String

    public init(lines: [SweepSeedLine], encodedLines: [String]) {
        seedsRun = lines.count
        passed = lines.filter { $0.outcome == .pass }.count
        failures = lines.filter { $0.outcome == .fail }.count
        errors = lines.filter { $0.outcome == .error }.count
        var by: [String: Int] = [:]
        var cov: [String: Int] = [:]
        for l in lines {
            if l.outcome == .fail { by[l.oracle ?? "?", default: 0] += 1 }
            for (k, v) in l.coverage ?? [:] { cov[k, default: 0] += v }
        }
        byOracle = by
        coverage = cov
        linesDigest = Self.digest(encodedLines)
    }

    public static func digest(_ encodedLines: [String]) -> String {
        var d = Digest64()
        for l in encodedLines { d.fold(l) }
        return d.description
    }
}

public struct SweepFileError: Error, CustomStringConvertible, Equatable {
    public var description: String
    public init(_ d: String) { description = d }
}

/// A parsed result file, complete (with summary) or in progress (`.partial`, no summary).
public struct SweepResultFile: Sendable {
    public var header: SweepHeader
    public var lines: [SweepSeedLine]
    public var summary: SweepSummaryLine?
    /// Bytes up to the end of the last whole line (a killed writer may leave a torn tail after it).
    public var validLength: Int
    public var tornTail: Bool

    /// Reads a file's bytes. `partial`: no summary expected, a torn last line is cut off; otherwise
    /// the file must end with a summary matching its lines.
    public static func parse(_ bytes: [UInt8], partial: Bool) throws(SweepFileError) -> SweepResultFile {
        let dec = JSONDecoder()
        struct Tag: Decodable { var type: String? }
        var header: SweepHeader?
        var lines: [SweepSeedLine] = []
        var encoded: [String] = []
        var summary: SweepSummaryLine?
        var lineNo = 0
        var start = 0
        var valid = 0
        var torn = false
        while start < bytes.count {
            lineNo += 1
            guard let nl = bytes[start...].firstIndex(of: 0x0A) else {
                if partial { torn = true; break }
                throw SweepFileError("line \(lineNo): no newline at the end (torn write?)")
            }
            let text = String(decoding: bytes[start..<nl], as: UTF8.self)
            start = nl + 1
            if summary != nil { throw SweepFileError("line \(lineNo): text after the summary line") }
            if header == nil {
                guard let h = try? dec.decode(SweepHeader.self, from: Data(text.utf8)), h.type == "header" else {
                    throw SweepFileError("line \(lineNo): not a sweep header (is this a sweep result file?)")
                }
                guard h.format == 1 else { throw SweepFileError("line \(lineNo): unknown format \(h.format)") }
                header = h
            } else if (try? dec.decode(Tag.self, from: Data(text.utf8)))?.type == "summary" {
                guard !partial else { throw SweepFileError("line \(lineNo): a summary in a partial file") }
                guard let s = try? dec.decode(SweepSummaryLine.self, from: Data(text.utf8)) else {
                    throw SweepFileError("line \(lineNo): bad summary line")
                }
                summary = s
            } else {
                guard let l = try? dec.decode(SweepSeedLine.self, from: Data(text.utf8)) else {
                    throw SweepFileError("line \(lineNo): bad seed line: \(text.prefix(80))")
                }
                lines.append(l)
                encoded.append(text)
            }
            valid = start
        }
        guard let header else { throw SweepFileError(bytes.isEmpty ? "empty file" : "line 1: no header") }
        if !partial {
            guard let summary else { throw SweepFileError("no summary line (the shard did not finish)") }
            guard summary.seedsRun == lines.count, summary.linesDigest == SweepSummaryLine.digest(encoded) else {
                throw SweepFileError("summary does not match the seed lines (file damaged)")
            }
        }
        return SweepResultFile(header: header, lines: lines, summary: summary, validLength: valid, tornTail: torn)
    }

    /// A local sweep's result in `directory`: the complete `results.jsonl`, else the `.partial` one
    /// a stopped or killed sweep leaves; nil when neither is there or readable.
    public static func read(directory: String) -> SweepResultFile? {
        for (name, partial) in [("results.jsonl", false), ("results.jsonl.partial", true)] {
            guard let d = FileManager.default.contents(atPath: directory + "/" + name) else { continue }
            if let f = try? parse(Array(d), partial: partial) { return f }
        }
        return nil
    }

    /// A complete file's bytes: header, lines sorted by seed, summary.
    public static func render(header: SweepHeader, lines: [SweepSeedLine]) -> [UInt8] {
        let sorted = lines.sorted { $0.seed < $1.seed }
        let encoded = sorted.map { jsonLine($0) }
        var out = jsonLine(header) + "\n"
        for l in encoded { out += l + "\n" }
        out += jsonLine(SweepSummaryLine(lines: sorted, encodedLines: encoded)) + "\n"
        return Array(out.utf8)
    }

    /// One line of JSON, keys sorted (so equal values are equal bytes).
    public static func jsonLine(_ v: some Encodable) -> String {
        let enc = JSONEncoder()
        enc.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: (try? enc.encode(v)) ?? Data("{}".utf8), as: UTF8.self)
    }
}

/// What `imsim sweep merge` makes of a directory of result files.
public struct SweepMerge: Sendable {
    public enum ShardState: String, Sendable, Codable { case done, partial, missing }

    public var header: SweepHeader?
    public var lines: [SweepSeedLine] = []
    /// Shard index → state, for 0..<shards.
    public var shards: [ShardState] = []
    /// Files that could not be used, with the reason.
    public var unreadable: [(name: String, reason: String)] = []
    /// Files that repeat a shard or seeds already merged (tolerated when identical).
    public var duplicates: [String] = []
    /// Seeds whose lines differ between files (a build or determinism problem).
    public var conflicts: [UInt64] = []

    public var missing: [Int] { shards.indices.filter { shards[$0] != .done } }
    public var failures: [SweepSeedLine] { lines.filter { $0.outcome == .fail } }
    public var complete: Bool { header != nil && missing.isEmpty && unreadable.isEmpty && conflicts.isEmpty }

    /// - Parameters:
    ///   - files: (name, bytes) of every `*.jsonl` (complete) and `*.jsonl.partial` file, any order.
    ///   - expected: the sweep as submitted (its manifest), if known; else the files' headers decide.
    public init(files: [(name: String, bytes: [UInt8])], expected: SweepHeader? = nil) {
        var parsed: [(String, SweepResultFile)] = []
        var partials: [(String, SweepResultFile)] = []
        for (name, bytes) in files.sorted(by: { $0.name < $1.name }) {
            let isPartial = name.hasSuffix(".partial")
            do {
                let f = try SweepResultFile.parse(bytes, partial: isPartial)
                if isPartial { partials.append((name, f)) } else { parsed.append((name, f)) }
            } catch {
                unreadable.append((name, error.description))
            }
        }
        let reference = expected ?? parsed.first?.1.header ?? partials.first?.1.header
        header = reference
        guard let reference else { return }
        shards = Array(repeating: .missing, count: reference.shards)
        var bySeed: [UInt64: SweepSeedLine] = [:]
        var conflicted: Set<UInt64> = []
        for (name, f) in parsed {
            guard f.header.sameSweep(as: reference), (0..<reference.shards).contains(f.header.shard) else {
                unreadable.append((name, "another sweep (scenario \(f.header.scenario) digest \(f.header.scenarioDigest), build \(f.header.build), seeds \(f.header.seeds), \(f.header.shards) shards)"))
                continue
            }
            guard let want = try? f.header.expectedSeeds(), want.sorted() == f.lines.map(\.seed).sorted() else {
                unreadable.append((name, "holds other seeds than shard \(f.header.shard)/\(f.header.shards) of \(f.header.seeds)"))
                continue
            }
            if shards[f.header.shard] == .done { duplicates.append(name) }
            shards[f.header.shard] = .done
            for l in f.lines {
                if let old = bySeed[l.seed] {
                    if old != l { conflicted.insert(l.seed) }
                } else {
                    bySeed[l.seed] = l
                }
            }
        }
        for (_, f) in partials where f.header.sameSweep(as: reference) && (0..<reference.shards).contains(f.header.shard) {
            if shards[f.header.shard] == .missing { shards[f.header.shard] = .partial }
        }
        conflicts = conflicted.sorted()
        lines = bySeed.keys.sorted().map { bySeed[$0]! }
    }

    /// The merged file (as one unsharded sweep of the same seeds would write it), when complete.
    public func render() -> [UInt8]? {
        guard complete, var h = header else { return nil }
        h.shard = 0
        h.shards = 1
        return SweepResultFile.render(header: h, lines: lines)
    }
}
