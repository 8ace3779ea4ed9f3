import IMWire
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SimKernel
import SwiftProtobuf

/// Random valid frames, protobuf bodies and contents drawn from a `RandomStream` — the inputs of
/// the round-trip property tests and the seeds of the fuzz harness. Same stream state → same values.
/// Every frame it makes re-encodes to itself in both directions it is valid for.
public enum FrameGenerator {
    /// A random frame of a random type valid in `direction`.
    public static func frame(direction: WireDirection, using rng: inout RandomStream) -> Frame {
        frame(FrameType.allCases[rng.uniform(0..<FrameType.allCases.count)], direction: direction, using: &rng)
    }

    /// A random frame of `type`. Server→client-only fields are zero/empty client→server.
    public static func frame(_ type: FrameType, direction: WireDirection, using rng: inout RandomStream) -> Frame {
        let s2c = direction == .serverToClient
        let flags = FrameFlags(dup: rng.below(4) == 0, qos: QoS(rawValue: UInt8(rng.below(3)))!, retain: rng.below(8) == 0)
        switch type {
        case .connect:
            let platform = Platform.allCases[rng.uniform(0..<Platform.allCases.count)]
            return .connect(Frame.Connect(
                flags: flags, protocolName: rng.below(8) == 0 ? string(&rng) : Frame.Connect.rcloudProtocolName,
                protocolVersion: rng.below(8) == 0 ? UInt8(rng.below(256)) : 3, cleanSession: rng.below(2) == 0,
                keepAlive: UInt16(rng.below(65536)),
                clientId: Frame.Connect.clientId(platform: platform, deviceId: identifier(&rng)),
                appKey: rng.below(4) == 0 ? nil : identifier(&rng), token: rng.below(4) == 0 ? nil : string(&rng, max: 120)))
        case .connack:
            let status = rng.below(2) == 0 ? 0 : UInt8(rng.below(256))
            let session = rng.below(3) == 0 ? nil : Frame.Connack.Session(
                userId: identifier(&rng), sessionId: identifier(&rng), timestamp: int64(&rng))
            return .connack(Frame.Connack(flags: flags, reserved: rng.below(8) == 0 ? UInt8(rng.below(256)) : 0,
                                          statusCode: status, session: session))
        case .publish:
            let topic = rng.below(8) == 0 ? string(&rng) : Topic.allCases[rng.uniform(0..<Topic.allCases.count)].rawValue
            let date = s2c ? UInt32(truncatingIfNeeded: rng.next()) : 0
            let target = identifier(&rng)
            let id = UInt16(truncatingIfNeeded: rng.next())
            return .publish(Frame.Publish(flags: flags, date: date, topic: topic, targetId: target, messageId: id,
                                          body: body(for: Topic(rawValue: topic)?.requestBody, using: &rng)))
        case .puback:
            if !s2c { return .puback(Frame.Puback(flags: flags, messageId: UInt16(truncatingIfNeeded: rng.next()))) }
            return .puback(Frame.Puback(
                flags: flags, messageId: UInt16(truncatingIfNeeded: rng.next()), date: UInt32(truncatingIfNeeded: rng.next()),
                status: rng.below(2) == 0 ? 0 : UInt16(truncatingIfNeeded: rng.next()), millis: UInt16(rng.below(1000)),
                messageUId: rng.below(8) == 0 ? "" : messageUId(&rng)))
        case .query:
            let queries = Topic.allCases.filter { $0.kind == .query }
            let topic = rng.below(8) == 0 ? string(&rng) : queries[rng.uniform(0..<queries.count)].rawValue
            return .query(Frame.Query(flags: flags, topic: topic, targetId: identifier(&rng),
                                      messageId: UInt16(truncatingIfNeeded: rng.next()),
                                      body: body(for: Topic(rawValue: topic)?.requestBody, using: &rng)))
        case .queryAck:
            let queries = Topic.allCases.filter { $0.kind == .query }
            let kind = queries[rng.uniform(0..<queries.count)].responseBody
            return .queryAck(Frame.QueryAck(flags: flags, messageId: UInt16(truncatingIfNeeded: rng.next()),
                                            date: UInt32(truncatingIfNeeded: rng.next()),
                                            status: rng.below(2) == 0 ? 0 : UInt16(truncatingIfNeeded: rng.next()),
                                            body: rng.below(6) == 0 ? [] : body(for: kind, using: &rng)))
        case .queryConfirm:
            return .queryConfirm(Frame.QueryConfirm(flags: flags, messageId: UInt16(truncatingIfNeeded: rng.next())))
        case .subscribe, .subAck, .unsubscribe, .unsubAck:
            return .subscribeFamily(Frame.Raw(type: type, flags: flags, payload: bytes(&rng, max: 40)))
        case .pingReq:
            return .pingReq(rng.below(2) == 0 ? .none : flags)
        case .pingResp:
            return .pingResp(rng.below(2) == 0 ? .none : flags)
        case .disconnect:
            return .disconnect(Frame.Disconnect(flags: flags, reserved: rng.below(8) == 0 ? UInt8(rng.below(256)) : 0,
                                                statusCode: UInt8(rng.below(4))))
        }
    }

