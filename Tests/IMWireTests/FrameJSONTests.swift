import Benchmarks
import PropertyBased
import SimKernel
import Testing
@testable import IMWire

@Suite struct FrameJSONTests {
    @Test func publicVectorDescription() throws {
        let frame = try MessageFraming.decode(PublicVectorTests.vector, direction: .clientToServer)
        let json = FrameJSON.describe(frame, direction: .clientToServer)
        #expect(json.serializedString == #"{"frame":"QUERY","direction":"c2s","dup":false,"qos":1,"retain":false,"topic":"pullMsg","targetId":"b10806","messageId":1,"bodyType":"SyncRequestMsg","body":{"syncTime":0,"ispolling":false,"isPullSend":true},"bodyHex":"080010002001"}"#)
        let back = try FrameJSON.frame(from: json)
        #expect(back.frame == frame && back.direction == .clientToServer)
        #expect(FrameText.describe(frame, direction: .clientToServer) == """
            QUERY c2s qos=1 topic="pullMsg" targetId="b10806" msgId=1 body=6B
              SyncRequestMsg {
                syncTime: 0
                ispolling: false
                isPullSend: true
              }
            """)
    }

    @Test func descriptionsReadBackToTheSameFrame() async {
        await propertyCheck(count: 60, input: Gen.uint64(in: 0...UInt64.max)) { seed in
            var rng = RandomStream(seed: seed)
            for type in FrameType.allCases {
                for direction in [WireDirection.clientToServer, .serverToClient] {
                    let frame = FrameGenerator.frame(type, direction: direction, using: &rng)
                    let text = FrameJSON.describe(frame, direction: direction).serializedString
                    do {
                        let back = try FrameJSON.frame(from: JSONValue.parse(text))
                        #expect(back.frame == frame && back.direction == direction, "seed \(seed) \(type)")
                    } catch {
                        Issue.record("seed \(seed) \(type) \(direction): \(error) in \(text)")
                    }
                }
            }
        }
    }

    @Test func editedDescriptionWithoutBodyHexBuildsTheBody() throws {
        let frame = try WireBenchmark.samplePublish(1)
        var json = FrameJSON.describe(frame, direction: .serverToClient)
        #expect(json["content"]?["objectName"] == .string("RC:TxtMsg"))
        guard case .object(var members) = json else { return }
        members.removeAll { $0.key == "bodyHex" }
        let i = members.firstIndex { $0.key == "content" }!
        members[i].value = .object([.init("objectName", .string("RC:TxtMsg")), .init("json", TextContent(content: "edited").json)])
        json = .object(members)
        let (edited, _) = try FrameJSON.frame(from: json)
        guard case .publish(let p) = edited else { return }
        let body = try p.decodeBody(RMTPDownStreamMessage.self)
        #expect(String(decoding: body.contentBytes, as: UTF8.self) == #"{"content":"edited"}"#)
        #expect(body.fromUserID == "alice" && body.dataTime == WireBenchmark.sampleDownStreamMessage(1).dataTime)
    }

    @Test func badDescriptionsNameTheField() {
        let cases: [(String, WireError)] = [
            (#"{"frame":"NOPE","direction":"c2s"}"#, .badFrameDescription(field: "frame", reason: "unknown frame type \"NOPE\"")),
            (#"{"frame":"PINGREQ"}"#, .badFrameDescription(field: "direction", reason: "missing (and no default direction given)")),
            (#"{"frame":"QUERYCON","direction":"c2s","messageId":70000}"#, .badFrameDescription(field: "messageId", reason: "expected an integer in 0...65535")),
            (#"{"frame":"PUBACK","direction":"c2s","qos":4,"messageId":1}"#, .badFrameDescription(field: "qos", reason: "must be 0, 1, 2 or 3 (the SDKs' Qos.DEFAULT)")),
            (#"{"frame":"QUERY","direction":"c2s","topic":"pullMsg","targetId":"x","messageId":1,"bodyHex":"0g"}"#,
             .badFrameDescription(field: "bodyHex", reason: "invalid hex at character 1: not a hex digit")),
            (#"{"frame":"QUERY","direction":"c2s","topic":"pullMsg","targetId":"x","messageId":1,"bodyType":"SyncRequestMsg","body":{"syncTime":1}}"#,
             .protobuf(message: "SyncRequestMsg", field: "ispolling", reason: "required field not set", offset: 0)),
        ]
        for (text, error) in cases {
            #expect(throws: error, "\(text)") { _ = try FrameJSON.frame(from: JSONValue.parse(text)) }
        }
        #expect(throws: Never.self) { _ = try FrameJSON.frame(from: JSONValue.parse(#"{"frame":"PINGREQ"}"#), direction: .clientToServer) }
    }

    @Test func textOfAServerPublishShowsBodyAndContent() throws {
        let text = FrameText.describe(try WireBenchmark.samplePublish(2), direction: .serverToClient)
        #expect(text.hasPrefix("PUBLISH s2c qos=1 date=1763769600 topic=\"s_msg\" targetId=\"alice\" msgId=3 body="))
        #expect(text.contains("  DownStreamMessage {\n    fromUserId: \"alice\"\n    type: 1\n"))
        #expect(text.hasSuffix("  content RC:TxtMsg {\"content\":\"See you at 7? Bring the slides (msg 2)\"}"))
        let page = FrameText.describe(try WireBenchmark.samplePullPage(count: 3), direction: .serverToClient, queryTopic: "pullMsg")
        #expect(page.contains("content[2] RC:TxtMsg"))
    }

    @Test func hex() throws {
        #expect(Hex.encode([0, 0xAB, 0x7F]) == "00ab7f")
        #expect(try Hex.decode("0x52 00:07,ff\n").get() == [0x52, 0, 7, 0xFF])
        #expect(throws: Hex.HexError(offset: 3, reason: "odd number of hex digits")) { try Hex.decode("ab c").get() }
    }
}

@Suite struct WireFuzzTests {
    /// ~20k mutated inputs in debug: no crash, no broken invariant.
    @Test func fuzzHarnessFindsNoViolation() {
        let stats = WireFuzz.run(seed: 20_261_122, iterations: 20_000)
        #expect(stats.violations == 0, "\(stats.firstViolation ?? "")")
        #expect(stats.iterations == 20_000)
        // The mutations reach every layer: decoded frames, clean inputs and several error kinds.
        #expect(stats.framesDecoded > 10_000 && stats.cleanInputs > 1_000)
        let kinds = Set(stats.errors.map(\.kind))
        for k in ["truncated", "badChecksum", "unknownFrameType", "frameTooLarge", "badUTF8", "protobuf", "badContent"] {
            #expect(kinds.contains(k), "no \(k) error in 20k inputs: \(stats.errors)")
        }
        #expect(stats.bodiesDecoded > 0 && stats.bodyErrors > 0 && stats.contentsDecoded > 0)
    }

    @Test func fuzzRunsAreDeterministicAndInputsReplayAlone() {
        let a = WireFuzz.run(seed: 9, iterations: 500)
        let b = WireFuzz.run(seed: 9, iterations: 500)
        #expect(a == b)
        #expect(WireFuzz.run(seed: 10, iterations: 500).digest != a.digest)
        // Input i depends only on (seed, i): two halves cover the same inputs as the whole.
        let first = WireFuzz.run(seed: 9, iterations: 250)
        let second = WireFuzz.run(seed: 9, iterations: 250, first: 250)
        #expect(first.framesDecoded + second.framesDecoded == a.framesDecoded)
        #expect(first.inputBytes + second.inputBytes == a.inputBytes)
    }
}
