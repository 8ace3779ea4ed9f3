import SwiftProtobuf
import Testing
@testable import IMWire

/// Issue 22, wire items: what the official clients write and accept (wire-protocol §1.3, §3;
/// im-semantics §1). Every test here failed before the change it names.
@Suite struct FidelityWireTests {
    // MARK: 9 — conversation types the model does not simulate (im-semantics §1: "12 RTC room")

    static func item(_ type: Int32, _ n: Int64) -> RMTPDownStreamMessage {
        var d = RMTPDownStreamMessage()
        d.fromUserID = "alice"
        d.type = type
        d.groupID = "room-\(n)"
        d.classname = "RC:TxtMsg"
        d.contentBytes = Array(#"{"content":"hi"}"#.utf8)
        d.dataTime = 1_000 + n
        d.status = 0x30
        d.msgID = "UID-\(n)"
        return d
    }

    /// Seed rule (§1): a type the model does not simulate is decoded and carried as its number.
    @Test func downStreamMessageOfType12DecodesAndKeepsItsNumber() throws {
        let bytes = try ProtoBody.encode(Self.item(12, 1))
        #expect(bytes[bytes.firstIndex(of: 0x10)! + 1] == 12)   // field 2 varint = 12 on the wire
        let d = try ProtoBody.decode(RMTPDownStreamMessage.self, from: bytes)
        #expect(d.type == 12)
        #expect(d.conversationType.rawValue == 12)
        #expect(d.conversationType.description == "type12")
        #expect(!d.conversationType.isNamed)
        #expect(try ProtoBody.encode(d) == bytes)
        // The reference decoder (swift-protobuf) agrees with the fast path.
        let reference = try RMTPDownStreamMessage(serializedBytes: bytes)
        #expect(reference == d)
    }

    /// Seed rule (§1): one such item must not fail the rest of a pull page.
    @Test func aPullPageWithAType12ItemKeepsEveryItem() throws {
        var page = RMTPDownStreamMessages()
        page.list = [Self.item(1, 1), Self.item(12, 2), Self.item(3, 3)]
        page.syncTime = 1_003
        let body = try ProtoBody.encode(page)
        let ack = Frame.queryAck(.init(messageId: 4, date: 1, body: body))
        let wire = try MessageFraming.encode(ack, direction: .serverToClient)
        guard case .queryAck(let back) = try MessageFraming.decode(wire, direction: .serverToClient) else {
            Issue.record("not a QUERYACK")
            return
        }
        let decoded = try back.decodeBody(RMTPDownStreamMessages.self)
        #expect(decoded.list.map(\.type) == [1, 12, 3])
        #expect(decoded.list.map(\.msgID) == ["UID-1", "UID-2", "UID-3"])
        #expect(ConversationType(name: "type12")?.rawValue == 12)
        #expect(ConversationType(name: "type0") == nil && ConversationType(name: "type012") == nil)
    }

    // MARK: 10 — CESU-8 header strings (wire-protocol §1.3)

    /// QUERY `pullMsg` to target "a😀" as the official web client writes it: `0007 61 eda0bd edb880`.
    static let cesuTarget: [UInt8] = [0x00, 0x07, 0x61, 0xED, 0xA0, 0xBD, 0xED, 0xB8, 0x80]
    static let utf8Target: [UInt8] = [0x00, 0x05, 0x61, 0xF0, 0x9F, 0x98, 0x80]
    static func query(target: [UInt8]) -> [UInt8] {
        [0x52, 0x00, 0x07] + Array("pullMsg".utf8) + target + [0x00, 0x01, 0x08, 0x00, 0x10, 0x00]
    }

    /// Seed rule (§1.3): a decoder accepts CESU-8 (what the official client writes) and UTF-8.
    @Test func headerStringsDecodeFromCESU8AndUTF8() throws {
        for bytes in [Self.query(target: Self.cesuTarget), Self.query(target: Self.utf8Target)] {
            guard case .query(let q) = try MessageFraming.decode(bytes, direction: .clientToServer) else {
                Issue.record("not a QUERY")
                continue
            }
            #expect(q.targetId == "a😀")
        }
        // U+0000 as Java writes it (C0 80) is accepted too, as is a plain 00.
        let nul: [UInt8] = [0x52, 0x00, 0x07] + Array("pullMsg".utf8) + [0x00, 0x03, 0x61, 0xC0, 0x80, 0x00, 0x01]
        guard case .query(let q) = try MessageFraming.decode(nul, direction: .clientToServer) else { return }
        #expect(q.targetId == "a\u{0}")
    }

    /// Seed rule (§1.3): an encoder claiming byte compatibility writes what the official client writes.
    @Test func headerStringsEncodeAsCESU8UnlessUTF8IsAsked() throws {
        let frame = Frame.query(.init(topic: "pullMsg", targetId: "a😀", messageId: 1, body: [0x08, 0x00, 0x10, 0x00]))
        #expect(try MessageFraming.encode(frame, direction: .clientToServer) == Self.query(target: Self.cesuTarget))
        #expect(try MessageFraming.encode(frame, direction: .clientToServer, strings: .utf8) == Self.query(target: Self.utf8Target))
        // Stream framing: the remaining length counts the CESU-8 bytes.
        let stream = try StreamFraming.encode(frame, direction: .clientToServer)
        var d = StreamDecoder(direction: .clientToServer)
        #expect(try d.feed(stream) == [frame])
        #expect(stream[2] == UInt8(Self.query(target: Self.cesuTarget).count - 1))
        // BMP text is the same in both.
        let bmp = Frame.query(.init(topic: "pullMsg", targetId: "群聊é", messageId: 1, body: []))
        #expect(try MessageFraming.encode(bmp, direction: .clientToServer) == MessageFraming.encode(bmp, direction: .clientToServer, strings: .utf8))
    }

    /// Neither form: a lone surrogate (or a high one followed by no low one) is still an error naming its byte.
    @Test func loneSurrogatesAreRejectedAtTheirByte() {
        let lone: [UInt8] = [0x52, 0x00, 0x07] + Array("pullMsg".utf8) + [0x00, 0x04, 0x61, 0xED, 0xA0, 0xBD, 0x00, 0x01]
        #expect(throws: WireError.badUTF8(field: "targetId", offset: 13)) {
            _ = try MessageFraming.decode(lone, direction: .clientToServer)
        }
        let low: [UInt8] = [0x52, 0x00, 0x07] + Array("pullMsg".utf8) + [0x00, 0x03, 0xED, 0xB8, 0x80, 0x00, 0x01]
        #expect(throws: WireError.badUTF8(field: "targetId", offset: 12)) {
            _ = try MessageFraming.decode(low, direction: .clientToServer)
        }
    }

    // MARK: 11 — as liberal as the official decoders (extra bytes, QoS 3), --strict as before

    /// Seed rule: extra bytes after fixed-layout frames are accepted with a note; strict rejects.
    @Test(arguments: [
        ([0xD0, 0x00, 0x01], WireDirection.serverToClient, 1),                 // PINGRESP + 2
        ([0xE0, 0x00, 0x01, 0x07], .serverToClient, 3),                        // DISCONNECT kicked + 1
        ([0x40, 0x00, 0x05, 0xFF], .clientToServer, 3),                        // PUBACK c2s + 1
        ([0x20, 0x00, 0x00, 0x00, 0x01, 0x75, 0x00, 0x01, 0x73, 0, 0, 0, 0, 0, 0, 0, 9, 0xFF], .serverToClient, 17), // CONNACK + 1
        ([0x70, 0x00, 0x09, 0x01], .clientToServer, 3),                        // QUERYCON + 1
    ] as [([UInt8], WireDirection, Int)])
    func extraBytesAfterFixedLayoutFramesAreANote(bytes: [UInt8], direction: WireDirection, at: Int) throws {
        #expect(throws: WireError.trailingBytes(count: bytes.count - at, offset: at)) {
            _ = try MessageFraming.decode(bytes, direction: direction)
        }
        let (frame, notes) = try MessageFraming.decodeLenient(bytes, direction: direction)
        #expect(notes == [.trailingBytesIgnored(count: bytes.count - at, offset: at)])
        // What was read is the frame without the extra bytes.
        #expect(try MessageFraming.encode(frame, direction: direction) == Array(bytes[..<at]))
    }

    /// A refused CONNACK has no session: what follows its status is extra bytes (strict reads a session and fails).
    @Test func refusedConnackWithExtraBytes() throws {
        let bytes: [UInt8] = [0x20, 0x00, 0x04, 0x00, 0x00]
        #expect(throws: WireError.self) { _ = try MessageFraming.decode(bytes, direction: .serverToClient) }
        let (frame, notes) = try MessageFraming.decodeLenient(bytes, direction: .serverToClient)
        #expect(frame == .connack(.init(statusCode: 4)))
        #expect(notes == [.trailingBytesIgnored(count: 2, offset: 3)])
    }

    /// Seed rule: QoS bits 3 (`Qos.DEFAULT` in the SDKs) decode with a note and re-encode the same byte0.
    @Test func qos3IsANoteAndKeptExactly() throws {
        let ping: [UInt8] = [0xC6]
        #expect(throws: WireError.invalidQoS(3, offset: 0)) { _ = try MessageFraming.decode(ping, direction: .clientToServer) }
        let (frame, notes) = try MessageFraming.decodeLenient(ping, direction: .clientToServer)
        #expect(frame.flags.qos == .sdkDefault)
        #expect(notes == [.qos3(offset: 0)])
        #expect(try MessageFraming.encode(frame, direction: .clientToServer) == ping)
    }

    /// The same rules in stream framing: strict by default, lenient when asked, notes at stream offsets.
    @Test func streamDecoderLenientNotes() throws {
        let pingresp: [UInt8] = [0xD0, 0xD2, 0x02, 0xAA, 0xBB]   // remaining length 2: two extra bytes
        let qos3ping: [UInt8] = [0xC6, 0xC6, 0x00]
        #expect(MalformedInputTests.streamError(pingresp) == .trailingBytes(count: 2, offset: 3))
        var d = StreamDecoder(direction: .serverToClient)
        d.lenient = true
        let frames = try d.feed(pingresp + qos3ping)
        try d.finish()
        #expect(frames.map(\.type) == [.pingResp, .pingReq])
        #expect(d.notes == [.trailingBytesIgnored(count: 2, offset: 3), .qos3(offset: 5)])
    }
}
