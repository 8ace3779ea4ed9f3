// Variable headers and bodies of every frame type (wire-protocol §1.4), shared by both framings.
// The "payload" is everything after byte0 in message framing and everything after the remaining
// length in stream framing.

enum FrameCodec {
    /// Bytes `writePayload` will append (so stream framing can write its length first, no copy).
    static func payloadSize(_ frame: Frame, _ direction: WireDirection, _ e: WireStringEncoding = .cesu8) throws(WireError) -> Int {
        switch frame {
        case .connect(let c):
            var n = try WireString.size(c.protocolName, "protocolName", e) + 1 + 1 + 2
            n += try WireString.size(c.clientId, "clientId", e)
            if let k = c.appKey { n += try WireString.size(k, "appKey", e) }
            if let t = c.token { n += try WireString.size(t, "token", e) }
            return n
        case .connack(let c):
            guard let s = c.session else { return 2 }
            return try 2 + WireString.size(s.userId, "userId", e) + WireString.size(s.sessionId, "sessionId", e) + 8
        case .publish(let p):
            return try (direction == .serverToClient ? 4 : 0) + WireString.size(p.topic, "topic", e)
                + WireString.size(p.targetId, "targetId", e) + 2 + p.body.count
        case .puback(let p):
            guard direction == .serverToClient else { return 2 }
            return try 2 + 4 + 2 + 2 + WireString.size(p.messageUId, "messageUId", e)
        case .query(let q):
            return try WireString.size(q.topic, "topic", e) + WireString.size(q.targetId, "targetId", e) + 2 + q.body.count
        case .queryAck(let q):
            return 2 + 4 + 2 + q.body.count
        case .queryConfirm:
            return 2
        case .subscribeFamily(let r):
            return r.payload.count
        case .pingReq, .pingResp:
            return 0
        case .disconnect:
            return 2
        }
    }

    /// Writes the payload through `w`, which has room for `payloadSize` bytes (validated by it).
    static func writePayload(_ frame: Frame, _ direction: WireDirection, _ e: WireStringEncoding, to w: inout ByteWriter) {
        switch frame {
        case .connect(let c):
            w.string(c.protocolName, e)
            w.u8(c.protocolVersion)
            w.u8(c.connectFlags)
            w.u16(c.keepAlive)
            w.string(c.clientId, e)
            if let k = c.appKey { w.string(k, e) }
            if let t = c.token { w.string(t, e) }
        case .connack(let c):
            w.u8(c.reserved)
            w.u8(c.statusCode)
            if let s = c.session {
                w.string(s.userId, e)
                w.string(s.sessionId, e)
                w.i64(s.timestamp)
            }
        case .publish(let p):
            if direction == .serverToClient { w.u32(p.date) }
            w.string(p.topic, e)
            w.string(p.targetId, e)
            w.u16(p.messageId)
            w.bytes(p.body)
        case .puback(let p):
            w.u16(p.messageId)
            if direction == .serverToClient {
                w.u32(p.date)
                w.u16(p.status)
                w.u16(p.millis)
                w.string(p.messageUId, e)
            }
        case .query(let q):
            w.string(q.topic, e)
            w.string(q.targetId, e)
            w.u16(q.messageId)
            w.bytes(q.body)
        case .queryAck(let q):
            w.u16(q.messageId)
            w.u32(q.date)
            w.u16(q.status)
            w.bytes(q.body)
        case .queryConfirm(let q):
            w.u16(q.messageId)
        case .subscribeFamily(let r):
            w.bytes(r.payload)
        case .pingReq, .pingResp:
            break
        case .disconnect(let d):
            w.u8(d.reserved)
            w.u8(d.statusCode)
        }
    }

    /// Decodes one payload. `payloadOrigin` is the offset of `payload[0]` for error messages.
    static func decode(type: FrameType, flags: FrameFlags, payload: UnsafeBufferPointer<UInt8>,
                       direction: WireDirection, payloadOrigin: Int) throws(WireError) -> Frame {
        var notes: [WireNote] = []
        return try decode(type: type, flags: flags, payload: payload, direction: direction,
                          payloadOrigin: payloadOrigin, lenient: false, notes: &notes)
    }

