import IMWire
import SwiftProtobuf
import Testing

/// A body a core builds without a required field is sent as built (never an empty stand-in, never
/// a trap) and named: message, field, call site (issue 29).
@Suite struct IncompleteBodyTests {
    @Test func aMissingRequiredFieldIsNamedAndTheBodySentAsBuilt() throws {
        var n = RMTPNotifyMsg()
        n.time = 1_767_225_600_000
        n.chrmID = "lobby"          // `type` (required) left unset: a builder bug
        let built = ProtoBody.encodeBuilt(n)
        let i = try #require(built.incomplete)
        #expect(i.message == "NotifyMsg")
        #expect(i.field == "type")
        #expect(i.site.hasPrefix("IMWireTests/IncompleteBodyTests.swift:"))
        #expect(built.bytes == (try n.serializedBytes(partial: true)) as [UInt8])
        #expect(!built.bytes.isEmpty)
        // The peer refuses it, naming the same field.
        #expect {
            _ = try ProtoBody.decode(RMTPNotifyMsg.self, from: built.bytes)
        } throws: { e in
            guard case WireError.protobuf(let m, let f, _, _) = e else { return false }
            return m == "NotifyMsg" && f == "type"
        }
    }

    @Test func aCompleteBodyIsTheEncoderBytes() throws {
        var n = RMTPNotifyMsg()
        n.type = 2
        n.time = 1_767_225_600_000
        n.chrmID = "lobby"
        let built = ProtoBody.encodeBuilt(n)
        #expect(built.incomplete == nil)
        #expect(built.bytes == (try ProtoBody.encode(n)))
        var d = RMTPDownStreamMessage()
        d.fromUserID = "bob"; d.type = 1; d.classname = "RC:TxtMsg"; d.contentBytes = Array("{}".utf8)
        d.dataTime = 5; d.status = 0x10; d.msgID = "BK00-0000-0000-0001"
        let re = try ProtoBody.decode(RMTPDownStreamMessage.self, from: ProtoBody.encodeBuilt(d).bytes)
        #expect(ProtoBody.reencode(re) == (try ProtoBody.encode(d)))
    }
}