    /// A body: usually a valid message of `kind`, sometimes random bytes or empty.
    public static func body(for kind: BodyKind?, using rng: inout RandomStream) -> [UInt8] {
        switch rng.below(10) {
        case 0: return []
        case 1: return bytes(&rng, max: 64)
        default:
            let k = kind ?? BodyKind.allCases[rng.uniform(0..<BodyKind.allCases.count)]
            return (try? ProtoBody.encode(message(k, using: &rng))) ?? []
        }
    }

    /// A valid protobuf message of `kind`: every required field set, optional fields at random.
    public static func message(_ kind: BodyKind, using rng: inout RandomStream) -> any SwiftProtobuf.Message {
        func maybe(_ rng: inout RandomStream) -> Bool { rng.below(2) == 0 }
        switch kind {
        case .upStreamMessage: return upStream(&rng)
        case .downStreamMessage: return downStream(&rng)
        case .downStreamMessages:
            var m = RMTPDownStreamMessages()
            m.list = (0..<Int(rng.below(4))).map { _ in downStream(&rng) }
            m.syncTime = int64(&rng)
            if maybe(&rng) { m.finished = maybe(&rng) }
            return m
        case .syncRequestMsg:
            var m = RMTPSyncRequestMsg()
            m.syncTime = int64(&rng)
            m.ispolling = maybe(&rng)
            if maybe(&rng) { m.isweb = maybe(&rng) }
            if maybe(&rng) { m.isPullSend = maybe(&rng) }
            if maybe(&rng) { m.isKeeping = maybe(&rng) }
            if maybe(&rng) { m.sendBoxSyncTime = int64(&rng) }
            return m
        case .notifyMsg:
            var m = RMTPNotifyMsg()
            m.type = int32(&rng)
            if maybe(&rng) { m.time = int64(&rng) }
            if maybe(&rng) { m.chrmID = identifier(&rng) }
            return m
        case .chrmInput:
            var m = RMTPChrmInput()
            m.nothing = int32(&rng)
            return m
        case .chrmOutput:
            var m = RMTPChrmOutput()
            m.nothing = int32(&rng)
            return m
        case .chrmPullMsg:
            var m = RMTPChrmPullMsg()
            m.syncTime = int64(&rng)
            m.count = int32(&rng)
            return m
        case .historyMsgInput:
            var m = RMTPHistoryMsgInput()
            if maybe(&rng) { m.targetID = identifier(&rng) }
            if maybe(&rng) { m.time = int64(&rng) }
            if maybe(&rng) { m.count = int32(&rng) }
            if maybe(&rng) { m.order = int32(&rng) }
            return m
        case .historyMsgOuput:
            var m = RMTPHistoryMsgOuput()
            m.list = (0..<Int(rng.below(4))).map { _ in downStream(&rng) }
            m.syncTime = int64(&rng)
            m.hasMsg = int32(&rng)
            return m
        case .chrmKVEntity:
            return kvEntity(&rng)
        case .setChrmKV:
            var m = RMTPSetChrmKV()
            m.entry = kvEntity(&rng)
            if maybe(&rng) { m.bNotify = maybe(&rng) }
            if maybe(&rng) { m.notification = upStream(&rng) }
            if maybe(&rng) { m.type = channelType(&rng) }
            return m
        case .deleteChrmKV:
            var m = RMTPDeleteChrmKV()
            m.entry = kvEntity(&rng)
            if maybe(&rng) { m.bNotify = maybe(&rng) }
            if maybe(&rng) { m.notification = upStream(&rng) }
            if maybe(&rng) { m.type = channelType(&rng) }
            return m
        case .chrmKVOutput:
            var m = RMTPChrmKVOutput()
            m.entries = (0..<Int(rng.below(4))).map { _ in kvEntity(&rng) }
            if maybe(&rng) { m.bFullUpdate = maybe(&rng) }
            if maybe(&rng) { m.syncTime = int64(&rng) }
            return m
        case .queryChrmKV:
            var m = RMTPQueryChrmKV()
            m.timestamp = int64(&rng)
            return m
        case .sessionMsgReadInput:
            var m = RMTPSessionMsgReadInput()
            m.type = channelType(&rng)
            m.msgTime = int64(&rng)
            m.channelID = identifier(&rng)
            return m
        }
    }

