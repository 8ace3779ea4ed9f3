import IMWire
import SimKernel
import SwiftProtobuf

/// Deterministic random-mutation fuzzing of every parser in IMWire (`imsim fuzz wire`, and a short
/// run in the tests). Input `i` of a run is a pure function of `(seed, i)`, so any finding replays
/// alone with `run(seed:, iterations: 1, first: i)`.
///
/// Each input starts from valid frames (`FrameGenerator`), stream- or message-framed, optionally
/// obfuscated, and gets 0–4 mutations (bit flips, interesting bytes, inserted/deleted/duplicated
/// ranges, truncation, forged lengths). Then it checks, besides "does not crash or hang":
/// 1. split invariance — the stream decoder fed in random chunks yields the same frames and error
///    as fed in one piece;
/// 2. canonical decoding — the frames decoded re-encode to exactly the bytes they came from;
/// 3. every error names an offset inside the input;
/// 4. JSON descriptions of decoded frames read back to the same frames;
/// 5. bodies and contents of decoded frames decode or fail with a typed error; content JSON
///    re-parses to the same value after canonical serialisation;
/// 6. the hand-written protobuf path (`FastProto`) agrees with swift-protobuf wherever it answers.
/// A broken invariant is counted in `violations` (not a crash) with a description of the first.
///
/// A `FuzzTarget` run by the shared `FuzzRunner`; `imsim fuzz wire` keeps its own subcommand for
/// its richer report (`Stats`: frames, bodies, contents).
public struct WireFuzz: FuzzTarget {
    public static let name = "wire"
    public static let abstract = "Fuzz every IMWire parser (frames, stream/message framing, bodies, contents)."
    /// Unsalted: the wire inputs predate the registry, and a recorded finding replays as before.
    public static var streamSalt: UInt64 { 0 }

    /// What this target counted over the inputs it was given (the wire-specific part of `Stats`).
    public private(set) var counts = Stats(seed: 0, iterations: 0)

    public init() {}

    public mutating func fuzzOne(_ rng: inout RandomStream) -> FuzzOutcome {
        let before = counts.inputBytes
        let o = Self.fuzzInput(&rng, stats: &counts)
        return FuzzOutcome(inputBytes: counts.inputBytes - before, error: o.error?.kind, violation: o.violation,
                           fingerprint: UInt64(o.frames), errorDetail: UInt64(bitPattern: Int64(o.error?.offset ?? -1)))
    }

    public struct Stats: Sendable, Hashable, Codable {
        public var seed: UInt64
        public var iterations: Int
        public var inputBytes: Int = 0
        public var framesDecoded: Int = 0
        /// Inputs that decoded without any error.
        public var cleanInputs: Int = 0
        public var bodiesDecoded: Int = 0
        public var bodyErrors: Int = 0
        public var contentsDecoded: Int = 0
        public var contentErrors: Int = 0
        /// Error kind → count, sorted by kind.
        public var errors: [ErrorCount] = []
        public var violations: Int = 0
        public var firstViolation: String?
        /// Digest of every outcome: equal for equal (seed, iterations) on every machine.
        public var digest: String = ""

        public struct ErrorCount: Sendable, Hashable, Codable {
            public var kind: String
            public var count: Int
        }
    }

    /// Fuzzes inputs `first ..< first + iterations` of `seed`.
    public static func run(seed: UInt64, iterations: Int, first: Int = 0) -> Stats {
        var target = WireFuzz()
        let shared = FuzzRunner.run(&target, seed: seed, iterations: iterations, first: first)
        var stats = target.counts
        stats.seed = seed
        stats.iterations = iterations
        stats.cleanInputs = shared.accepted
        stats.errors = shared.errors.map { Stats.ErrorCount(kind: $0.kind, count: $0.count) }
        stats.violations = shared.violations
        stats.firstViolation = shared.firstViolation
        stats.digest = shared.digest
        return stats
    }

    struct Outcome {
        var frames = 0
        var error: WireError?
        var violation: String?
    }

