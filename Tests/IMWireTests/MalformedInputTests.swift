import Benchmarks
import SimKernel
import Testing
@testable import IMWire

/// Bad input answers with the right `WireError`, naming the byte.
@Suite struct MalformedInputTests {
    static func streamError(_ bytes: [UInt8], direction: WireDirection = .serverToClient,
                            maxFrameSize: Int = StreamDecoder.defaultMaxFrameSize) -> WireError? {
        var d = StreamDecoder(direction: direction, maxFrameSize: maxFrameSize)
        do {
            _ = try d.feed(bytes)
            _ = try d.feed([])
            try d.finish()
            return nil
        } catch {
            return error
        }
    }

    /// Stream framing: every proper prefix of every frame type is reported as truncated at the end.
    @Test(arguments: FrameType.allCases)
    func streamTruncationAtEveryByte(type: FrameType) throws {
        var rng = RandomStream(seed: UInt64(type.rawValue))
        for direction in [WireDirection.clientToServer, .serverToClient] {
            let frame = FrameGenerator.frame(type, direction: direction, using: &rng)
            let bytes = try StreamFraming.encode(frame, direction: direction)
            for cut in 1..<bytes.count {
                let e = Self.streamError(Array(bytes[..<cut]), direction: direction)
                guard case .truncated(_, let needed, let had, let offset)? = e else {
                    Issue.record("\(type) cut at \(cut): \(String(describing: e))")
                    continue
                }
                #expect(offset == 0 && had == cut && needed > had, "\(type) cut at \(cut)")
                if cut >= bytes.count - (try MessageFraming.encode(frame, direction: direction).count - 1) {
                    #expect(needed == bytes.count, "cut in the payload names the whole frame size")
                }
            }
        }
    }