    /// Decodes one payload; `lenient` accepts extra bytes after fixed-layout frames, with a note.
    static func decode(type: FrameType, flags: FrameFlags, payload: UnsafeBufferPointer<UInt8>,
                       direction: WireDirection, payloadOrigin: Int, lenient: Bool,
                       notes: inout [WireNote]) throws(WireError) -> Frame {
        var r = ByteReader(payload, origin: payloadOrigin, lenient: lenient)
        defer { if !r.notes.isEmpty { notes += r.notes } }
        switch type {
        case .connect:
            let name = try r.string("protocolName")
            let version = try r.u8("protocolVersion")
            let flagsOffset = r.offset
            let cf = try r.u8("connectFlags")
            if cf & Frame.Connect.reservedBits != 0 { throw .invalidConnectFlags(cf, offset: flagsOffset) }
            let keepAlive = try r.u16("keepAlive")
            let clientId = try r.string("clientId")
            let appKey = cf & Frame.Connect.appKeyBit != 0 ? try r.string("appKey") : nil
            let token = cf & Frame.Connect.tokenBit != 0 ? try r.string("token") : nil
            try r.expectEnd()
            return .connect(Frame.Connect(
                flags: flags, protocolName: name, protocolVersion: version,
                cleanSession: cf & Frame.Connect.cleanSessionBit != 0, keepAlive: keepAlive,
                clientId: clientId, appKey: appKey, token: token,
                isReconnect: cf & Frame.Connect.reconnectBit != 0,
                reconnectKickEnable: cf & Frame.Connect.reconnectKickEnableBit != 0))
        case .connack:
            let reserved = try r.u8("reserved")
            let status = try r.u8("status")
            var session: Frame.Connack.Session?
            // Liberal: a refusal has no session; what follows it is extra bytes (a note).
            if r.remaining > 0, !(lenient && status != 0) {
                let userId = try r.string("userId")
                let sessionId = try r.string("sessionId")
                let ts = try r.i64("timestamp")
                session = .init(userId: userId, sessionId: sessionId, timestamp: ts)
            }
            try r.expectEnd()
            return .connack(Frame.Connack(flags: flags, reserved: reserved, statusCode: status, session: session))
        case .publish:
            let date = direction == .serverToClient ? try r.u32("date") : 0
            let topic = try r.string("topic")
            let target = try r.string("targetId")
            let id = try r.u16("msgId")
            return .publish(Frame.Publish(flags: flags, date: date, topic: topic, targetId: target,
                                          messageId: id, body: r.rest()))
        case .puback:
            let id = try r.u16("msgId")
            guard direction == .serverToClient else {
                try r.expectEnd()
                return .puback(Frame.Puback(flags: flags, messageId: id))
            }
            let date = try r.u32("date")
            let status = try r.u16("status")
            let millis = try r.u16("millis")
            let uid = try r.string("messageUId")
            try r.expectEnd()
            return .puback(Frame.Puback(flags: flags, messageId: id, date: date, status: status,
                                        millis: millis, messageUId: uid))
        case .query:
            let topic = try r.string("topic")
            let target = try r.string("targetId")
            let id = try r.u16("msgId")
            return .query(Frame.Query(flags: flags, topic: topic, targetId: target, messageId: id, body: r.rest()))
        case .queryAck:
            let id = try r.u16("msgId")
            let date = try r.u32("date")
            let status = try r.u16("status")
            return .queryAck(Frame.QueryAck(flags: flags, messageId: id, date: date, status: status, body: r.rest()))
        case .queryConfirm:
            let id = try r.u16("msgId")
            try r.expectEnd()
            return .queryConfirm(Frame.QueryConfirm(flags: flags, messageId: id))
        case .subscribe, .subAck, .unsubscribe, .unsubAck:
            return .subscribeFamily(Frame.Raw(type: type, flags: flags, payload: r.rest()))
        case .pingReq:
            try r.expectEnd()
            return .pingReq(flags)
        case .pingResp:
            try r.expectEnd()
            return .pingResp(flags)
        case .disconnect:
            let reserved = try r.u8("reserved")
            let status = try r.u8("status")
            try r.expectEnd()
            return .disconnect(Frame.Disconnect(flags: flags, reserved: reserved, statusCode: status))
        }
    }
}
