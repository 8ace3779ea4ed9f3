import Benchmarks
import PropertyBased
import SimKernel
import Testing
@testable import IMWire

/// Generated frames of every type survive encode → decode in both framings and both directions.
@Suite struct FrameRoundTripTests {
    static let directions: [WireDirection] = [.clientToServer, .serverToClient]

    @Test(arguments: FrameType.allCases)
    func everyTypeRoundTripsInBothFramings(type: FrameType) async {
        await propertyCheck(count: 40, input: Gen.uint64(in: 0...UInt64.max)) { seed in
            var rng = RandomStream(seed: seed)
            for direction in Self.directions {
                let frame = FrameGenerator.frame(type, direction: direction, using: &rng)
                #expect(frame.type == type)
                do {
                    let message = try MessageFraming.encode(frame, direction: direction)
                    #expect(message.first == frame.flags.byte0(type))
                    #expect(try MessageFraming.decode(message, direction: direction) == frame)

                    let obfuscated = rng.below(2) == 0
                    let stream = try StreamFraming.encode(frame, direction: direction, obfuscated: obfuscated)
                    var decoder = StreamDecoder(direction: direction, obfuscated: obfuscated)
                    #expect(try decoder.feed(stream) == [frame])
                    #expect(decoder.bufferedByteCount == 0)
                    #expect(decoder.consumedByteCount == stream.count)
                    // Same payload in both framings (stream adds checksum + length; obfuscation XORs it).
                    let headerSize = stream.count - (message.count - 1)
                    var payload = Array(stream[headerSize...])
                    if obfuscated { payload.withUnsafeMutableBufferPointer { StreamFraming.xor($0) } }
                    #expect(payload == Array(message.dropFirst()))
                } catch {
                    Issue.record("seed \(seed) \(type) \(direction): \(error)")
                }
            }
        }
    }

    @Test func publishAndPubackLayoutsDifferByDirection() throws {
        let p = Frame.publish(Frame.Publish(date: 0x0102_0304, topic: .s_msg, targetId: "a", messageId: 0x0506, body: [9]))
        let c2s = try MessageFraming.encode(p, direction: .clientToServer)
        let s2c = try MessageFraming.encode(p, direction: .serverToClient)
        #expect(c2s == [0x32, 0, 5] + Array("s_msg".utf8) + [0, 1, 97, 5, 6, 9])
        #expect(s2c == [0x32, 1, 2, 3, 4, 0, 5] + Array("s_msg".utf8) + [0, 1, 97, 5, 6, 9])

        let ack = Frame.puback(Frame.Puback(messageId: 7, date: 1_763_769_600, status: 0, millis: 123, messageUId: "U1"))
        #expect(try MessageFraming.encode(ack, direction: .clientToServer) == [0x40, 0, 7])
        let s2cAck = try MessageFraming.encode(ack, direction: .serverToClient)
        #expect(s2cAck == [0x40, 0, 7, 0x69, 0x20, 0xFD, 0x00, 0, 0, 0, 123, 0, 2, 85, 49])
        guard case .puback(let back) = try MessageFraming.decode(s2cAck, direction: .serverToClient) else {
            Issue.record("not a PUBACK")
            return
        }
        #expect(back.sentTime == 1_763_769_600_123)
        #expect(Frame.Puback(messageId: 7, sentTime: 1_763_769_600_123, messageUId: "U1") == back)
    }

    @Test func fixedHeaderByteLayout() throws {
        // type << 4 | dup << 3 | qos << 1 | retain
        #expect(FrameFlags(dup: true, qos: .exactlyOnce, retain: true).byte0(.publish) == 0x3D)
        #expect(FrameFlags.none.byte0(.pingReq) == 0xC0)
        #expect(FrameFlags.atLeastOnce.byte0(.query) == 0x52)
        let (t, f) = try FrameFlags.parse(byte0: 0x3B, offset: 0)
        #expect(t == .publish && f == FrameFlags(dup: true, qos: .atLeastOnce, retain: true))
        #expect(try MessageFraming.encode(.pingReq(), direction: .clientToServer) == [0xC0])
        #expect(try MessageFraming.encode(.pingResp(), direction: .serverToClient) == [0xD0])
    }

