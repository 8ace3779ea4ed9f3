import IMTrace
import IMWire
import SimKernel

/// `imsim fuzz trace`: mutated trace containers (header, zstd blocks, string tables, footer), read
/// strictly and in salvage mode. Every input must end in records or a `TraceError`; salvage must
/// name damage inside the file and never return a record from a block it reported damaged.
public struct TraceFuzz: FuzzTarget {
    public static let name = "trace"
    public static let abstract = "Mutated .imtrace containers through TraceReader (strict and salvage)."

    let bases: [[UInt8]]

    public init() {
        var out: [[UInt8]] = []
        for (seed, count, perBlock, finish) in [(UInt64(1), 40, 7, true), (2, 25, 25, true), (3, 30, 4, false)] {
            guard let header = try? TraceHeader(seed: seed, scenarioDigest: 0xF022, scenarioName: "fuzz", options: [TraceOption("nodes", "3")]),
                  let w = try? TraceWriter(inMemory: header, options: TraceWriterOptions(compressionLevel: 1, recordsPerBlock: perBlock,
                                                                                          writerThread: false)) else { continue }
            for r in SyntheticTraceStream.records(seed: seed, count: count) { try? SyntheticTraceStream.append(r, to: w) }
            if finish { _ = try? w.finish(finalDigest: 0x5EED) } else { try? w.flush() }
            out.append(w.bytes)
        }
        bases = out
    }

    /// The error's case name (`checksum`, `truncatedBlock`, …).
    static func kind(_ e: TraceError) -> String { Mirror(reflecting: e).children.first?.label ?? "\(e)" }

    public mutating func fuzzOne(_ rng: inout RandomStream) -> FuzzOutcome {
        guard !bases.isEmpty else { return FuzzOutcome(inputBytes: 0, violation: "no base trace") }
        var b = bases[Int(rng.below(UInt64(bases.count)))]
        // Mutate inside one region more often than anywhere: header, a block, or the footer.
        if rng.below(2) == 0, b.count > 64 {
            let at = rng.uniform(0..<b.count)
            let range = at..<min(b.count, at + 1 + Int(rng.below(64)))
            var region = Array(b[range])
            FuzzRunner.mutate(&region, &rng)
            b.replaceSubrange(range, with: region)
        } else {
            FuzzRunner.mutate(&b, &rng)
        }
        var fingerprint: UInt64 = 0
        var firstError: String?
        for mode in [TraceReader.Mode.strict, .salvage] {
            do {
                let reader = try TraceReader(bytes: b, mode: mode)
                var records = 0
                while let r = try reader.next() {
                    records += 1
                    if records > 1_000_000 { return FuzzOutcome(inputBytes: b.count, violation: "more than 10^6 records from \(b.count) bytes") }
                    _ = try? SyntheticTraceStream.decode(r)
                }
                for d in reader.damage where d.offset < 0 || d.offset > b.count {
                    return FuzzOutcome(inputBytes: b.count, violation: "damage at offset \(d.offset) of \(b.count)")
                }
                fingerprint = fingerprint &* 31 &+ UInt64(records) &+ UInt64(reader.damage.count) << 20
            } catch {
                if firstError == nil { firstError = Self.kind(error) }
                fingerprint = fingerprint &* 31 &+ StableHash.fnv1a(Self.kind(error))
            }
        }
        return FuzzOutcome(inputBytes: b.count, error: firstError, fingerprint: fingerprint)
    }
}
