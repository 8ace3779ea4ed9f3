import Benchmarks
import Foundation
import PropertyBased
import SimKernel
import SwiftProtobuf
import Testing
@testable import IMWire

@Suite struct ProtobufBodyTests {
    static let protoPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Sources/IMWire/Proto/rmtp.proto").standardized.path

    @Test func fieldNumbersOnTheWire() throws {
        var m = RMTPDownStreamMessage()
        m.fromUserID = "a"          // 1: 0x0A
        m.type = 3                  // 2: 0x10 03 (group)
        m.classname = "c"           // 4: 0x22
        m.content = Data([0x7B, 0x7D])  // 5: 0x2A
        m.dataTime = 1              // 6: 0x30
        m.status = 0x30             // 7: 0x38
        m.clientUniqueID = 2        // 14: 0x70
        m.extraContent = "e"        // 15: 0x7A
        #expect(try ProtoBody.encode(m) == [0x0A, 1, 97, 0x10, 3, 0x22, 1, 99, 0x2A, 2, 0x7B, 0x7D, 0x30, 1, 0x38, 0x30,
                                            0x70, 2, 0x7A, 1, 101])
    }

    @Test func finishedIsTrueWhenAbsent() throws {
        var page = RMTPDownStreamMessages()
        page.syncTime = 5
        let decoded = try ProtoBody.decode(RMTPDownStreamMessages.self, from: ProtoBody.encode(page))
        #expect(!decoded.hasFinished && decoded.finished == true)
        page.finished = false
        #expect(try ProtoBody.decode(RMTPDownStreamMessages.self, from: ProtoBody.encode(page)).finished == false)
    }

    @Test func missingRequiredFieldIsNamed() throws {
        // UpStreamMessage without classname (2): sessionId=1, content="{}".
        let bytes: [UInt8] = [0x08, 0x01, 0x1A, 0x02, 0x7B, 0x7D]
        #expect(throws: WireError.protobuf(message: "UpStreamMessage", field: "classname", reason: "required field missing", offset: 0)) {
            _ = try ProtoBody.decode(RMTPUpStreamMessage.self, from: bytes)
        }
        // Nested: second list item of a page lacks dataTime.
        var page = RMTPDownStreamMessages()
        page.syncTime = 1
        page.list = [WireBenchmark.sampleDownStreamMessage(0), WireBenchmark.sampleDownStreamMessage(1)]
        page.list[1].clearDataTime()
        let partial: [UInt8] = try page.serializedBytes(partial: true)
        do {
            _ = try ProtoBody.decode(RMTPDownStreamMessages.self, from: partial)
            Issue.record("decoded a page with a missing required field")
        } catch {
            guard case .protobuf("DownStreamMessages", "list[1].dataTime", "required field missing", let offset) = error else {
                Issue.record("wrong error \(error)")
                return
            }
            let firstItem = try ProtoBody.encode(page.list[0]).count
            #expect(offset > firstItem && offset < partial.count)
        }
        // Encoding an incomplete message names the field too.
        var up = RMTPUpStreamMessage()
        up.sessionID = 3
        up.content = Data()
        #expect(throws: WireError.protobuf(message: "UpStreamMessage", field: "classname", reason: "required field not set", offset: 0)) {
            _ = try ProtoBody.encode(up)
        }
    }

    @Test func malformedBodiesNameTheOffset() throws {
        let ok = try ProtoBody.encode(WireBenchmark.sampleDownStreamMessage())
        // Truncated length-delimited field.
        let cut = Array(ok.prefix(5))
        do {
            _ = try ProtoBody.decode(RMTPDownStreamMessage.self, from: cut)
            Issue.record("decoded a truncated body")
        } catch {
            guard case .protobuf("DownStreamMessage", _, _, let offset) = error else {
                Issue.record("wrong error \(error)")
                return
            }
            #expect(offset <= cut.count)
        }
        // Invalid UTF-8 in a string field.
        let badString: [UInt8] = [0x0A, 0x02, 0xC3, 0x28, 0x10, 0x01]
        #expect(throws: WireError.protobuf(message: "DownStreamMessage", field: "fromUserId", reason: "invalid UTF-8", offset: 2)) {
            _ = try ProtoBody.decode(RMTPDownStreamMessage.self, from: badString)
        }
        // Invalid wire type 7.
        #expect(throws: WireError.protobuf(message: "SyncRequestMsg", field: "syncTime", reason: "invalid wire type 7", offset: 2)) {
            _ = try ProtoBody.decode(RMTPSyncRequestMsg.self, from: [0x08, 0x00, 0x0F])
        }
    }

    @Test func frameBodyHelpers() throws {
        var notify = RMTPNotifyMsg()
        notify.type = 2
        notify.chrmID = "room1"
        notify.time = 1_763_769_600_000
        let p = try Frame.Publish(flags: .none, date: 10, topic: .s_ntf, targetId: "alice", messageId: 4, message: notify)
        #expect(try p.decodeBody(RMTPNotifyMsg.self) == notify)
        #expect(Frame.publish(p).bodyKind() == .notifyMsg)
        let ack = try Frame.QueryAck(messageId: 4, date: 10, message: RMTPChrmOutput.with { $0.nothing = 0 })
        #expect(Frame.queryAck(ack).bodyKind(queryTopic: "joinChrm") == .chrmOutput)
        #expect(Frame.queryAck(ack).bodyKind() == nil)
        #expect(RMTPChannelType(ConversationType.chatroom) == .tempgroup)
        #expect(ConversationType(RMTPChannelType.notify) == .system)
        for c in ConversationType.allCases { #expect(ConversationType(RMTPChannelType(c)) == c) }
        #expect(UpStreamFlags(persistent: .isCounted, mentioned: true).rawValue == 0x07)
        #expect(DownStreamStatus(persistent: .isPersisted, noNotification: true).rawValue == 0x110)
        var h = RMTPHistoryMsgOuput()
        h.hasMsg = 1
        #expect(h.hasMsg_p == 1)
    }

    /// The walker's field table equals the checked-in `.proto` (numbers, names, labels, kinds).
    @Test func schemaTableMatchesTheProtoFile() throws {
        let text = try String(contentsOfFile: Self.protoPath, encoding: .utf8)
        var parsed: [String: [String]] = [:]
        var current: String?
        for raw in text.split(separator: "\n") {
            let line = raw.split(separator: "//").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            if line.hasPrefix("message ") { current = String(line.split(separator: " ")[1]); parsed[current!] = [] }
            else if line == "}" { current = nil }
            else if let c = current, line.hasSuffix(";") {
                // "required int32 sessionId = 1;" / "optional bool finished = 3 [default = true];"
                let words = line.replacingOccurrences(of: ";", with: "").split(separator: " ").map(String.init)
                parsed[c]!.append("\(words[4]) \(words[2]) \(words[0]) \(words[1])")
            }
        }
        func typeName(_ k: ProtoSchema.Kind) -> String {
            switch k {
            case .int32: "int32"
            case .int64: "int64"
            case .bool: "bool"
            case .enumeration: "ChannelType"
            case .string: "string"
            case .bytes: "bytes"
            case .message(let m): m.rawValue
            }
        }
        #expect(Set(parsed.keys) == Set(BodyKind.allCases.map(\.rawValue)))
        for kind in BodyKind.allCases {
            let table = ProtoSchema.fields(kind).map { f in
                "\(f.number) \(f.name) \(f.label == .required ? "required" : f.label == .repeated ? "repeated" : "optional") \(typeName(f.kind))"
            }
            #expect(table == parsed[kind.rawValue], "\(kind)")
            #expect(kind.messageType.protoMessageName == kind.protoName)
        }
    }

    @Test func generatedMessagesRoundTrip() async {
        await propertyCheck(count: 30, input: Gen.uint64(in: 0...UInt64.max)) { seed in
            var rng = RandomStream(seed: seed)
            for kind in BodyKind.allCases {
                let m = FrameGenerator.message(kind, using: &rng)
                do {
                    let bytes = try ProtoBody.encode(m)
                    let back = try kind.decode(bytes)
                    #expect(back.isEqualTo(message: m), "\(kind) seed \(seed)")
                    #expect(try ProtoBody.encode(back) == bytes)
                } catch {
                    Issue.record("\(kind) seed \(seed): \(error)")
                }
            }
        }
    }
}

