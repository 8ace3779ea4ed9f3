import Benchmarks
import Foundation
import PropertyBased
import SimKernel
import SwiftProtobuf
import Testing
@testable import IMWire

/// The hand-written path for the hot messages against the generated code (the reference).
@Suite struct FastProtoTests {
    static func check<M: SwiftProtobuf.Message & Equatable>(
        _ m: M, encode: (M) -> [UInt8]?, decode: ([UInt8]) -> M?, seed: UInt64
    ) throws {
        let reference: [UInt8] = try m.serializedBytes()
        let fast = try #require(encode(m), "fast encode declined a complete message, seed \(seed)")
        #expect(fast == reference, "bytes differ, seed \(seed)")
        let back = try #require(decode(reference), "fast decode declined, seed \(seed)")
        #expect(back == (try M(serializedBytes: reference)), "values differ, seed \(seed)")
    }

    @Test func agreesWithSwiftProtobufOnGeneratedMessages() async {
        await propertyCheck(count: 200, input: Gen.uint64(in: 0...UInt64.max)) { seed in
            var rng = RandomStream(seed: seed)
            do {
                try Self.check(FrameGenerator.upStream(&rng), encode: FastProto.encode, decode: FastProto.decodeUpStream, seed: seed)
                try Self.check(FrameGenerator.downStream(&rng), encode: FastProto.encode, decode: FastProto.decodeDownStream, seed: seed)
                let page = FrameGenerator.message(.downStreamMessages, using: &rng) as! RMTPDownStreamMessages
                try Self.check(page, encode: FastProto.encode, decode: FastProto.decodeDownStreamMessages, seed: seed)
                let pull = FrameGenerator.message(.chrmPullMsg, using: &rng) as! RMTPChrmPullMsg
                try Self.check(pull, encode: FastProto.encode, decode: FastProto.decodeChrmPull, seed: seed)
                let notify = FrameGenerator.message(.notifyMsg, using: &rng) as! RMTPNotifyMsg
                try Self.check(notify, encode: FastProto.encode, decode: FastProto.decodeNotify, seed: seed)
            } catch {
                Issue.record("seed \(seed): \(error)")
            }
        }
    }

    @Test func declinesWhatItDoesNotHandle() throws {
        // Missing required field, unknown field, unknown enum value, truncation: nil (swift-protobuf decides).
        var m = WireBenchmark.sampleDownStreamMessage()
        let ok: [UInt8] = try m.serializedBytes()
        #expect(FastProto.decodeDownStream(ok) != nil)
        #expect(FastProto.decodeDownStream(ok + [0x58, 0x01]) == nil)          // field 11 unknown
        #expect(FastProto.decodeDownStream(Array(ok.dropLast())) == nil)
        // im-semantics §1: a type the schema does not name (9, 12…) is decoded and kept as its number.
        var otherType = ok
        otherType[otherType.firstIndex(of: 0x10)! + 1] = 9                      // type = 9
        #expect(FastProto.decodeDownStream(otherType)?.type == 9)
        m.clearDataTime()
        #expect(FastProto.encode(m) == nil)
        // The public API still answers through swift-protobuf, with a typed error or the value.
        let withUnknown = try ProtoBody.decode(RMTPDownStreamMessage.self, from: ok + [0x58, 0x01])
        #expect(withUnknown.unknownFields.data == Data([0x58, 0x01]))
        #expect(try ProtoBody.encode(withUnknown) == ok + [0x58, 0x01])
        #expect(try ProtoBody.decode(RMTPDownStreamMessage.self, from: otherType).type == 9)
    }

    @Test func chrmPullAndNotifyDeclineWhatTheyDoNotHandle() throws {
        var pull = RMTPChrmPullMsg()
        pull.syncTime = 1_700_000_000_123
        pull.count = -1                                                         // 10-byte varint
        let pullBytes: [UInt8] = try pull.serializedBytes()
        #expect(FastProto.encode(pull) == pullBytes)
        #expect(FastProto.decodeChrmPull(pullBytes) == pull)
        #expect(FastProto.decodeChrmPull(Array(pullBytes.dropLast())) == nil)   // truncated
        #expect(FastProto.decodeChrmPull(pullBytes + [0x18, 0x01]) == nil)      // field 3 unknown
        var noCount = pull
        noCount.clearCount()
        #expect(FastProto.encode(noCount) == nil)
        #expect(FastProto.decodeChrmPull(try noCount.serializedBytes(partial: true)) == nil)

        var n = RMTPNotifyMsg()
        n.type = 2
        n.time = 42
        n.chrmID = "room-é"
        let nBytes: [UInt8] = try n.serializedBytes()
        #expect(FastProto.encode(n) == nBytes)
        #expect(FastProto.decodeNotify(nBytes) == n)
        var typeOnly = RMTPNotifyMsg()
        typeOnly.type = 1
        #expect(FastProto.encode(typeOnly) == (try typeOnly.serializedBytes()))
        #expect(FastProto.decodeNotify(try typeOnly.serializedBytes()) == typeOnly)
        #expect(FastProto.decodeNotify(nBytes + [0x20, 0x01]) == nil)           // field 4 unknown
        #expect(FastProto.decodeNotify([0x10, 0x01]) == nil)                    // type missing
        // Through the public API: the fast answer when it has one, swift-protobuf's otherwise.
        #expect(try ProtoBody.decode(RMTPNotifyMsg.self, from: nBytes) == n)
        #expect(try ProtoBody.encode(n) == nBytes)
        let withUnknown = try ProtoBody.decode(RMTPChrmPullMsg.self, from: pullBytes + [0x18, 0x01])
        #expect(withUnknown.unknownFields.data == Data([0x18, 0x01]))
        #expect(try ProtoBody.encode(withUnknown) == pullBytes + [0x18, 0x01])
        #expect(throws: WireError.self) { try ProtoBody.decode(RMTPNotifyMsg.self, from: [0x10, 0x01]) }
        #expect(ProtoBody.encodeBuilt(noCount).incomplete?.field == "count")
    }

    @Test func negativeIntsUseTenByteVarintsLikeProtobuf() throws {
        var up = RMTPUpStreamMessage()
        up.sessionID = -1
        up.classname = ""
        up.content = Data()
        up.configFlag = Int32.min
        let fast = try #require(FastProto.encode(up))
        #expect(fast == (try up.serializedBytes()))
        #expect(fast.count == 1 + 10 + 2 + 2 + 1 + 10)
        #expect(FastProto.decodeUpStream(fast) == up)
    }

    @Test func fastUTF8() {
        for s in ["", "abc", "abcdefghijklmnop", "é", "abcdefgh你好", "😀"] {
            let b = Array(s.utf8)
            #expect(b.withUnsafeBufferPointer { FastUTF8.string($0) } == s)
        }
        let bad: [UInt8] = Array("abcdefgh".utf8) + [0xC3]
        #expect(bad.withUnsafeBufferPointer { FastUTF8.string($0) } == nil)
    }
}