    /// Message framing: a cut inside the variable header names the field being read.
    @Test func messageTruncationInsideVariableHeaders() throws {
        let publish = Frame.publish(.init(date: 5, topic: .s_msg, targetId: "bob", messageId: 3, body: [1, 2]))
        let bytes = try MessageFraming.encode(publish, direction: .serverToClient)
        // 0: byte0 · 1-4 date · 5-6 len · 7-11 "s_msg" · 12-13 len · 14-16 "bob" · 17-18 msgId · body
        let fieldAt: [(Int, String, Int)] = [(1, "date", 1), (5, "topic", 5), (7, "topic", 5), (12, "targetId", 12),
                                             (14, "targetId", 12), (17, "msgId", 17)]
        for cut in 1..<19 {
            let (_, field, offset) = fieldAt.last { $0.0 <= cut }!
            #expect(throws: WireError.self) { _ = try MessageFraming.decode(Array(bytes[..<cut]), direction: .serverToClient) }
            do {
                _ = try MessageFraming.decode(Array(bytes[..<cut]), direction: .serverToClient)
            } catch {
                guard case .truncated(let f, let needed, let had, let o) = error else {
                    Issue.record("cut \(cut): \(error)")
                    continue
                }
                #expect(f == field && o == offset && had == cut - offset && needed > had, "cut \(cut): \(error)")
            }
        }
        #expect(throws: WireError.truncated(field: "fixed header", needed: 1, had: 0, offset: 0)) {
            _ = try MessageFraming.decode([], direction: .clientToServer)
        }
        // Fixed-layout frames: every prefix fails (PUBACK s2c, CONNECT, DISCONNECT).
        let fixed: [(Frame, WireDirection)] = [
            (.puback(.init(messageId: 1, date: 2, status: 3, millis: 4, messageUId: "uid")), .serverToClient),
            (.connect(.init(keepAlive: 30, clientId: "mobile:a", appKey: "k", token: "t")), .clientToServer),
            (.disconnect(.init(status: .blocked)), .serverToClient),
            (.queryConfirm(.init(messageId: 9)), .clientToServer),
        ]
        for (frame, dir) in fixed {
            let b = try MessageFraming.encode(frame, direction: dir)
            for cut in 1..<b.count {
                let r = Result { () throws(WireError) in try MessageFraming.decode(Array(b[..<cut]), direction: dir) }
                guard case .failure(.truncated(_, _, let had, let o)) = r else {
                    Issue.record("\(frame.type) cut \(cut): \(r)")
                    continue
                }
                #expect(o + had == cut)
            }
        }
    }

    @Test func badChecksum() throws {
        var b = try StreamFraming.encode(.queryConfirm(.init(messageId: 1)), direction: .clientToServer)
        #expect(b == [0x70, 0x72, 0x02, 0x00, 0x01])
        b[1] = 0x00
        #expect(Self.streamError(b, direction: .clientToServer) == .badChecksum(expected: 0x72, found: 0x00, offset: 1))
        // The checksum covers the length bytes too: change the length, keep the checksum.
        var c = try StreamFraming.encode(WireBenchmark.samplePublish(), direction: .serverToClient)
        c[2] ^= 0x01
        guard case .badChecksum(_, _, 1)? = Self.streamError(c) else {
            Issue.record("length change not caught")
            return
        }
        // Second frame of a stream: offset is counted from the stream start.
        let ok = try StreamFraming.encode(.pingReq(), direction: .clientToServer)
        #expect(Self.streamError(ok + b, direction: .clientToServer) == .badChecksum(expected: 0x72, found: 0, offset: ok.count + 1))
    }

    @Test func fiveByteLengthIsAnOverflow() {
        let length: [UInt8] = [0x80, 0x80, 0x80, 0x80, 0x01]
        let b = [0x30, length.reduce(0x30, ^)] + length + [0, 0]
        #expect(Self.streamError(b) == .lengthOverflow(offset: 5))
        // Even before the fifth byte arrives.
        #expect(Self.streamError(Array(b.prefix(6))) == .lengthOverflow(offset: 5))
    }

    @Test func nonMinimalLengthIsRejected() {
        let b: [UInt8] = [0xC0, 0xC0 ^ 0x80 ^ 0x00, 0x80, 0x00]
        #expect(Self.streamError(b, direction: .clientToServer) == .nonMinimalLength(offset: 3))
    }

    @Test func maximumFourByteLengthEncodesAndLargerDoesNot() throws {
        // 268,435,455 = 0xFF 0xFF 0xFF 0x7F is the largest; encoding more throws instead of wrapping.
        let huge = Frame.subscribeFamily(.init(type: .subscribe, payload: [UInt8](repeating: 0, count: 268_435_456)))
        #expect(throws: WireError.lengthOverflow(offset: 2)) { _ = try StreamFraming.encode(huge, direction: .clientToServer) }
        let big = Frame.subscribeFamily(.init(type: .subscribe, payload: [UInt8](repeating: 0, count: 2_097_152)))
        let bytes = try StreamFraming.encode(big, direction: .clientToServer)
        #expect(Array(bytes[2..<6]) == [0x80, 0x80, 0x80, 0x01])
        var d = StreamDecoder(direction: .clientToServer, maxFrameSize: 3_000_000)
        #expect(try d.feed(bytes) == [big])
    }

    @Test func oversizeLength() {
        let length: [UInt8] = [0x80, 0x80, 0x10]   // 262,144
        let b = [0x30, length.reduce(0x30, ^)] + length
        #expect(Self.streamError(b) == .frameTooLarge(size: 5 + 262_144, limit: StreamDecoder.defaultMaxFrameSize, offset: 2))
        #expect(Self.streamError([0xC0, 0xC0 ^ 0x05, 0x05], direction: .clientToServer, maxFrameSize: 7)
                == .frameTooLarge(size: 8, limit: 7, offset: 2))
    }

    @Test func unknownFrameTypesAndBadQoS() throws {
        #expect(Self.streamError([0x00, 0x00, 0x00]) == .unknownFrameType(code: 0, offset: 0))
        #expect(Self.streamError([0xF0, 0xF0, 0x00]) == .unknownFrameType(code: 15, offset: 0))
        #expect(throws: WireError.unknownFrameType(code: 15, offset: 0)) { _ = try MessageFraming.decode([0xF2], direction: .clientToServer) }
        #expect(throws: WireError.invalidQoS(3, offset: 0)) { _ = try MessageFraming.decode([0xC6], direction: .clientToServer) }
        let ping = try StreamFraming.encode(.pingReq(), direction: .clientToServer)
        #expect(Self.streamError(ping + [0xC6, 0xC6, 0x00], direction: .clientToServer) == .invalidQoS(3, offset: ping.count))
    }

    @Test func invalidUTF8NamesTheFieldAndByte() throws {
        // topic "ab\xFFc" in a QUERY: byte0 · len(2) · a b 0xFF c
        let q: [UInt8] = [0x52, 0, 4, 97, 98, 0xFF, 99, 0, 1, 120, 0, 1]
        #expect(throws: WireError.badUTF8(field: "topic", offset: 5)) { _ = try MessageFraming.decode(q, direction: .clientToServer) }
        // Overlong encoding and a lone surrogate in targetId. (C0 80 is Java's U+0000, accepted
        // since wire-protocol §1.3's CESU-8 note; C1 81 is overlong in every reading.)
        let overlong: [UInt8] = [0x52, 0, 1, 97, 0, 2, 0xC1, 0x81, 0, 1]
        #expect(throws: WireError.badUTF8(field: "targetId", offset: 6)) {
            _ = try MessageFraming.decode(overlong, direction: .clientToServer)
        }
        let surrogate: [UInt8] = [0x52, 0, 1, 97, 0, 4, 120, 0xED, 0xA0, 0x80, 0, 1]
        #expect(throws: WireError.badUTF8(field: "targetId", offset: 7)) {
            _ = try MessageFraming.decode(surrogate, direction: .clientToServer)
        }
        // In stream framing the offset counts the 3 header bytes.
        var s: [UInt8] = try StreamFraming.encode(.puback(.init(messageId: 1, date: 2, status: 0, millis: 3, messageUId: "abc")),
                                                  direction: .serverToClient)
        s[s.count - 2] = 0xFE
        #expect(Self.streamError(s) == .badUTF8(field: "messageUId", offset: s.count - 2))
    }

    @Test func trailingBytesAndReservedConnectFlags() throws {
        #expect(throws: WireError.trailingBytes(count: 1, offset: 3)) {
            _ = try MessageFraming.decode([0x70, 0, 1, 0], direction: .clientToServer)
        }
        #expect(throws: WireError.trailingBytes(count: 2, offset: 1)) {
            _ = try MessageFraming.decode([0xC0, 1, 2], direction: .clientToServer)
        }
        var c = try MessageFraming.encode(.connect(.init(keepAlive: 1, clientId: "x", appKey: nil, token: nil)),
                                          direction: .clientToServer)
        let flagsAt = 1 + 2 + 6 + 1
        c[flagsAt] = 0x01
        #expect(throws: WireError.invalidConnectFlags(0x01, offset: flagsAt)) {
            _ = try MessageFraming.decode(c, direction: .clientToServer)
        }
    }

    @Test func stringsLongerThanAU16CannotBeEncoded() {
        let long = String(repeating: "x", count: 65_536)
        #expect(throws: WireError.stringTooLong(field: "topic", length: 65_536)) {
            _ = try MessageFraming.encode(.query(.init(topic: long, targetId: "", messageId: 1, body: [])), direction: .clientToServer)
        }
        let max = String(repeating: "x", count: 65_535)
        #expect(throws: Never.self) {
            _ = try MessageFraming.encode(.query(.init(topic: max, targetId: "", messageId: 1, body: [])), direction: .clientToServer)
        }
    }

    @Test func errorsDescribeThemselves() {
        #expect(WireError.truncated(field: "topic", needed: 5, had: 2, offset: 7).description
                == "truncated topic at byte 7: needs 5 bytes, input has 2")
        #expect(WireError.badChecksum(expected: 0x72, found: 0, offset: 1).description
                == "bad checksum at byte 1: expected 0x72, found 0x00")
        #expect(WireError.messageTooLarge(size: 131_073, limit: 131_072).imErrorCode == .messageTooLarge)
        #expect(WireError.messageTooLarge(size: 131_073, limit: 131_072).imErrorCode?.rawValue == 30016)
        #expect(WireError.lengthOverflow(offset: 5).offset == 5)
        #expect(WireError.unregisteredMessageType(objectName: "X").offset == nil)
    }
}
