import IMClient
import IMStore
import IMWire

// `cb` records: every callback the app received, with the message rows as the SDK handed them.

enum CallbackCoding {
    static let names = ["connectionStatus", "dbOpened", "connected", "connectError", "messageInserted", "sendResult",
                        "received", "recalled", "recallResult", "readReceipt", "syncReadStatus", "chatroomJoined",
                        "chatroomJoinFailed", "chatroomQuit", "chatroomKicked", "chatroomDestroyed", "chatroomKVSynced",
                        "chatroomKVUpdated", "chatroomKVRemoved", "chatroomKVResult", "chatroomKV", "history", "remoteHistory"]

    static func encode(_ cb: AppCallback, into o: inout ObjectBuilder) {
        switch cb {
        case .connectionStatus(let s):
            o.add("cb", "connectionStatus"); o.add("status", s.rawValue); o.add("statusName", s.description)
        case .dbOpened(let code): o.add("cb", "dbOpened"); o.add("code", code)
        case .connected(let u): o.add("cb", "connected"); o.add("userId", u)
        case .connectError(let code): o.add("cb", "connectError"); o.add("code", code)
        case .messageInserted(let m): o.add("cb", "messageInserted"); o.add("message", message(m))
        case .sendResult(let id, let uid, let sentTime, let error):
            o.add("cb", "sendResult"); o.add("messageId", id); o.addIfPresent("messageUId", uid); o.add("sentTime", sentTime)
            o.addIfPresent("error", error)
        case .received(let m, let left, let offline, let hasPackage):
            o.add("cb", "received"); o.add("message", message(m)); o.add("left", left); o.add("offline", offline)
            o.add("hasPackage", hasPackage)
        case .recalled(let id, let conv):
            o.add("cb", "recalled"); o.add("messageId", id); o.add("conversation", conv.description)
        case .recallResult(let id, let error):
            o.add("cb", "recallResult"); o.add("messageId", id); o.addIfPresent("error", error)
        case .readReceipt(let conv, let t):
            o.add("cb", "readReceipt"); o.add("conversation", conv.description); o.add("lastMessageSentTime", t)
        case .syncReadStatus(let conv, let t):
            o.add("cb", "syncReadStatus"); o.add("conversation", conv.description); o.add("upToSentTime", t)
        case .chatroomJoined(let r): o.add("cb", "chatroomJoined"); o.add("roomId", r)
        case .chatroomJoinFailed(let r, let code): o.add("cb", "chatroomJoinFailed"); o.add("roomId", r); o.add("code", code)
        case .chatroomQuit(let r): o.add("cb", "chatroomQuit"); o.add("roomId", r)
        case .chatroomKicked(let r): o.add("cb", "chatroomKicked"); o.add("roomId", r)
        case .chatroomDestroyed(let r): o.add("cb", "chatroomDestroyed"); o.add("roomId", r)
        case .chatroomKVSynced(let r): o.add("cb", "chatroomKVSynced"); o.add("roomId", r)
        case .chatroomKVUpdated(let r, let entries):
            o.add("cb", "chatroomKVUpdated"); o.add("roomId", r); o.add("entries", .array(entries.map(kv)))
        case .chatroomKVRemoved(let r, let keys):
            o.add("cb", "chatroomKVRemoved"); o.add("roomId", r); o.add("keys", .array(keys.map { .string($0) }))
        case .chatroomKVResult(let r, let key, let error):
            o.add("cb", "chatroomKVResult"); o.add("roomId", r); o.add("key", key); o.addIfPresent("error", error)
        case .chatroomKV(let r, let entries, let error):
            o.add("cb", "chatroomKV"); o.add("roomId", r); o.add("entries", .array(entries.map(kv))); o.addIfPresent("error", error)
        case .history(let conv, let msgs):
            o.add("cb", "history"); o.add("conversation", conv.description); o.add("messages", .array(msgs.map(message)))
        case .remoteHistory(let conv, let msgs, let error):
            o.add("cb", "remoteHistory"); o.add("conversation", conv.description); o.add("messages", .array(msgs.map(message)))
            o.addIfPresent("error", error)
        }
    }