    static func fuzzInput(_ rng: inout RandomStream, stats: inout Stats) -> Outcome {
        let direction: WireDirection = rng.below(2) == 0 ? .clientToServer : .serverToClient
        switch rng.below(16) {
        case 0: return fuzzMessageFraming(&rng, direction: direction, stats: &stats)
        case 1: return fuzzBody(&rng, stats: &stats)
        case 2: return fuzzContent(&rng, stats: &stats)
        default: return fuzzStream(&rng, direction: direction, stats: &stats)
        }
    }

    // MARK: Stream framing

    static func fuzzStream(_ rng: inout RandomStream, direction: WireDirection, stats: inout Stats) -> Outcome {
        let obfuscated = rng.below(4) == 0
        let maxFrame = rng.below(4) == 0 ? 16 + Int(rng.below(300)) : StreamDecoder.defaultMaxFrameSize
        var input: [UInt8] = []
        for _ in 0..<(1 + Int(rng.below(4))) {
            let f = FrameGenerator.frame(direction: direction, using: &rng)
            try? StreamFraming.encode(f, direction: direction, obfuscated: obfuscated, into: &input)
        }
        mutate(&input, &rng)
        stats.inputBytes += input.count
        var out = Outcome()

        // Whole.
        var whole = StreamDecoder(direction: direction, maxFrameSize: maxFrame, obfuscated: obfuscated)
        let (framesA, errorA) = drain(&whole, chunks: [input[...]])
        // Split at random points.
        var chunks: [ArraySlice<UInt8>] = []
        var at = 0
        while at < input.count {
            let n = rng.below(3) == 0 ? 1 : 1 + Int(rng.below(UInt64(max(1, input.count / 2))))
            chunks.append(input[at..<min(input.count, at + n)])
            at += n
        }
        var split = StreamDecoder(direction: direction, maxFrameSize: maxFrame, obfuscated: obfuscated)
        let (framesB, errorB) = drain(&split, chunks: chunks)

        out.frames = framesA.count
        out.error = errorA
        stats.framesDecoded += framesA.count
        if framesA != framesB || errorA != errorB {
            out.violation = "split changed the result: \(framesA.count) frames/\(errorA.map { "\($0)" } ?? "ok") whole vs \(framesB.count)/\(errorB.map { "\($0)" } ?? "ok") split"
            return out
        }
        if let o = errorA?.offset, o < 0 || o > input.count {
            out.violation = "error offset \(o) outside the \(input.count)-byte input: \(errorA!)"
            return out
        }
        // Header strings may have come as CESU-8 or UTF-8 (wire-protocol §1.3): either writer may give them back.
        var canonical = false
        for strings in WireStringEncoding.allCases where !canonical {
            var again: [UInt8] = []
            for f in framesA {
                do {
                    try StreamFraming.encode(f, direction: direction, obfuscated: obfuscated, strings: strings, into: &again)
                } catch {
                    out.violation = "decoded frame does not re-encode: \(error)"
                    return out
                }
            }
            canonical = again.count <= input.count && again[...] == input[..<again.count]
        }
        if !canonical && !hasJavaNUL(input) {
            out.violation = "decoded frames re-encode to different bytes"
            return out
        }
        if let v = checkFrames(framesA, direction: direction, stats: &stats) { out.violation = v }
        return out
    }

    /// `C0 80` (U+0000 as Java writes it) is accepted but never written: such input is not canonical.
    static func hasJavaNUL(_ bytes: [UInt8]) -> Bool {
        zip(bytes, bytes.dropFirst()).contains { $0 == 0xC0 && $1 == 0x80 }
    }

    /// Feeds every chunk, then `finish()`; returns the frames and the first error.
    static func drain(_ d: inout StreamDecoder, chunks: [ArraySlice<UInt8>]) -> ([Frame], WireError?) {
        var frames: [Frame] = []
        do {
            for c in chunks {
                frames += try c.withUnsafeBufferPointer { (b) throws(WireError) -> [Frame] in try d.feed(b) }
            }
            _ = try d.feed([])      // a deferred error surfaces here
            try d.finish()
            return (frames, nil)
        } catch {
            return (frames, error)
        }
    }

    // MARK: Message framing, bodies, content

