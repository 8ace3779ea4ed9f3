import Benchmarks
import PropertyBased
import SimKernel
import Testing
@testable import IMWire

@Suite struct MessageContentTests {
    static func text(_ c: MessageContent) throws -> String { String(decoding: try c.encoded(), as: UTF8.self) }

    @Test func canonicalBytesOfEachTypedContent() throws {
        #expect(try Self.text(.text(TextContent(content: "hi \"you\"\n"))) == #"{"content":"hi \"you\"\n"}"#)
        #expect(try Self.text(.text(TextContent(content: "你好", extra: "x"))) == #"{"content":"你好","extra":"x"}"#)
        #expect(try Self.text(.recallCommand(RecallCommandContent(conversationType: .group, targetId: "g1",
                                                                   messageUId: "BQ6S-TQ9E-RD5K-1000", sentTime: 1_763_769_600_123)))
                == #"{"conversationType":3,"targetId":"g1","messageUId":"BQ6S-TQ9E-RD5K-1000","sentTime":1763769600123}"#)
        #expect(try Self.text(.recallNotification(RecallNotificationContent(operatorId: "alice", recallTime: 5,
                                                                             originalObjectName: "RC:TxtMsg")))
                == #"{"operatorId":"alice","recallTime":5,"originalObjectName":"RC:TxtMsg","isAdmin":false,"isDelete":false}"#)
        #expect(try Self.text(.readNotification(ReadNotificationContent(lastMessageSendTime: 1_763_769_600_999)))
                == #"{"lastMessageSendTime":1763769600999,"type":1}"#)
        #expect(try Self.text(.syncReadStatus(SyncReadStatusContent(lastMessageSendTime: 7))) == #"{"lastMessageSendTime":7}"#)
        #expect(try Self.text(.information(InformationNotificationContent(message: "joined"))) == #"{"message":"joined"}"#)
        #expect(try Self.text(.typingStatus(TypingStatusContent(typingContentType: "RC:TxtMsg")))
                == #"{"typingContentType":"RC:TxtMsg"}"#)
        #expect(try Self.text(.chatroomKVNotification(ChatroomKVNotificationContent(type: .set, key: "k", value: "v")))
                == #"{"type":1,"key":"k","value":"v"}"#)
        // Control characters use \u00XX; "/" and non-ASCII are written as is.
        #expect(try Self.text(.text(TextContent(content: "a/\u{01}é"))) == "{\"content\":\"a/\\u0001é\"}")
    }

    @Test func decodeAcceptsAnyOrderUnknownFieldsAndNulls() throws {
        let bytes = Array(#"{"extra":null,"user":{"id":"u"},"content":"hey","mentionedInfo":[1]}"#.utf8)
        #expect(try MessageContent.decode(objectName: "RC:TxtMsg", bytes: bytes) == .text(TextContent(content: "hey")))
        let recall = Array(#" { "sentTime" : 12 , "messageUId":"u","targetId":"t","conversationType":1 } "#.utf8)
        #expect(try MessageContent.decode(objectName: "RC:RcCmd", bytes: recall)
                == .recallCommand(RecallCommandContent(conversationType: .privateChat, targetId: "t", messageUId: "u", sentTime: 12)))
    }

    @Test func typedContentErrorsNameTheField() {
        #expect(throws: WireError.badContent(objectName: "RC:TxtMsg", field: "content", reason: "missing", offset: 0)) {
            _ = try MessageContent.decode(objectName: "RC:TxtMsg", bytes: Array(#"{"extra":"x"}"#.utf8))
        }
        #expect(throws: WireError.badContent(objectName: "RC:RcCmd", field: "sentTime", reason: "expected an integer in Int64 range", offset: 65)) {
            _ = try MessageContent.decode(objectName: "RC:RcCmd", bytes: Array(#"{"conversationType":1,"targetId":"t","messageUId":"u","sentTime":1.5}"#.utf8))
        }
        #expect(throws: WireError.badContent(objectName: "RC:RcCmd", field: "conversationType", reason: "unknown conversation type 0", offset: 20)) {
            // 0 is no type; 9 (or 12) is carried as its number since issue 22 (im-semantics §1).
            _ = try MessageContent.decode(objectName: "RC:RcCmd", bytes: Array(#"{"conversationType":0,"targetId":"t","messageUId":"u","sentTime":1}"#.utf8))
        }
        #expect(throws: WireError.badContent(objectName: "RC:SRSMsg", field: nil, reason: "content is not a JSON object", offset: 0)) {
            _ = try MessageContent.decode(objectName: "RC:SRSMsg", bytes: Array("[1]".utf8))
        }
        #expect(throws: WireError.badContent(objectName: "RC:TxtMsg", field: nil, reason: "invalid JSON: unterminated string", offset: 11)) {
            _ = try MessageContent.decode(objectName: "RC:TxtMsg", bytes: Array(#"{"content":"abc"#.utf8))
        }
    }

    @Test func unknownAndUntypedTypesStayRawNeverCrash() throws {
        let garbage: [UInt8] = [0xFF, 0x00, 0x7B]
        #expect(try MessageContent.decode(objectName: "App:Like", bytes: garbage) == .raw(RawContent(objectName: "App:Like", bytes: garbage)))
        let img = Array(#"{"content":"base64…","imageUri":"https://x/y.jpg"}"#.utf8)
        let c = try MessageContent.decode(objectName: "RC:ImgMsg", bytes: img)
        #expect(c == .raw(RawContent(objectName: "RC:ImgMsg", bytes: img)))
        #expect(try c.encoded() == img)
        #expect(c.json?["imageUri"] == .string("https://x/y.jpg"))
        // Malformed content of a typed type: decode throws, decodeOrRaw keeps the bytes.
        #expect(MessageContent.decodeOrRaw(objectName: "RC:TxtMsg", bytes: garbage) == .raw(RawContent(objectName: "RC:TxtMsg", bytes: garbage)))
        #expect(MessageContent.decodeOrRaw(objectName: "RC:TxtMsg", bytes: Array(#"{"content":"ok"}"#.utf8)) == .text(TextContent(content: "ok")))
    }

    @Test func bodyLimitIs128KiBWithError30016() throws {
        let fits = MessageContent.text(TextContent(content: String(repeating: "a", count: 128 * 1024 - 14)))
        #expect(try fits.encoded().count == 128 * 1024)
        let over = MessageContent.text(TextContent(content: String(repeating: "a", count: 128 * 1024 - 13)))
        #expect(throws: WireError.messageTooLarge(size: 128 * 1024 + 1, limit: 128 * 1024)) { _ = try over.encoded() }
        do {
            _ = try over.encoded()
        } catch {
            #expect(error.imErrorCode?.rawValue == 30016)
        }
        let raw = MessageContent.raw(RawContent(objectName: "App:Big", bytes: [UInt8](repeating: 0x20, count: 131_073)))
        #expect(throws: WireError.messageTooLarge(size: 131_073, limit: 131_072)) { _ = try raw.encoded() }
    }

    @Test func generatedContentRoundTrips() async {
        await propertyCheck(count: 100, input: Gen.uint64(in: 0...UInt64.max)) { seed in
            var rng = RandomStream(seed: seed)
            let c = FrameGenerator.content(using: &rng)
            do {
                let bytes = try c.encoded()
                let back = try MessageContent.decode(objectName: c.objectName, bytes: bytes)
                #expect(back == c, "seed \(seed)")
                #expect(try back.encoded() == bytes, "canonical: seed \(seed)")
            } catch {
                Issue.record("seed \(seed): \(error)")
            }
        }
    }

    // MARK: Registry

    @Test func builtInTypesAndTheirFlags() throws {
        let r = MessageTypeRegistry()
        let names = ["RC:TxtMsg", "RC:LBSMsg", "RC:ImgMsg", "RC:HQVCMsg", "RC:FileMsg", "RC:SightMsg", "RC:GIFMsg", "RC:RcCmd",
                     "RC:RcNtf", "RC:ReadNtf", "RC:RRReqMsg", "RC:RRRspMsg", "RC:SRSMsg", "RC:InfoNtf", "RC:TypSts", "RC:chrmKVNotiMsg"]
        #expect(r.objectNames == names.sorted())
        for visible in names.prefix(7) {
            let f = try #require(r.flags(for: visible))
            #expect(f.persistent == .isCounted && f.isPersisted && f.isCounted && f.offline && f.push && f.chatroomPriority == .high)
        }
        #expect(r.flags(for: "RC:RcCmd")?.persistent == MessagePersistent.none)
        #expect(r.flags(for: "RC:RcCmd")?.offline == true)
        #expect(r.flags(for: "RC:ReadNtf").map { !$0.isPersisted && !$0.isCounted } == true)
        #expect(r.flags(for: "RC:InfoNtf").map { $0.isPersisted && !$0.isCounted } == true)
        #expect(r.flags(for: "RC:TypSts") == .status)
        #expect(r.flags(for: "RC:TypSts")?.offline == false)
        #expect(r.customObjectNames.isEmpty)
    }

    @Test func customTypesRegisterAtRunTime() throws {
        var r = MessageTypeRegistry()
        #expect(throws: WireError.unregisteredMessageType(objectName: "App:Like")) { try r.checkSendable("App:Like") }
        do {
            try r.checkSendable("App:Like")
        } catch {
            #expect(error.imErrorCode == .unregisteredMessageType)
            #expect(error.imErrorCode?.rawValue == 34021)
        }
        let like = MessageTypeFlags(persistent: .none, offline: false, push: false, chatroomPriority: .low)
        try r.register("App:Like", flags: like)
        #expect(try r.checkSendable("App:Like") == like)
        #expect(r.customObjectNames == ["App:Like"])
        #expect(throws: WireError.reservedObjectName(objectName: "RC:Mine")) { try r.register("RC:Mine", flags: .normal) }
        #expect(throws: WireError.reservedObjectName(objectName: "")) { try r.register("", flags: .normal) }
        #expect(try r.checkSendable("RC:TxtMsg") == .normal)
        // Registries are values: another one is unaffected.
        #expect(!MessageTypeRegistry().isRegistered("App:Like"))
    }
}

@Suite struct JSONValueTests {
    @Test func parsesAndSerialisesCanonically() throws {
        let v = try JSONValue.parse(#"  {"b": [1, -2.5e3, true, null], "a": "x\u00e9\ud83d\ude00\/"} "#)
        #expect(v.serializedString == #"{"b":[1,-2.5e3,true,null],"a":"xé😀/"}"#)
        #expect(v["b"]?.arrayValue?.first?.int64Value == 1)
        #expect(try JSONValue.parse(v.serialized()) == v)
        #expect(JSONValue.int(Int64.min).int64Value == Int64.min)
        #expect(JSONValue.number("9223372036854775808").int64Value == nil)
    }

    @Test func rejectsBadJSONWithOffsets() {
        let cases: [(String, String, Int)] = [
            (#"{"a":1,"a":2}"#, "duplicate key \"a\"", 7),
            ("[1,]", "unexpected character", 3),
            ("01", "leading zero in number", 0),
            (#""\ud800""#, "unpaired surrogate", 1),
            (#""a\qb""#, "invalid escape", 2),
            ("[1] x", "unexpected data after the value", 4),
            ("tru", "invalid literal", 0),
            ("", "unexpected end of input", 0),
            ("\"a\u{01}\"", "control character in string", 2),
            (String(repeating: "[", count: 70), "nesting deeper than 64", 64),
        ]
        for (text, reason, offset) in cases {
            #expect(throws: WireError.badJSON(reason: reason, offset: offset), "\(text)") { _ = try JSONValue.parse(text) }
        }
        #expect(throws: WireError.badJSON(reason: "invalid UTF-8 in string", offset: 1)) { _ = try JSONValue.parse([0x22, 0xFF, 0x22]) }
    }
}

@Suite struct TopicTests {
    @Test func everyTopicOfTheSpec() {
        #expect(Topic.allCases.map(\.rawValue) == [
            "ppMsgP", "ppMsgN", "ppMsgS", "pgMsgP", "pgMsgS", "chatMsg", "chatMsgS", "recallMsg", "s_ntf", "s_msg", "s_cmd",
            "pullMsg", "joinChrm", "joinChrmR", "exitChrm", "chrmPull", "setKV", "delKV", "pullKV", "qryPMsg", "qryGMsg",
            "qryCHMsg", "updRRTime",
        ])
    }

    @Test func helpers() {
        #expect(Topic.ppMsgN.conversationType == .privateChat)
        #expect(Topic.pgMsgS.conversationType == .group)
        #expect(Topic.chatMsg.conversationType == .chatroom)
        #expect(Topic.recallMsg.conversationType == nil && Topic.s_msg.conversationType == nil)
        #expect(Topic.allCases.filter(\.isStatus) == [.ppMsgS, .pgMsgS, .chatMsgS])
        #expect(Topic.allCases.filter(\.expectsPuback) == [.ppMsgP, .ppMsgN, .pgMsgP, .chatMsg, .recallMsg])
        #expect(Topic.send(to: .privateChat) == .ppMsgP)
        #expect(Topic.send(to: .privateChat, push: false) == .ppMsgN)
        #expect(Topic.send(to: .group, status: true) == .pgMsgS)
        #expect(Topic.send(to: .chatroom, status: true) == .chatMsgS)
        #expect(Topic.send(to: .system) == nil)
        #expect(Topic.history(of: .chatroom) == .qryCHMsg)
        #expect(Topic.pullMsg.requestBody == .syncRequestMsg && Topic.pullMsg.responseBody == .downStreamMessages)
        #expect(Topic.chrmPull.responseBody == .downStreamMessages && Topic.pullKV.responseBody == .chrmKVOutput)
        #expect(Topic.qryGMsg.responseBody == .historyMsgOuput && Topic.setKV.requestBody == .setChrmKV)
        #expect(Topic.s_cmd.requestBody == .notifyMsg && Topic.s_msg.requestBody == .downStreamMessage)
        #expect(Topic.s_ntf.kind == .server && Topic.joinChrmR.kind == .query && Topic.recallMsg.kind == .send)
    }
}