    /// Message content of a random type (typed codecs and raw/custom).
    public static func content(using rng: inout RandomStream) -> MessageContent {
        let maybeString: (inout RandomStream) -> String? = { r in r.below(2) == 0 ? nil : string(&r) }
        switch rng.below(10) {
        case 0, 1: return .text(TextContent(content: string(&rng, max: 60), extra: maybeString(&rng)))
        case 2:
            return .recallCommand(RecallCommandContent(
                conversationType: ConversationType.allCases[rng.uniform(0..<ConversationType.allCases.count)],
                targetId: identifier(&rng), messageUId: messageUId(&rng), sentTime: int64(&rng)))
        case 3:
            return .recallNotification(RecallNotificationContent(
                operatorId: identifier(&rng), recallTime: int64(&rng), originalObjectName: "RC:TxtMsg",
                originalMessageUId: rng.below(2) == 0 ? nil : messageUId(&rng), recallContent: maybeString(&rng),
                isAdmin: rng.below(2) == 0, isDelete: rng.below(2) == 0))
        case 4:
            return .readNotification(ReadNotificationContent(
                lastMessageSendTime: int64(&rng), messageUId: rng.below(2) == 0 ? nil : messageUId(&rng), type: 1))
        case 5: return .syncReadStatus(SyncReadStatusContent(lastMessageSendTime: int64(&rng)))
        case 6: return .information(InformationNotificationContent(message: string(&rng), extra: maybeString(&rng)))
        case 7: return .typingStatus(TypingStatusContent(typingContentType: "RC:TxtMsg", data: maybeString(&rng)))
        case 8:
            return .chatroomKVNotification(ChatroomKVNotificationContent(
                type: rng.below(2) == 0 ? .set : .remove, key: identifier(&rng), value: string(&rng), extra: maybeString(&rng)))
        default:
            let json: JSONValue = .object([.init("like", .int(Int64(rng.below(1000)))), .init("from", .string(string(&rng)))])
            return .raw(RawContent(objectName: rng.below(2) == 0 ? "App:Like" : "RC:ImgMsg", json: json))
        }
    }

    // MARK: Primitive values

    public static func upStream(_ rng: inout RandomStream) -> RMTPUpStreamMessage {
        var m = RMTPUpStreamMessage()
        let c = content(using: &rng)
        m.sessionID = Int32(truncatingIfNeeded: rng.below(64))
        m.classname = c.objectName
        m.contentBytes = (try? c.encoded()) ?? []
        if rng.below(4) == 0 { m.pushText = string(&rng) }
        if rng.below(4) == 0 { m.appData = string(&rng) }
        if rng.below(4) == 0 { m.userID = (0..<Int(rng.below(4))).map { _ in identifier(&rng) } }
        if rng.below(4) == 0 { m.delMsgTime = int64(&rng) }
        if rng.below(4) == 0 { m.delMsgID = messageUId(&rng) }
        if rng.below(4) == 0 { m.configFlag = int32(&rng) }
        if rng.below(2) == 0 { m.clientUniqueID = int64(&rng) }
        if rng.below(4) == 0 { m.extraContent = string(&rng) }
        return m
    }

