#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SwiftProtobuf

extension Frame {
    /// The protobuf message the body holds, when the topic says (QUERYACK: pass the topic of the
    /// QUERY it answers).
    public func bodyKind(queryTopic: String? = nil) -> BodyKind? {
        switch self {
        case .publish(let p): p.knownTopic?.requestBody
        case .query(let q): q.knownTopic?.requestBody
        case .queryAck: queryTopic.flatMap(Topic.init(rawValue:))?.responseBody
        default: nil
        }
    }

    /// The raw body bytes of PUBLISH / QUERY / QUERYACK.
    public var body: [UInt8]? {
        switch self {
        case .publish(let p): p.body
        case .query(let q): q.body
        case .queryAck(let q): q.body
        default: nil
        }
    }
}

/// Frames as JSON objects, for `imsim decode --json` / `imsim encode` and trace exports.
///
/// Keys come in a fixed order: `frame`, `direction`, `dup`, `qos`, `retain`, then the variable
/// header fields of the type, then for bodies `bodyType`, `body` (protobuf JSON with the `.proto`
/// field names), `content` (the message content decoded), `bodyHex`. `describe` → `frame(from:)`
/// gives back the same frame. Reading rules: `bodyHex`, when present, is the body (byte-exact);
/// without it the body is built from `bodyType` + `body`, and a `content.json` replaces the
/// message's content bytes (so a description can be edited by hand). Keys marked informational
/// in Docs/wire-format.md (`statusName`, `sentTime`, `contents`, `bodyError`) are ignored on input.
public enum FrameJSON {
    static var protoJSONOptions: JSONEncodingOptions {
        var o = JSONEncodingOptions()
        o.preserveProtoFieldNames = true
        o.alwaysPrintInt64sAsNumbers = true
        return o
    }

    /// The frame as a JSON object.
    public static func describe(_ frame: Frame, direction: WireDirection, queryTopic: String? = nil) -> JSONValue {
        var m: [JSONValue.Member] = [
            .init("frame", .string(frame.type.description)),
            .init("direction", .string(direction.rawValue)),
        ]
        let f = frame.flags
        m.append(.init("dup", .bool(f.dup)))
        m.append(.init("qos", .int(f.qos.rawValue)))
        m.append(.init("retain", .bool(f.retain)))
        func add(_ k: String, _ v: JSONValue) { m.append(.init(k, v)) }
        switch frame {
        case .connect(let c):
            add("protocolName", .string(c.protocolName))
            add("protocolVersion", .int(c.protocolVersion))
            add("cleanSession", .bool(c.cleanSession))
            add("keepAlive", .int(c.keepAlive))
            add("clientId", .string(c.clientId))
            if let k = c.appKey { add("appKey", .string(k)) }
            if let t = c.token { add("token", .string(t)) }
            if c.isReconnect { add("reconnect", .bool(true)) }
            if c.reconnectKickEnable { add("reconnectKickEnable", .bool(true)) }
        case .connack(let c):
            add("reserved", .int(c.reserved))
            add("status", .int(c.statusCode))
            add("statusName", c.status.map { .string("\($0)") } ?? .null)
            if let s = c.session {
                add("userId", .string(s.userId))
                add("sessionId", .string(s.sessionId))
                add("timestamp", .int(s.timestamp))
            }
        case .publish(let p):
            if direction == .serverToClient { add("date", .int(p.date)) }
            add("topic", .string(p.topic))
            add("targetId", .string(p.targetId))
            add("messageId", .int(p.messageId))
            describeBody(p.body, kind: frame.bodyKind(), into: &m)
        case .puback(let p):
            add("messageId", .int(p.messageId))
            if direction == .serverToClient {
                add("date", .int(p.date))
                add("status", .int(p.status))
                add("millis", .int(p.millis))
                add("messageUId", .string(p.messageUId))
                add("sentTime", .int(p.sentTime))
            }
        case .query(let q):
            add("topic", .string(q.topic))
            add("targetId", .string(q.targetId))
            add("messageId", .int(q.messageId))
            describeBody(q.body, kind: frame.bodyKind(), into: &m)
        case .queryAck(let q):
            add("messageId", .int(q.messageId))
            add("date", .int(q.date))
            add("status", .int(q.status))
            describeBody(q.body, kind: frame.bodyKind(queryTopic: queryTopic), into: &m)
        case .queryConfirm(let q):
            add("messageId", .int(q.messageId))
        case .subscribeFamily(let r):
            add("payloadHex", .string(Hex.encode(r.payload)))
        case .pingReq, .pingResp:
            break
        case .disconnect(let d):
            add("reserved", .int(d.reserved))
            add("status", .int(d.statusCode))
            add("statusName", d.status.map { .string("\($0)") } ?? .null)
        }
        return .object(m)
    }

