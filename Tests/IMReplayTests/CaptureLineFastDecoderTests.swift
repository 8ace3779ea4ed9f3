import Foundation
import IMClient
import IMWire
import IMWorld
import SimKernel
import Testing
import IMCapture
@testable import IMReplay

/// The typed fast path of the capture reader (CaptureLineFastDecoder) must accept exactly the
/// lines the general path (JSONValue + CaptureLineCodec) accepts and give the same records; for
/// every other line the general path answers, with its error. Each line is decoded both ways:
/// recorded captures, every truncation and many one-byte changes of recorded lines, and edge cases.
@Suite struct CaptureLineFastDecoderTests {
    /// A record or an error, as text that differs when either differs.
    static func outcome(_ r: Result<CaptureRecord, CaptureError>) -> String {
        switch r {
        case .success(let rec):
            return "record line \(rec.line) inferred \(rec.inferred ?? "-") " + CaptureLineCodec.encode(rec).serializedString
        case .failure(let e):
            return "error \(e.kind) line \(e.line) field \(e.field ?? "-"): \(e.message)"
        }
    }

    static func both(_ line: [UInt8], line n: Int = 7) -> (combined: String, general: String, fast: CaptureRecord?) {
        let combined = outcome(Result { () throws(CaptureError) in try CaptureReader.decodeRecord(line, line: n) })
        let general = outcome(Result { () throws(CaptureError) in try CaptureReader.decodeRecordGeneral(line, line: n) })
        return (combined, general, CaptureReader.decodeRecordFast(line, line: n))
    }

    /// The same answer both ways; a line the fast path takes is one the general path accepts.
    static func expectSame(_ line: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        let (c, g, f) = both(line)
        #expect(c == g, "\(String(decoding: line, as: UTF8.self))", sourceLocation: sourceLocation)
        if let f {
            #expect(g == outcome(.success(f)), "fast path took \(String(decoding: line, as: UTF8.self))", sourceLocation: sourceLocation)
        }
    }

    static func recordLines(_ capture: [UInt8]) -> [[UInt8]] {
        lines(capture).dropFirst().filter { !$0.isEmpty }.map { Array($0.utf8) }
    }

    static let quickstartLines: [[UInt8]] = {
        let (sc, _) = try! Scenario.load(pathOrName: tracePath("Traces/scenarios/quickstart.json"))
        let (captures, _) = try! recordRun(sc, until: .seconds(180), devices: ["alice-phone", "bob-phone", "dave-web"])
        return captures.keys.sorted().flatMap { recordLines(captures[$0]!) }
    }()

    @Test func recordedCapturesDecodeTheSameBothWays() throws {
        var all = Self.quickstartLines
        for name in ["dedup-b1", "order-b4", "chatroom-drop-b6"] {
            all += Self.recordLines(Array(try Data(contentsOf: URL(fileURLWithPath: tracePath("Traces/captures/\(name).jsonl")))))
        }
        #expect(all.count > 500)
        var taken = 0, frameLines = 0
        for l in all {
            Self.expectSame(l)
            let text = String(decoding: l, as: UTF8.self)
            let isFrames = text.contains("\"kind\":\"in\"") || text.contains("\"kind\":\"out\"")
            if isFrames { frameLines += 1 }
            if CaptureReader.decodeRecordFast(l, line: 1) != nil {
                taken += 1
            } else {
                // The recorder writes every in/out line in the form the fast path takes.
                #expect(!isFrames || text.contains("\"b64\"") || text.contains("\"inferred\""), "fast path refused \(text)")
            }
        }
        #expect(frameLines > 200)
        #expect(taken >= frameLines)
    }

    /// Every prefix and many one-byte changes of recorded lines of each kind the fast path takes.
    @Test func truncatedAndAlteredLinesDecodeTheSameBothWays() {
        var sample: [[UInt8]] = []
        var perKind: [String: Int] = [:]
        for l in Self.quickstartLines {
            let text = String(decoding: l, as: UTF8.self)
            guard let k = text.range(of: "\"kind\":\"")
                .map({ String(text[$0.upperBound...].prefix { $0 != "\"" }) }) else { continue }
            if perKind[k, default: 0] < 2 {
                perKind[k, default: 0] += 1
                sample.append(Array(l.prefix(300)))
            }
        }
        #expect(sample.count >= 8)
        let replacements: [UInt8] = Array("\"\\0-9},: xA{[".utf8) + [0x00, 0x0D, 0xC3, 0xFF]
        for l in sample {
            for n in 0..<l.count { Self.expectSame(Array(l[..<n])) }
            for i in 0..<l.count {
                for r in replacements where r != l[i] {
                    var m = l
                    m[i] = r
                    Self.expectSame(m)
                }
            }
        }
    }

