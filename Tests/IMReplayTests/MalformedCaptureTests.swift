import Foundation
import IMClient
import IMStore
import IMWire
import SimKernel
import Testing
@testable import IMReplay

/// Malformed captures are refused with a typed error naming the line (and the field), never a
/// crash, a hang or a huge allocation.
@Suite struct MalformedCaptureTests {
    /// A small valid capture: header, app start, connect, open, opened, CONNECT out, CONNACK in.
    static let valid: [String] = {
        let sink = CaptureMemorySink()
        let rec = CaptureRecorder(header: CaptureFormatTests.header(), sink: sink)
        let store = try! IMStore(location: .memory)
        var core = ClientCore(identity: CaptureFormatTests.header().identity, config: CaptureFormatTests.header().config, store: store)
        rec.recordAppStart(at: 1_000)
        for (t, input) in [(Int64(1_000), ClientInput.api(.connect(token: "tok", timeLimitSeconds: 0))), (1_050, .transport(.opened))] {
            rec.record(input: input, at: t)
            rec.record(effects: core.handle(input, now: DeviceTime(milliseconds: t)), at: t)
        }
        let connack = try! StreamFraming.encode(.connack(Frame.Connack(status: .accepted, session: .init(userId: "alice", sessionId: "s", timestamp: 1_090))),
                                                direction: .serverToClient)
        rec.record(input: .transport(.bytes(connack)), at: 1_100)
        rec.record(effects: core.handle(.transport(.bytes(connack)), now: DeviceTime(milliseconds: 1_100)), at: 1_100)
        try! rec.finish()
        return lines(sink.bytes).filter { !$0.isEmpty }
    }()

    static func index(of kind: String, in l: [String]) -> Int { l.firstIndex { $0.contains("\"kind\":\"\(kind)\"") }! }

    @Test func theBaseCaptureIsValid() {
        #expect(readError(bytes(Self.valid)) == nil)
        #expect(Self.valid.count >= 8)
    }

    @Test func badJSON() {
        var l = Self.valid
        l[3] = String(l[3].dropLast())   // cut the closing brace
        let e = readError(bytes(l))
        #expect(e?.kind == .badJSON)
        #expect(e?.line == 4)
    }

    @Test func unknownKind() {
        var l = Self.valid
        l[2] = l[2].replacingOccurrences(of: "\"kind\":\"api\"", with: "\"kind\":\"telepathy\"")
        let e = readError(bytes(l))
        #expect(e?.kind == .unknownKind)
        #expect(e?.line == 3)
        #expect(e?.field == "kind")
    }

    @Test func timeGoingBackwards() {
        var l = Self.valid
        let i = Self.index(of: "opened", in: l)
        l[i] = l[i].replacingOccurrences(of: "\"t\":1050", with: "\"t\":999")
        let e = readError(bytes(l))
        #expect(e?.kind == .timeBackwards)
        #expect(e?.line == i + 1)
        #expect(e?.field == "t")
    }

    @Test func aDeclaredClockStepMayGoBack() {
        var l = Self.valid
        let i = Self.index(of: "opened", in: l)
        l.insert("{\"t\":900,\"kind\":\"clock\",\"stepMs\":-200}", at: i)
        l[i + 1] = l[i + 1].replacingOccurrences(of: "\"t\":1050", with: "\"t\":950")
        #expect(readError(bytes(l)) == nil)
        // …but not further than the step.
        l[i] = "{\"t\":700,\"kind\":\"clock\",\"stepMs\":-200}"
        #expect(readError(bytes(l))?.kind == .timeBackwards)
    }

    @Test func frameThatDoesNotDecode() throws {
        var l = Self.valid
        let i = Self.index(of: "in", in: l)
        // Corrupt the checksum byte (the second byte of the stream frame).
        var obj = try JSONValue.parse(l[i])
        let hex = obj["hex"]!.stringValue!
        let bad = String(hex.prefix(2)) + (hex.dropFirst(2).hasPrefix("ff") ? "00" : "ff") + hex.dropFirst(4)
        obj = obj.setting("hex", .string(bad))
        l[i] = obj.serializedString
        let e = readError(bytes(l))
        #expect(e?.kind == .frameDecode)
        #expect(e?.line == i + 1)
        #expect(e?.message.contains("checksum") == true)
    }