    /// The content of an Up/DownStreamMessage as `{"objectName", "json"}` (or `"bytesHex"` if the
    /// content is not JSON).
    public static func describeContent(objectName: String, bytes: [UInt8]) -> JSONValue {
        if let j = try? JSONValue.parse(bytes) {
            return .object([.init("objectName", .string(objectName)), .init("json", j)])
        }
        return .object([.init("objectName", .string(objectName)), .init("bytesHex", .string(Hex.encode(bytes)))])
    }

    static func describeBody(_ body: [UInt8], kind: BodyKind?, into m: inout [JSONValue.Member]) {
        if let kind, !body.isEmpty {
            m.append(.init("bodyType", .string(kind.rawValue)))
            do {
                let msg = try kind.decode(body)
                let text = (try? msg.jsonString(options: protoJSONOptions)) ?? "{}"
                m.append(.init("body", (try? JSONValue.parse(text)) ?? .null))
                if let up = msg as? RMTPUpStreamMessage {
                    m.append(.init("content", describeContent(objectName: up.classname, bytes: up.contentBytes)))
                } else if let down = msg as? RMTPDownStreamMessage {
                    m.append(.init("content", describeContent(objectName: down.classname, bytes: down.contentBytes)))
                } else if let list = (msg as? RMTPDownStreamMessages)?.list ?? (msg as? RMTPHistoryMsgOuput)?.list {
                    m.append(.init("contents", .array(list.map {
                        describeContent(objectName: $0.classname, bytes: $0.contentBytes)
                    })))
                }
            } catch {
                m.append(.init("bodyError", .string(error.description)))
            }
        }
        m.append(.init("bodyHex", .string(Hex.encode(body))))
    }

    // MARK: Reading

    /// Builds the frame a description says. `direction` is used when the description has none.
    public static func frame(from json: JSONValue, direction defaultDirection: WireDirection? = nil)
        throws(WireError) -> (frame: Frame, direction: WireDirection)
    {
        guard case .object = json else { throw .badFrameDescription(field: "", reason: "expected a JSON object") }
        let r = Reader(json: json)
        let typeName = try r.string("frame")
        guard let type = FrameType(name: typeName) else {
            throw .badFrameDescription(field: "frame", reason: "unknown frame type \"\(typeName)\"")
        }
        let direction: WireDirection
        if let d = try r.optionalString("direction") {
            guard let dd = WireDirection(rawValue: d) else {
                throw .badFrameDescription(field: "direction", reason: "expected \"c2s\" or \"s2c\"")
            }
            direction = dd
        } else if let d = defaultDirection {
            direction = d
        } else {
            throw .badFrameDescription(field: "direction", reason: "missing (and no default direction given)")
        }
        let qosValue = try r.optionalInt("qos", UInt8.self) ?? 0
        guard let qos = QoS(rawValue: qosValue) else { throw .badFrameDescription(field: "qos", reason: "must be 0, 1, 2 or 3 (the SDKs' Qos.DEFAULT)") }
        let flags = FrameFlags(dup: try r.optionalBool("dup") ?? false, qos: qos, retain: try r.optionalBool("retain") ?? false)
        let s2c = direction == .serverToClient
        let frame: Frame
        switch type {
        case .connect:
            frame = .connect(Frame.Connect(
                flags: flags, protocolName: try r.optionalString("protocolName") ?? Frame.Connect.rcloudProtocolName,
                protocolVersion: try r.optionalInt("protocolVersion", UInt8.self) ?? Frame.Connect.rcloudProtocolVersion,
                cleanSession: try r.optionalBool("cleanSession") ?? true, keepAlive: try r.int("keepAlive", UInt16.self),
                clientId: try r.string("clientId"), appKey: try r.optionalString("appKey"), token: try r.optionalString("token"),
                isReconnect: try r.optionalBool("reconnect") ?? false,
                reconnectKickEnable: try r.optionalBool("reconnectKickEnable") ?? false))
        case .connack:
            var session: Frame.Connack.Session?
            if let userId = try r.optionalString("userId") {
                session = .init(userId: userId, sessionId: try r.string("sessionId"), timestamp: try r.int("timestamp", Int64.self))
            }
            frame = .connack(Frame.Connack(flags: flags, reserved: try r.optionalInt("reserved", UInt8.self) ?? 0,
                                           statusCode: try r.int("status", UInt8.self), session: session))
        case .publish:
            frame = .publish(Frame.Publish(
                flags: flags, date: s2c ? try r.int("date", UInt32.self) : 0, topic: try r.string("topic"),
                targetId: try r.string("targetId"), messageId: try r.int("messageId", UInt16.self), body: try r.body()))
        case .puback:
            if s2c {
                frame = .puback(Frame.Puback(
                    flags: flags, messageId: try r.int("messageId", UInt16.self), date: try r.int("date", UInt32.self),
                    status: try r.int("status", UInt16.self), millis: try r.int("millis", UInt16.self),
                    messageUId: try r.string("messageUId")))
            } else {
                frame = .puback(Frame.Puback(flags: flags, messageId: try r.int("messageId", UInt16.self)))
            }
        case .query:
            frame = .query(Frame.Query(flags: flags, topic: try r.string("topic"), targetId: try r.string("targetId"),
                                       messageId: try r.int("messageId", UInt16.self), body: try r.body()))
        case .queryAck:
            frame = .queryAck(Frame.QueryAck(flags: flags, messageId: try r.int("messageId", UInt16.self),
                                             date: try r.int("date", UInt32.self), status: try r.int("status", UInt16.self),
                                             body: try r.body()))
        case .queryConfirm:
            frame = .queryConfirm(Frame.QueryConfirm(flags: flags, messageId: try r.int("messageId", UInt16.self)))
        case .subscribe, .subAck, .unsubscribe, .unsubAck:
            frame = .subscribeFamily(Frame.Raw(type: type, flags: flags, payload: try r.hex("payloadHex") ?? []))
        case .pingReq:
            frame = .pingReq(flags)
        case .pingResp:
            frame = .pingResp(flags)
        case .disconnect:
            frame = .disconnect(Frame.Disconnect(flags: flags, reserved: try r.optionalInt("reserved", UInt8.self) ?? 0,
                                                 statusCode: try r.int("status", UInt8.self)))
        }
        return (frame, direction)
    }