    static let edgeCases: [String] = [
        // As written, and the same fields in another order.
        #"{"t":5,"kind":"in","conn":1,"hex":"0a0b","len":2,"frames":["x"]}"#,
        #"{"frames":["x"],"len":2,"hex":"0a0b","conn":1,"kind":"in","t":5}"#,
        #"{"kind":"out","t":5,"hex":"ff","conn":1}"#,
        // Escapes and unicode in the informational frames.
        #"{"t":5,"kind":"in","conn":1,"hex":"0a","frames":["a \"q\" \\ \/ \b\f\n\r\t"]}"#,
        #"{"t":5,"kind":"in","conn":1,"hex":"0a","frames":["\u00e9\u00E9 \ud83d\ude00"]}"#,
        #"{"t":5,"kind":"in","conn":1,"hex":"0a","frames":["\ud83d"]}"#,
        #"{"t":5,"kind":"in","conn":1,"hex":"0a","frames":["\ude00"]}"#,
        #"{"t":5,"kind":"in","conn":1,"hex":"0a","frames":["\ud83d\u0041"]}"#,
        #"{"t":5,"kind":"in","conn":1,"hex":"0a","frames":["\u12"]}"#,
        #"{"t":5,"kind":"in","conn":1,"hex":"0a","frames":["\x"]}"#,
        #"{"t":5,"kind":"in","conn":1,"hex":"0a","frames":["é → ✓"]}"#,
        #"{"t":5,"kind":"in","conn":1,"hex":"0a","frames":[]}"#,
        #"{"t":5,"kind":"in","conn":1,"hex":"0a","frames":["a",]}"#,
        #"{"t":5,"kind":"in","conn":1,"hex":"0a","frames":[1]}"#,
        #"{"t":5,"kind":"in","conn":1,"hex":"0a","frames":"x"}"#,
        #"{"t":5,"kind":"in","conn":1,"hex":"0a","frames":null}"#,
        // Escapes in interpreted values.
        #"{"t":5,"kind":"\u0069n","conn":1,"hex":"0a"}"#,
        #"{"t":5,"kind":"in","conn":1,"hex":"0\u0061"}"#,
        #"{"t":5,"k\u0069nd":"in","conn":1,"hex":"0a"}"#,
        // Numbers at the limits.
        #"{"t":9223372036854775807,"kind":"open","conn":1}"#,
        #"{"t":-9223372036854775808,"kind":"open","conn":1}"#,
        #"{"t":9223372036854775808,"kind":"open","conn":1}"#,
        #"{"t":999999999999999999,"kind":"open","conn":1}"#,
        #"{"t":1000000000000000000,"kind":"open","conn":1}"#,
        #"{"t":-0,"kind":"open","conn":1}"#,
        #"{"t":01,"kind":"open","conn":1}"#,
        #"{"t":1.0,"kind":"open","conn":1}"#,
        #"{"t":1e3,"kind":"open","conn":1}"#,
        #"{"t":-,"kind":"open","conn":1}"#,
        #"{"t":"5","kind":"open","conn":1}"#,
        #"{"t":5,"kind":"open","conn":2147483647}"#,
        #"{"t":5,"kind":"open","conn":2147483648}"#,
        #"{"t":5,"kind":"open","conn":-1}"#,
        #"{"t":5,"kind":"clock","stepMs":-9223372036854775808}"#,
        #"{"t":5,"kind":"clock","stepMs":-1500}"#,
        // Missing, extra, repeated, null fields.
        #"{"kind":"open","conn":1}"#,
        #"{"t":5,"conn":1}"#,
        #"{"t":5,"kind":"open"}"#,
        #"{"t":5,"kind":"open","conn":1,"extra":1}"#,
        #"{"t":5,"kind":"open","conn":1,"hex":"0a"}"#,
        #"{"t":5,"kind":"open","conn":1,"conn":1}"#,
        #"{"t":5,"t":5,"kind":"open","conn":1}"#,
        #"{"t":5,"kind":"open","conn":null}"#,
        #"{"t":5,"kind":"open","conn":1,"inferred":"x"}"#,
        #"{"t":5,"kind":"opened","conn":1,"inferred":"x"}"#,
        #"{"t":null,"kind":"open","conn":1}"#,
        // Bytes.
        #"{"t":5,"kind":"in","conn":1,"hex":"0a","len":3}"#,
        #"{"t":5,"kind":"in","conn":1,"hex":"0a","len":-1}"#,
        #"{"t":5,"kind":"in","conn":1,"hex":"0a","len":99999999999}"#,
        #"{"t":5,"kind":"in","conn":1,"hex":""}"#,
        #"{"t":5,"kind":"in","conn":1,"hex":"0"}"#,
        #"{"t":5,"kind":"in","conn":1,"hex":"0A"}"#,
        #"{"t":5,"kind":"in","conn":1,"hex":"0g"}"#,
        #"{"t":5,"kind":"in","conn":1,"hex":"0a 0b"}"#,
        #"{"t":5,"kind":"in","conn":1,"b64":"Cg=="}"#,
        #"{"t":5,"kind":"in","conn":1,"hex":"0a","b64":"Cg=="}"#,
        #"{"t":5,"kind":"in","conn":1}"#,
        // Kinds the fast path reads, with good and bad values.
        #"{"t":5,"kind":"closed","conn":1,"reason":"reset"}"#,
        #"{"t":5,"kind":"closed","conn":1,"reason":"gone"}"#,
        #"{"t":5,"kind":"closed","conn":1}"#,
        #"{"t":5,"kind":"timer","timer":"heartbeat"}"#,
        #"{"t":5,"kind":"timer","timer":"heartbeat","messageId":3}"#,
        #"{"t":5,"kind":"timer","timer":"requestTimeout","messageId":1}"#,
        #"{"t":5,"kind":"timer","timer":"requestTimeout","messageId":65535}"#,
        #"{"t":5,"kind":"timer","timer":"requestTimeout","messageId":0}"#,
        #"{"t":5,"kind":"timer","timer":"requestTimeout","messageId":65536}"#,
        #"{"t":5,"kind":"timer","timer":"requestTimeout"}"#,
        #"{"t":5,"kind":"timer","timer":"sleep"}"#,
        #"{"t":5,"kind":"network","available":true}"#,
        #"{"t":5,"kind":"network","available":false}"#,
        #"{"t":5,"kind":"network","available":"true"}"#,
        #"{"t":5,"kind":"network","available":tru}"#,
        #"{"t":5,"kind":"app","event":"start"}"#,
        #"{"t":5,"kind":"app","event":"reboot"}"#,
        #"{"t":5,"kind":"telepathy"}"#,
        // Kinds left to the general path.
        #"{"t":5,"kind":"api","call":"disconnect"}"#,
        #"{"t":5,"kind":"cb","cb":"dbOpened","code":0}"#,
        // Shapes.
        #" {"t":5,"kind":"open","conn":1}"#,
        #"{"t":5,"kind":"open","conn":1} "#,
        #"{"t" :5,"kind":"open","conn":1}"#,
        #"{"t":5,"kind":"open","conn":1}}"#,
        #"{"t":5,"kind":"open","conn":1,}"#,
        #"{"t":5,,"kind":"open","conn":1}"#,
        #"{"t":5"kind":"open","conn":1}"#,
        "{\"t\":5,\"kind\":\"open\",\"conn\":1\r}",
        #"{}"#, #"[]"#, #"{"#, #"}"#, "", "   ", "\t",
    ]

