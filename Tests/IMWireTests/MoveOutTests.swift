import Foundation
import SwiftProtobuf
import Testing
@testable import IMWire

/// Values moved rather than copied (branch `copies12`): same values as the copying code.
@Suite("Move out")
struct MoveOutTests {
    static func message(_ i: Int) -> RMTPDownStreamMessage {
        var d = RMTPDownStreamMessage()
        d.fromUserID = "u\(i)"
        d.type = 1
        d.classname = "RC:TxtMsg"
        d.content = Data(#"{"content":"m\#(i)"}"#.utf8)
        d.dataTime = 1000 + Int64(i)
        d.status = 2
        d.msgID = "UID-\(i)"
        return d
    }

    @Test("takeMessage(at:) returns the page's message and leaves an empty one; the page keeps the rest")
    func takeMessage() {
        var page = RMTPDownStreamMessages()
        page.list = (0..<4).map(Self.message)
        page.syncTime = 77
        let original = page
        var taken: [RMTPDownStreamMessage] = []
        for k in original.list.indices { taken.append(page.takeMessage(at: k)) }
        #expect(taken == original.list)
        #expect(page.list == Array(repeating: RMTPDownStreamMessage(), count: 4))
        #expect(page.syncTime == 77)
        #expect(original.list.map(\.msgID) == ["UID-0", "UID-1", "UID-2", "UID-3"])
    }

    @Test("a page decoded by the fast path equals the protobuf decoder's, and incomplete messages are refused")
    func decodedPage() throws {
        var page = RMTPDownStreamMessages()
        page.list = (0..<3).map(Self.message)
        page.syncTime = 5
        let bytes = try page.serializedBytes(partial: true) as [UInt8]
        #expect(FastProto.decodeDownStreamMessages(bytes) == page)
        #expect(FastProto.decodeDownStream(try Self.message(1).serializedBytes(partial: true)) == Self.message(1))
        var incomplete = Self.message(2)
        incomplete.clearStatus()
        #expect(FastProto.decodeDownStream(try incomplete.serializedBytes(partial: true)) == nil)
        #expect(FastProto.decodeDownStreamMessages(try RMTPDownStreamMessages().serializedBytes(partial: true)) == nil)
    }

    @Test("failed is failure != nil, before and after an error")
    func failed() throws {
        var d = StreamDecoder(direction: .clientToServer)
        #expect(!d.failed)
        _ = try d.feed(try StreamFraming.encode(.pingReq(), direction: .clientToServer))
        #expect(!d.failed && d.failure == nil)
        var bad = try StreamFraming.encode(.pingReq(), direction: .clientToServer)
        bad[1] ^= 0xFF
        _ = try? d.feed(bad)
        #expect(d.failed && d.failure != nil)
    }
}