    static func fuzzMessageFraming(_ rng: inout RandomStream, direction: WireDirection, stats: inout Stats) -> Outcome {
        let f = FrameGenerator.frame(direction: direction, using: &rng)
        var input = (try? MessageFraming.encode(f, direction: direction)) ?? []
        mutate(&input, &rng)
        stats.inputBytes += input.count
        var out = Outcome()
        do {
            let frame = try MessageFraming.decode(input, direction: direction)
            out.frames = 1
            stats.framesDecoded += 1
            let canonical = WireStringEncoding.allCases.contains { (try? MessageFraming.encode(frame, direction: direction, strings: $0)) == input }
            if !canonical && !hasJavaNUL(input) {
                out.violation = "message-framed frame re-encodes to different bytes"
            } else if let v = checkFrames([frame], direction: direction, stats: &stats) {
                out.violation = v
            }
        } catch {
            out.error = error
            if let o = error.offset, o < 0 || o > input.count {
                out.violation = "error offset \(o) outside the \(input.count)-byte input: \(error)"
            }
        }
        return out
    }

    static func fuzzBody(_ rng: inout RandomStream, stats: inout Stats) -> Outcome {
        // Half of the inputs go to the three messages with a hand-written fast path.
        let hot: [BodyKind] = [.upStreamMessage, .downStreamMessage, .downStreamMessages]
        let kind = rng.below(2) == 0 ? hot[rng.uniform(0..<3)] : BodyKind.allCases[rng.uniform(0..<BodyKind.allCases.count)]
        var input = (try? ProtoBody.encode(FrameGenerator.message(kind, using: &rng))) ?? []
        mutate(&input, &rng)
        stats.inputBytes += input.count
        var out = Outcome()
        if let v = fastPathMismatch(kind, input) {
            out.violation = v
            return out
        }
        do {
            _ = try kind.decode(input)
            stats.bodiesDecoded += 1
        } catch {
            stats.bodyErrors += 1
            out.error = error
            guard case .protobuf(let message, _, _, let o) = error, message == kind.rawValue, o >= 0, o <= input.count else {
                out.violation = "body error does not name \(kind.rawValue) and an offset in the body: \(error)"
                return out
            }
        }
        return out
    }

    static func fuzzContent(_ rng: inout RandomStream, stats: inout Stats) -> Outcome {
        let content = FrameGenerator.content(using: &rng)
        var input = (try? content.encoded()) ?? []
        mutate(&input, &rng)
        stats.inputBytes += input.count
        var out = Outcome()
        do {
            let c = try MessageContent.decode(objectName: content.objectName, bytes: input)
            stats.contentsDecoded += 1
            if case .raw = c {} else {
                // A typed value's canonical bytes decode to the same value.
                let again = try MessageContent.decode(objectName: c.objectName, bytes: c.encoded())
                if again != c { out.violation = "content \(c.objectName) changes after canonical re-encoding" }
            }
        } catch {
            stats.contentErrors += 1
            out.error = error
        }
        if let json = try? JSONValue.parse(input), (try? JSONValue.parse(json.serialized())) != json {
            out.violation = "JSON changes after canonical serialisation"
        }
        return out
    }

    /// Differential check of `FastProto` against swift-protobuf: when the fast path answers, its
    /// value equals swift-protobuf's, and re-encoding that value gives swift-protobuf's bytes.
    static func fastPathMismatch(_ kind: BodyKind, _ bytes: [UInt8]) -> String? {
        func check<M: SwiftProtobuf.Message & Equatable>(_ fast: M?, _ encode: (M) -> [UInt8]?) -> String? {
            guard let fast else { return nil }
            guard let reference = try? M(serializedBytes: bytes) else {
                return "FastProto decoded a \(kind.rawValue) that swift-protobuf rejects: \(Hex.encode(bytes))"
            }
            if reference != fast { return "FastProto decoded \(kind.rawValue) differently: \(Hex.encode(bytes))" }
            let referenceBytes: [UInt8]? = try? reference.serializedBytes()
            if encode(reference) != referenceBytes { return "FastProto encodes \(kind.rawValue) differently: \(Hex.encode(bytes))" }
            return nil
        }
        switch kind {
        case .upStreamMessage: return check(FastProto.decodeUpStream(bytes), FastProto.encode)
        case .downStreamMessage: return check(FastProto.decodeDownStream(bytes), FastProto.encode)
        case .downStreamMessages: return check(FastProto.decodeDownStreamMessages(bytes), FastProto.encode)
        default: return nil
        }
    }