    @Test func edgeCasesDecodeTheSameBothWays() {
        for c in Self.edgeCases {
            let l = Array(c.utf8)
            Self.expectSame(l)
            for n in 0..<l.count { Self.expectSame(Array(l[..<n])) }
        }
    }

    /// The fast path does take the forms a recorder may write (any field order, escapes and
    /// unicode escapes in frames, numbers up to 18 digits), so the speed is not an accident.
    @Test func theFastPathTakesTheCommonForms() {
        for c in [Self.edgeCases[0], Self.edgeCases[1], Self.edgeCases[2], Self.edgeCases[3], Self.edgeCases[4],
                  #"{"t":999999999999999999,"kind":"open","conn":1}"#, #"{"t":5,"kind":"clock","stepMs":-1500}"#,
                  #"{"t":5,"kind":"timer","timer":"requestTimeout","messageId":65535}"#] {
            #expect(CaptureReader.decodeRecordFast(Array(c.utf8), line: 1) != nil, "\(c)")
        }
    }

    /// Callback equality used before the JSON comparison never says "same" for two callbacks
    /// whose lines differ, and says it for each callback with itself; `sameOutput` keeps the
    /// answer of comparing canonical JSON forms.
    @Test func callbackEqualityAgreesWithTheJSONForms() throws {
        var callbacks: [AppCallback] = []
        for l in Self.quickstartLines {
            if let r = try? CaptureReader.decodeRecord(l, line: 1), case .callback(let cb) = r.event { callbacks.append(cb) }
        }
        #expect(callbacks.count > 50)
        let sample = Array(callbacks.prefix(80))
        func json(_ cb: AppCallback) -> JSONValue { CaptureLineCodec.encode(CaptureRecord(t: 0, event: .callback(cb))).canonical }
        for a in sample {
            #expect(CallbackEquality.same(a, a))
            for b in sample {
                let byJSON = json(a) == json(b)
                if CallbackEquality.same(a, b) { #expect(byJSON) }
                #expect(Replayer.sameOutput(.callback(a), .callback(b)) == byJSON)
            }
        }
    }
}

/// A violation's message path is kept as values and written only for the report: the texts are
/// the ones the replay always wrote (B1's duplicate in the sample capture, as `imsim replay`
/// printed it before the change).
@Suite struct ReplayPathTextTests {
    @Test func aDuplicatesPathReadsAsBefore() throws {
        let report = try Replayer(path: tracePath("Traces/captures/dedup-b1.jsonl")).run()
        let v = try #require(report.violations.first { $0.oracle == "no-duplicate" && $0.messageUId == "BK00-0000-0000-0002" })
        #expect(v.path == [
            "line 13 t=+0.250s  server sent it in s_msg (direct delivery): private:bob RC:TxtMsg from bob, dataTime 1767225601200",
            "line 13 t=+0.250s  replayed core stored it as messageId 1 RECEIVE",
            "line 13 t=+0.250s  onReceived (messageId 1, left=0 offline=false hasPackage=false)",
            "line 16 t=+0.310s  server sent it in pullMsg page: private:bob RC:TxtMsg from bob, dataTime 1767225601200",
        ])
    }
}