    private struct Reader {
        let json: JSONValue

        func fail(_ field: String, _ reason: String) -> WireError { .badFrameDescription(field: field, reason: reason) }

        func value(_ key: String) -> JSONValue? {
            guard let v = json[key], v != .null else { return nil }
            return v
        }

        func optionalString(_ key: String) throws(WireError) -> String? {
            guard let v = value(key) else { return nil }
            guard let s = v.stringValue else { throw fail(key, "expected a string") }
            return s
        }

        func string(_ key: String) throws(WireError) -> String {
            guard let s = try optionalString(key) else { throw fail(key, "missing") }
            return s
        }

        func optionalBool(_ key: String) throws(WireError) -> Bool? {
            guard let v = value(key) else { return nil }
            guard let b = v.boolValue else { throw fail(key, "expected true or false") }
            return b
        }

        func optionalInt<I: FixedWidthInteger>(_ key: String, _: I.Type) throws(WireError) -> I? {
            guard let v = value(key) else { return nil }
            guard case .number(let s) = v, let n = I(s) else {
                throw fail(key, "expected an integer in \(I.min)...\(I.max)")
            }
            return n
        }

        func int<I: FixedWidthInteger>(_ key: String, _ t: I.Type) throws(WireError) -> I {
            guard let n = try optionalInt(key, t) else { throw fail(key, "missing") }
            return n
        }

        func hex(_ key: String) throws(WireError) -> [UInt8]? {
            guard let s = try optionalString(key) else { return nil }
            switch Hex.decode(s) {
            case .success(let b): return b
            case .failure(let e): throw fail(key, e.description)
            }
        }

        /// `bodyHex`, else `bodyType` + `body` (+ `content.json`), else empty.
        func body() throws(WireError) -> [UInt8] {
            if let b = try hex("bodyHex") { return b }
            guard let typeName = try optionalString("bodyType") else {
                if value("body") != nil { throw fail("bodyType", "needed to encode \"body\"") }
                return []
            }
            guard let kind = BodyKind(rawValue: typeName) else { throw fail("bodyType", "unknown message \"\(typeName)\"") }
            guard let b = value("body") else { throw fail("body", "missing (or give bodyHex)") }
            var message: any SwiftProtobuf.Message
            do {
                message = try kind.messageType.init(jsonString: b.serializedString, options: JSONDecodingOptions())
            } catch {
                throw fail("body", "not a valid \(typeName) in protobuf JSON: \(error)")
            }
            if let content = value("content")?["json"] {
                let bytes = content.serialized()
                if var up = message as? RMTPUpStreamMessage {
                    up.contentBytes = bytes
                    message = up
                } else if var down = message as? RMTPDownStreamMessage {
                    down.contentBytes = bytes
                    message = down
                }
            }
            return try ProtoBody.encode(message)
        }
    }
}