    @Test func connectLayoutAndFlags() throws {
        let c = Frame.Connect(keepAlive: 30, clientId: "mobile:alice-phone", appKey: "k", token: "t")
        let bytes = try StreamFraming.encode(.connect(c), direction: .clientToServer)
        let payload: [UInt8] = [0, 6] + Array("RCloud".utf8) + [3, 0xC2, 0, 30, 0, 18] + Array("mobile:alice-phone".utf8)
            + [0, 1, 107, 0, 1, 116]
        #expect(bytes == [0x10, 0x10 ^ UInt8(payload.count), UInt8(payload.count)] + payload)
        #expect(c.platformAndDevice?.platform == .mobile && c.platformAndDevice?.deviceId == "alice-phone")
        #expect(Frame.Connect.clientId(platform: .web, deviceId: "b") == "web:b")
        // Without appKey/token the flags say so and the fields are absent.
        let bare = Frame.Connect(cleanSession: false, keepAlive: 0, clientId: "x", appKey: nil, token: nil)
        #expect(bare.connectFlags == 0)
        let enc = try MessageFraming.encode(.connect(bare), direction: .clientToServer)
        #expect(try MessageFraming.decode(enc, direction: .clientToServer) == .connect(bare))
    }

    /// IMSim's reconnect bits (Docs/server.md §2): 0x04 reconnect, 0x20 reconnectKickEnable; they
    /// round-trip through bytes, frame JSON and text, and 0x01/0x08/0x10 stay reserved.
    @Test(arguments: [(false, false, UInt8(0xC2)), (true, false, 0xC6), (false, true, 0xE2), (true, true, 0xE6)])
    func connectReconnectFlags(reconnect: Bool, kickEnable: Bool, flagsByte: UInt8) throws {
        let c = Frame.Connect(keepAlive: 30, clientId: "mobile:a", appKey: "k", token: "t",
                              isReconnect: reconnect, reconnectKickEnable: kickEnable)
        #expect(c.connectFlags == flagsByte)
        let bytes = try MessageFraming.encode(.connect(c), direction: .clientToServer)
        #expect(bytes[1 + 2 + 6 + 1] == flagsByte)
        #expect(try MessageFraming.decode(bytes, direction: .clientToServer) == .connect(c))
        let json = FrameJSON.describe(.connect(c), direction: .clientToServer)
        #expect(try FrameJSON.frame(from: json).frame == .connect(c))
        let words = FrameText.headerLine(.connect(c), direction: .clientToServer).split(separator: " ")
        #expect(words.contains("reconnect") == reconnect)
        #expect(words.contains("reconnectKickEnable") == kickEnable)
        for reserved: UInt8 in [0x01, 0x08, 0x10] {
            var bad = bytes
            bad[1 + 2 + 6 + 1] |= reserved
            #expect(throws: WireError.invalidConnectFlags(flagsByte | reserved, offset: 1 + 2 + 6 + 1)) {
                _ = try MessageFraming.decode(bad, direction: .clientToServer)
            }
        }
    }

    @Test func connackWithAndWithoutSession() throws {
        let accepted = Frame.connack(.init(status: .accepted, session: .init(userId: "alice", sessionId: "s1", timestamp: 1_763_769_600_000)))
        let bytes = try MessageFraming.encode(accepted, direction: .serverToClient)
        #expect(bytes.count == 1 + 2 + 7 + 4 + 8)
        #expect(try MessageFraming.decode(bytes, direction: .serverToClient) == accepted)
        let refused = Frame.connack(.init(status: .tokenIncorrect))
        #expect(try MessageFraming.encode(refused, direction: .serverToClient) == [0x20, 0, 4])
        guard case .connack(let c) = refused else { return }
        #expect(c.status == .tokenIncorrect)
        #expect(Frame.Connack(statusCode: 7).status == nil)
        let kicked = Frame.disconnect(.init(status: .kickedByOtherDevice))
        #expect(try MessageFraming.encode(kicked, direction: .serverToClient) == [0xE0, 0, 1])
    }

    @Test func messageIdCounterWrapsToOneAndResets() {
        var c = MessageIdCounter()
        #expect(c.next() == 1)
        #expect(c.next() == 2)
        var high = MessageIdCounter(last: 65534)
        #expect(high.next() == 65535)
        #expect(high.next() == 1)
        high.reset()
        #expect(high.last == 0)
        #expect(high.next() == 1)
        var all = MessageIdCounter()
        var seen = Set<UInt16>()
        for _ in 0..<65535 { seen.insert(all.next()) }
        #expect(seen.count == 65535 && !seen.contains(0))
        #expect(all.next() == 1)
    }
}