    @Test func aClaimedTwoGigabyteLengthIsRefusedWithoutAllocating() {
        var l = Self.valid
        let i = Self.index(of: "in", in: l)
        l[i] = l[i].replacing(#/"len":\d+/#, with: "\"len\":2147483648")
        let e = readError(bytes(l))
        #expect(e?.kind == .absurdLength)
        #expect(e?.line == i + 1)
        #expect(e?.field == "len")
    }

    @Test func aFrameHeaderClaimingTheMaximumLengthIsRefusedFromTheHeader() {
        var l = Self.valid
        let i = Self.index(of: "in", in: l)
        // PUBLISH, checksum = 0x30 ^ ff ^ ff ^ ff ^ 7f, remaining length 268,435,455 — 5 bytes sent.
        let head: [UInt8] = [0x30, 0x30 ^ 0xFF ^ 0xFF ^ 0xFF ^ 0x7F, 0xFF, 0xFF, 0xFF, 0x7F, 0x00]
        l[i] = "{\"t\":1100,\"kind\":\"in\",\"conn\":1,\"hex\":\"\(Hex.encode(head))\"}"
        let e = readError(bytes(l))
        #expect(e?.kind == .frameDecode)
        #expect(e?.line == i + 1)
        #expect(e?.message.contains("too large") == true || e?.message.contains("Large") == true || e?.message.contains("large") == true)
    }

    @Test func truncatedZstd() throws {
        // A compressed capture big enough to span several zstd blocks, cut short.
        var l = Self.valid
        for k in 0..<20_000 { l.append("{\"t\":\(2000 + k),\"kind\":\"network\",\"available\":\(k % 2 == 0)}") }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("imreplay-zst-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("c.jsonl.zst").path
        let sink = try CaptureFileSink(path: path)
        try sink.write(bytes(l) + [0x0A])
        try sink.finish()
        let whole = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(Array(whole.prefix(4)) == [0x28, 0xB5, 0x2F, 0xFD])   // the zstd frame magic
        #expect(readError(whole) == nil)
        // A writer killed mid-frame: the complete lines before the cut are read, the tail is
        // reported as torn (issue 23), not as an error that loses the whole capture.
        let reader = try CaptureReader(bytes: Array(whole.prefix(whole.count * 2 / 3)))
        let records = try reader.readAll()
        #expect(records.count > Self.valid.count)
        #expect(records.count < l.count - 1)
        #expect(reader.tornTail?.kind == .zstd)
        #expect((reader.tornTail?.line ?? 0) > Self.valid.count)
    }

    @Test func aTornLastLineReplaysTheCompleteLinesBeforeIt() throws {
        let whole = bytes(Self.valid) + [0x0A]
        let complete = try replay(whole)
        // Cut inside the last record: its line has no newline and does not decode.
        let cut = Array(whole.dropLast(12))
        let reader = try CaptureReader(bytes: cut)
        let records = try reader.readAll()
        #expect(records.count == Self.valid.count - 2)
        #expect(reader.tornTail?.kind == .badJSON)
        #expect(reader.tornTail?.line == Self.valid.count)
        let torn = try replay(cut)
        #expect(torn.records == complete.records - 1)
        #expect(torn.notes.contains { $0.hasPrefix("warning: the capture ends in a torn line (line \(Self.valid.count)") })
        // A damaged line that is not the last one is still an error.
        var l = Self.valid
        l[3] = String(l[3].dropLast())
        #expect(readError(bytes(l) + [0x0A])?.kind == .badJSON)
    }

    @Test func otherStructuralErrors() {
        var l = Self.valid
        // Missing field.
        l[2] = l[2].replacingOccurrences(of: "\"token\":\"tok\",", with: "")
        #expect(readError(bytes(l)).map { ($0.kind, $0.line, $0.field) } ?? (.io, 0, nil) == (.missingField, 3, "token"))
        // Unknown field.
        l = Self.valid
        l[1] = l[1].replacingOccurrences(of: "\"event\":\"start\"", with: "\"event\":\"start\",\"colour\":\"blue\"")
        #expect(readError(bytes(l))?.kind == .invalidField)
        // Wrong connection.
        l = Self.valid
        let i = Self.index(of: "opened", in: l)
        l[i] = l[i].replacingOccurrences(of: "\"conn\":1", with: "\"conn\":7")
        #expect(readError(bytes(l)).map { ($0.kind, $0.line) } ?? (.io, 0) == (.badConnection, i + 1))
        // Blank line, no header, other version, over-long line.
        l = Self.valid
        l.insert("", at: 3)
        #expect(readError(bytes(l))?.kind == .emptyLine)
        #expect(readError(bytes(Array(Self.valid.dropFirst())))?.kind == .badHeader)
        #expect(readError([])?.kind == .badHeader)
        l = Self.valid
        l[0] = l[0].replacingOccurrences(of: "\"version\":1", with: "\"version\":2")
        #expect(readError(bytes(l))?.kind == .unsupportedVersion)
        l = Self.valid
        l.insert("{\"t\":1000,\"kind\":\"api\",\"call\":\"send\",\"conversation\":\"private:bob\",\"objectName\":\"RC:TxtMsg\",\"content\":\"\(String(repeating: "x", count: 5000))\"}", at: 3)
        #expect(readError(bytes(l), maxLineLength: 2048).map { ($0.kind, $0.line) } ?? (.io, 0) == (.lineTooLong, 4))
    }

    @Test func garbageNeverCrashes() {
        // Random bytes and random edits of a valid capture: always a typed error or a clean read.
        var rng = RandomStreams(seed: 7).stream("garbage")
        let base = Array(bytes(Self.valid).utf8Bytes)
        for _ in 0..<300 {
            var b = base
            for _ in 0..<(1 + Int(rng.below(6))) {
                let at = Int(rng.below(UInt64(b.count)))
                switch rng.below(3) {
                case 0: b[at] = UInt8(truncatingIfNeeded: rng.next())
                case 1: b.remove(at: at)
                default: b.insert(UInt8(truncatingIfNeeded: rng.next()), at: at)
                }
            }
            if let e = readError(b) { #expect(e.line >= 0) }
        }
    }
}

private extension Array where Element == UInt8 {
    var utf8Bytes: [UInt8] { self }
}
