import Foundation
import IMSimTestSupport
import Testing

/// Issue 22 items 10–12 through the `imsim decode` / `imsim encode` command line (wire-protocol §1.3, §5).
@Suite(.serialized) struct WireCLIFidelityTests {
    /// QUERY pullMsg to "a😀" in CESU-8 (the official web client's bytes), as hex.
    static let cesuQueryHex = "52 0007 70756c6c4d7367 0007 61eda0bdedb880 0001 0800 1000"

    /// Seed rule: RongCloud publishes vectors as signed decimal bytes; `--decimal` takes them (-19 = 0xED).
    @Test func decimalAcceptsSignedBytes() throws {
        let signed = "82, 0, 7, 112, 117, 108, 108, 77, 115, 103, 0, 7, 97, -19, -96, -67, -19, -72, -128, 0, 1, 8, 0, 16, 0"
        let r = try imsim(["decode", "--decimal", signed, "--json"])
        #expect(r.status == 0, "\(r.err)")
        #expect(r.out.contains(#""targetId":"a😀""#), "\(r.out)")
        let bad = try imsim(["decode", "--decimal", "82, -129"])
        #expect(bad.status != 0)
        #expect(bad.err.contains("item 2") && bad.err.contains("-129"), "\(bad.err)")
    }

    /// Seed rule: `decode --json | encode` gives back the bytes, also for JSON strings holding
    /// U+2028, U+2029 or U+0085 (which are line breaks to Swift's `isNewline`, not to JSON Lines).
    @Test func jsonRoundTripKeepsUnicodeLineSeparatorsInStrings() throws {
        // QUERY pullMsg, targetId "x\u{2028}y\u{2029}z\u{85}" (UTF-8: e280a8, e280a9, c285).
        let hex = "52 0007 70756c6c4d7367 000b 78e280a879e280a97ac285 0001 0800 1000"
        let d = try imsim(["decode", "--hex", hex, "--json"])
        #expect(d.status == 0, "\(d.err)")
        let json = temporaryPath("wire-cli-json") + ".jsonl"
        defer { try? FileManager.default.removeItem(atPath: json) }
        // Two frames, so the input is JSON Lines (not one object).
        try (d.out + d.out).write(toFile: json, atomically: true, encoding: .utf8)
        let e = try imsim(["encode", "--input", json])
        #expect(e.status == 0, "\(e.err)")
        let want = hex.replacingOccurrences(of: " ", with: "")
        #expect(e.out.split(separator: "\n").map { $0.replacingOccurrences(of: " ", with: "") } == [want, want], "\(e.out)")
    }

    /// Seed rule (§1.3): decode takes CESU-8; encode writes CESU-8 by default and UTF-8 with --utf8.
    @Test func encodeWritesCESU8UnlessUTF8() throws {
        let d = try imsim(["decode", "--hex", Self.cesuQueryHex, "--json"])
        #expect(d.status == 0, "\(d.err)")
        let json = temporaryPath("wire-cli-cesu") + ".json"
        defer { try? FileManager.default.removeItem(atPath: json) }
        try d.out.write(toFile: json, atomically: true, encoding: .utf8)
        let cesu = try imsim(["encode", "--input", json])
        #expect(cesu.out.replacingOccurrences(of: " ", with: "").contains("000761eda0bdedb880"), "\(cesu.out)")
        let utf8 = try imsim(["encode", "--input", json, "--utf8"])
        #expect(utf8.out.replacingOccurrences(of: " ", with: "").contains("000561f09f9880"), "\(utf8.out)")
    }

    /// Seed rule: as liberal as the official decoders (a note), `--strict` as before (an error).
    @Test func extraBytesAreANoteUnlessStrict() throws {
        let lenient = try imsim(["decode", "--hex", "d0 00 01", "--direction", "s2c"])
        #expect(lenient.status == 0, "\(lenient.err)")
        #expect(lenient.out.contains("PINGRESP"))
        #expect(lenient.err.contains("note: 2 extra bytes at byte 1 ignored"), "\(lenient.err)")
        let strict = try imsim(["decode", "--hex", "d0 00 01", "--direction", "s2c", "--strict"])
        #expect(strict.status == 1)
        #expect(strict.err.contains("2 unexpected trailing bytes at byte 1"), "\(strict.err)")
        let qos3 = try imsim(["decode", "--hex", "c6"])
        #expect(qos3.status == 0 && qos3.err.contains("QoS 3"), "\(qos3.err)")
    }
}