    public static func downStream(_ rng: inout RandomStream) -> RMTPDownStreamMessage {
        var m = RMTPDownStreamMessage()
        let c = content(using: &rng)
        m.fromUserID = identifier(&rng)
        m.type = Int32(channelType(&rng).rawValue)
        if rng.below(2) == 0 { m.groupID = identifier(&rng) }
        m.classname = c.objectName
        m.contentBytes = (try? c.encoded()) ?? []
        m.dataTime = int64(&rng)
        m.status = Int64(rng.below(0x200))
        if rng.below(4) == 0 { m.extra = int64(&rng) }
        if rng.below(2) == 0 { m.msgID = messageUId(&rng) }
        if rng.below(2) == 0 { m.direction = Int32(rng.below(3)) }
        if rng.below(4) == 0 { m.clientUniqueID = int64(&rng) }
        if rng.below(4) == 0 { m.extraContent = string(&rng) }
        return m
    }

    static func kvEntity(_ rng: inout RandomStream) -> RMTPChrmKVEntity {
        var e = RMTPChrmKVEntity()
        e.key = identifier(&rng)
        e.value = string(&rng)
        if rng.below(2) == 0 { e.status = Int32(rng.below(8)) }
        if rng.below(2) == 0 { e.timestamp = int64(&rng) }
        if rng.below(2) == 0 { e.uid = identifier(&rng) }
        return e
    }

    static func channelType(_ rng: inout RandomStream) -> RMTPChannelType {
        RMTPChannelType(rawValue: Int(rng.below(8)) + 1)!
    }

    /// Mostly small, sometimes extreme.
    static func int64(_ rng: inout RandomStream) -> Int64 {
        switch rng.below(6) {
        case 0: return 0
        case 1: return Int64(bitPattern: rng.next())
        case 2: return [Int64.min, Int64.max, -1, 1][rng.uniform(0..<4)]
        default: return 1_700_000_000_000 + Int64(rng.below(100_000_000_000))
        }
    }

    static func int32(_ rng: inout RandomStream) -> Int32 {
        switch rng.below(4) {
        case 0: return Int32(truncatingIfNeeded: rng.next())
        case 1: return [Int32.min, Int32.max, -1, 0][rng.uniform(0..<4)]
        default: return Int32(rng.below(100))
        }
    }

    static let identifierAlphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-".utf8)

    /// `[A-Za-z0-9_-]{1,16}`.
    static func identifier(_ rng: inout RandomStream) -> String {
        let n = 1 + Int(rng.below(16))
        var b: [UInt8] = []
        b.reserveCapacity(n)
        for _ in 0..<n { b.append(identifierAlphabet[Int(rng.below(UInt64(identifierAlphabet.count)))]) }
        return String(decoding: b, as: UTF8.self)
    }

    static func messageUId(_ rng: inout RandomStream) -> String {
        var b: [UInt8] = []
        for k in 0..<19 {
            if k == 4 || k == 9 || k == 14 { b.append(UInt8(ascii: "-")); continue }
            b.append(identifierAlphabet[26 + Int(rng.below(36))])
        }
        return String(decoding: b, as: UTF8.self)
    }

    /// Any text: ASCII (incl. quotes, backslashes, controls), 2-, 3- and 4-byte UTF-8; may be empty.
    static func string(_ rng: inout RandomStream, max: Int = 24) -> String {
        let n = Int(rng.below(UInt64(max + 1)))
        var s = String.UnicodeScalarView()
        for _ in 0..<n {
            let v: UInt32
            switch rng.below(10) {
            case 0: v = UInt32(rng.below(0x20))                           // control
            case 1: v = [0x22, 0x5C, 0x2F, 0x7F][rng.uniform(0..<4)]      // " \ / DEL
            case 2: v = 0x80 + UInt32(rng.below(0x780))                   // 2-byte
            case 3: v = 0x4E00 + UInt32(rng.below(0x5000))                // CJK, 3-byte
            case 4: v = 0x1F300 + UInt32(rng.below(0x300))                // emoji, 4-byte
            default: v = 0x20 + UInt32(rng.below(0x5F))                   // printable ASCII
            }
            s.append(Unicode.Scalar(v)!)
        }
        return String(s)
    }

    static func bytes(_ rng: inout RandomStream, max: Int) -> [UInt8] {
        (0..<Int(rng.below(UInt64(max + 1)))).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
    }
}