    static func decode(_ r: inout FieldReader) throws(CaptureError) -> AppCallback {
        let name = try r.string("cb")
        switch name {
        case "connectionStatus":
            let code = try r.int32("status")
            guard let s = ConnectionStatus(rawValue: code) else { throw r.fail("status", .invalidField, "unknown connection status \(code)") }
            r.ignore("statusName")
            return .connectionStatus(s)
        case "dbOpened": return .dbOpened(code: try r.int32("code"))
        case "connected": return .connected(userId: try r.string("userId"))
        case "connectError": return .connectError(code: try r.int32("code"))
        case "messageInserted": return .messageInserted(try message(&r, "message"))
        case "sendResult":
            return .sendResult(messageId: try r.int64("messageId"), messageUId: try r.optionalString("messageUId"),
                               sentTime: try r.int64("sentTime"), error: try r.optionalInt32("error"))
        case "received":
            return .received(try message(&r, "message"), left: try r.int("left", in: 0...Int64(Int32.max)),
                             offline: try r.bool("offline"), hasPackage: try r.bool("hasPackage"))
        case "recalled": return .recalled(messageId: try r.int64("messageId"), conversation: try r.conversation("conversation"))
        case "recallResult": return .recallResult(messageId: try r.int64("messageId"), error: try r.optionalInt32("error"))
        case "readReceipt":
            return .readReceipt(conversation: try r.conversation("conversation"), lastMessageSentTime: try r.int64("lastMessageSentTime"))
        case "syncReadStatus":
            return .syncReadStatus(conversation: try r.conversation("conversation"), upToSentTime: try r.int64("upToSentTime"))
        case "chatroomJoined": return .chatroomJoined(roomId: try r.string("roomId"))
        case "chatroomJoinFailed": return .chatroomJoinFailed(roomId: try r.string("roomId"), code: try r.int32("code"))
        case "chatroomQuit": return .chatroomQuit(roomId: try r.string("roomId"))
        case "chatroomKicked": return .chatroomKicked(roomId: try r.string("roomId"))
        case "chatroomDestroyed": return .chatroomDestroyed(roomId: try r.string("roomId"))
        case "chatroomKVSynced": return .chatroomKVSynced(roomId: try r.string("roomId"))
        case "chatroomKVUpdated": return .chatroomKVUpdated(roomId: try r.string("roomId"), entries: try kvs(&r, "entries"))
        case "chatroomKVRemoved":
            var keys: [String] = []
            for (i, k) in try r.array("keys").enumerated() {
                guard let s = k.stringValue else { throw r.fail("keys[\(i)]", .invalidField, "expected a string") }
                keys.append(s)
            }
            return .chatroomKVRemoved(roomId: try r.string("roomId"), keys: keys)
        case "chatroomKVResult":
            return .chatroomKVResult(roomId: try r.string("roomId"), key: try r.string("key"), error: try r.optionalInt32("error"))
        case "chatroomKV":
            return .chatroomKV(roomId: try r.string("roomId"), entries: try kvs(&r, "entries"), error: try r.optionalInt32("error"))
        case "history": return .history(conversation: try r.conversation("conversation"), messages: try messages(&r, "messages"))
        case "remoteHistory":
            return .remoteHistory(conversation: try r.conversation("conversation"), messages: try messages(&r, "messages"),
                                  error: try r.optionalInt32("error"))
        default:
            throw r.fail("cb", .invalidField, "unknown callback \"\(name)\" (known: \(names.joined(separator: ", ")))")
        }
    }

    // MARK: - Messages and KV entries

    static func message(_ m: StoredMessage) -> JSONValue {
        var o = ObjectBuilder()
        o.add("messageId", m.messageId)
        o.addIfPresent("messageUId", m.messageUId)
        o.add("conversation", m.conversation.description)
        o.add("senderUserId", m.senderUserId)
        o.add("direction", m.direction == .send ? "send" : "receive")
        o.add("objectName", m.objectName)
        o.add("content", m.content)
        o.addIfPresent("extra", m.extra)
        o.add("sentTime", m.sentTime)
        o.add("receivedTime", m.receivedTime)
        o.add("sentStatus", m.sentStatus.rawValue)
        o.add("receivedStatus", m.receivedStatus.rawValue)
        o.add("flags", m.flags.rawValue)
        o.addIfPresent("clientUniqueId", m.clientUniqueId)
        return o.value
    }

    static func message(_ value: JSONValue, line: Int, prefix: String) throws(CaptureError) -> StoredMessage {
        var r = try FieldReader(value, line: line, prefix: prefix, what: "a message")
        let dirText = try r.string("direction")
        let direction: MessageDirection
        switch dirText {
        case "send": direction = .send
        case "receive": direction = .receive
        default: throw r.fail("direction", .invalidField, "must be \"send\" or \"receive\"")
        }
        let statusCode = try r.int32("sentStatus")
        guard let sentStatus = SentStatus(rawValue: statusCode) else {
            throw r.fail("sentStatus", .invalidField, "unknown sentStatus \(statusCode)")
        }
        let m = StoredMessage(
            messageId: try r.int64("messageId"), messageUId: try r.optionalString("messageUId"),
            conversation: try r.conversation("conversation"), senderUserId: try r.string("senderUserId"), direction: direction,
            objectName: try r.string("objectName"), content: try r.string("content"), extra: try r.optionalString("extra"),
            sentTime: try r.int64("sentTime"), receivedTime: try r.int64("receivedTime"), sentStatus: sentStatus,
            receivedStatus: ReceivedStatus(rawValue: try r.int32("receivedStatus")),
            flags: MessageFlags(rawValue: try r.int32("flags")), clientUniqueId: try r.optionalInt64("clientUniqueId"))
        try r.finish()
        return m
    }

    static func message(_ r: inout FieldReader, _ key: String) throws(CaptureError) -> StoredMessage {
        try message(try r.value(key), line: r.line, prefix: r.prefix + key + ".")
    }

    static func messages(_ r: inout FieldReader, _ key: String) throws(CaptureError) -> [StoredMessage] {
        var out: [StoredMessage] = []
        for (i, v) in try r.array(key).enumerated() {
            out.append(try message(v, line: r.line, prefix: r.prefix + "\(key)[\(i)]."))
        }
        return out
    }

    static func kv(_ e: ChatroomKVEntry) -> JSONValue {
        var o = ObjectBuilder()
        o.add("key", e.key); o.add("value", e.value); o.add("userId", e.userId); o.add("autoDelete", e.autoDelete)
        o.add("updateTime", e.updateTime)
        return o.value
    }

    static func kvs(_ r: inout FieldReader, _ key: String) throws(CaptureError) -> [ChatroomKVEntry] {
        var out: [ChatroomKVEntry] = []
        for (i, v) in try r.array(key).enumerated() {
            var e = try FieldReader(v, line: r.line, prefix: r.prefix + "\(key)[\(i)].", what: "a KV entry")
            out.append(ChatroomKVEntry(key: try e.string("key"), value: try e.string("value"), userId: try e.string("userId"),
                                       autoDelete: try e.optionalBool("autoDelete") ?? false, updateTime: try e.int64("updateTime")))
            try e.finish()
        }
        return out
    }
}