    /// Invariants 4 and 5 on decoded frames.
    static func checkFrames(_ frames: [Frame], direction: WireDirection, stats: inout Stats) -> String? {
        for f in frames {
            let json = FrameJSON.describe(f, direction: direction)
            guard let parsed = try? JSONValue.parse(json.serialized()), parsed == json else {
                return "frame JSON does not re-parse"
            }
            switch Result(catching: { () throws(WireError) in try FrameJSON.frame(from: parsed) }) {
            case .success(let back) where back.frame == f && back.direction == direction: break
            case .success: return "frame JSON reads back to a different frame"
            case .failure(let e): return "frame JSON does not read back: \(e)"
            }
            guard let body = f.body, !body.isEmpty, let kind = f.bodyKind() else { continue }
            do {
                let m = try kind.decode(body)
                stats.bodiesDecoded += 1
                var contents: [(String, [UInt8])] = []
                if let up = m as? RMTPUpStreamMessage { contents.append((up.classname, up.contentBytes)) }
                if let down = m as? RMTPDownStreamMessage { contents.append((down.classname, down.contentBytes)) }
                for d in (m as? RMTPDownStreamMessages)?.list ?? [] { contents.append((d.classname, d.contentBytes)) }
                for (name, bytes) in contents {
                    if (try? MessageContent.decode(objectName: name, bytes: bytes)) != nil {
                        stats.contentsDecoded += 1
                    } else {
                        stats.contentErrors += 1
                    }
                }
            } catch {
                stats.bodyErrors += 1
            }
        }
        return nil
    }

    // MARK: Mutations

    static let interesting: [UInt8] = [0x00, 0x01, 0x7F, 0x80, 0xFF, 0x22, 0x5C, 0xC0, 0xED, 0xF4]

    /// 0–4 random byte-level mutations (shared by every `imsim fuzz` target).
    public static func mutate(_ b: inout [UInt8], _ rng: inout RandomStream) {
        let n = rng.below(8) == 0 ? 0 : 1 + Int(rng.below(4))
        for _ in 0..<n {
            switch rng.below(9) {
            case 0 where !b.isEmpty:     // flip a bit
                let i = rng.uniform(0..<b.count)
                b[i] ^= 1 << UInt8(rng.below(8))
            case 1 where !b.isEmpty:     // random byte
                b[rng.uniform(0..<b.count)] = UInt8(truncatingIfNeeded: rng.next())
            case 2 where !b.isEmpty:     // interesting byte
                b[rng.uniform(0..<b.count)] = interesting[rng.uniform(0..<interesting.count)]
            case 3:                      // insert random bytes
                let at = rng.uniform(0..<(b.count + 1))
                b.insert(contentsOf: (0..<(1 + Int(rng.below(8)))).map { _ in UInt8(truncatingIfNeeded: rng.next()) }, at: at)
            case 4 where !b.isEmpty:     // delete a range
                let at = rng.uniform(0..<b.count)
                b.removeSubrange(at..<min(b.count, at + 1 + Int(rng.below(8))))
            case 5 where !b.isEmpty:     // truncate
                b.removeSubrange(rng.uniform(0..<b.count)...)
            case 6 where !b.isEmpty:     // duplicate a range
                let at = rng.uniform(0..<b.count)
                let r = Array(b[at..<min(b.count, at + 1 + Int(rng.below(16)))])
                b.insert(contentsOf: r, at: rng.uniform(0..<(b.count + 1)))
            case 7:                      // forged varint length / u16 string length
                let forged: [[UInt8]] = [[0xFF, 0xFF, 0xFF, 0x7F], [0xFF, 0xFF, 0xFF, 0xFF, 0x01], [0x80, 0x00], [0xFF, 0xFF]]
                let f = forged[rng.uniform(0..<forged.count)]
                let at = rng.uniform(0..<(b.count + 1))
                b.replaceSubrange(at..<min(b.count, at + f.count), with: f)
            default:                     // swap two bytes
                guard b.count >= 2 else { continue }
                b.swapAt(rng.uniform(0..<b.count), rng.uniform(0..<b.count))
            }
        }
    }
}