@Suite struct ContentInMessagesTests {
    @Test func upStreamFromContentAndBack() throws {
        let registry = MessageTypeRegistry()
        let content = MessageContent.text(TextContent(content: "hello"))
        let flags = try registry.checkSendable(content.objectName)
        let up = try RMTPUpStreamMessage(content: content, flags: flags, mentioned: true, clientUniqueId: 42)
        #expect(up.sessionID == 0x07 && up.flags == [.persisted, .counted, .mentioned])
        #expect(up.classname == "RC:TxtMsg" && up.clientUniqueID == 42)
        #expect(String(decoding: up.contentBytes, as: UTF8.self) == #"{"content":"hello"}"#)
        let back = try ProtoBody.decode(RMTPUpStreamMessage.self, from: ProtoBody.encode(up))
        #expect(back.messageContent == content)
        let typing = try RMTPUpStreamMessage(content: .typingStatus(.init(typingContentType: "RC:TxtMsg")),
                                             flags: try registry.checkSendable("RC:TypSts"))
        #expect(typing.sessionID == 0 && !typing.hasClientUniqueID)
        let big = MessageContent.text(TextContent(content: String(repeating: "x", count: 140_000)))
        #expect(throws: WireError.messageTooLarge(size: 140_014, limit: 131_072)) {
            _ = try RMTPUpStreamMessage(content: big, flags: .normal)
        }
    }

    @Test func downStreamAccessors() {
        var d = WireBenchmark.sampleDownStreamMessage(0)
        #expect(d.statusFlags == [.persisted, .counted])
        #expect(d.conversationType == .privateChat)
        #expect(d.messageContent == .text(TextContent(content: "See you at 7? Bring the slides (msg 0)")))
        d.contentBytes = [0xFF]
        #expect(d.messageContent == .raw(RawContent(objectName: "RC:TxtMsg", bytes: [0xFF])))
    }

    @Test func feedingSlices() throws {
        let bytes = try StreamFraming.encode(.pingReq(), direction: .clientToServer) + [0xC0]
        var d = StreamDecoder(direction: .clientToServer)
        #expect(try d.feed(bytes[...]) == [.pingReq()])
        #expect(d.bufferedByteCount == 1)
    }
}
