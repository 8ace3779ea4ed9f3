import IMClient
import IMStore
import IMWire

// `api` and `timer` records: the SDK's public API calls with their arguments, and timers fired.

enum APICallCoding {
    static let names = ["connect", "disconnect", "logout", "send", "resend", "recall", "sendReadReceipt", "clearUnread",
                        "joinChatroom", "joinExistChatroom", "quitChatroom", "setChatroomKV", "removeChatroomKV",
                        "getChatroomKV", "getHistory", "getRemoteHistory", "getRemoteHistoryAfter"]

    static func encode(_ call: ClientAPICall, into o: inout ObjectBuilder) {
        switch call {
        case .connect(let token, let limit):
            o.add("call", "connect"); o.add("token", token); o.add("timeLimit", limit)
        case .disconnect: o.add("call", "disconnect")
        case .logout: o.add("call", "logout")
        case .send(let conv, let objectName, let content, let pushText, let mentioned):
            o.add("call", "send"); o.add("conversation", conv.description); o.add("objectName", objectName)
            o.add("content", content); o.addIfPresent("pushText", pushText); o.add("mentioned", mentioned)
        case .resend(let id): o.add("call", "resend"); o.add("messageId", id)
        case .recall(let id): o.add("call", "recall"); o.add("messageId", id)
        case .sendReadReceipt(let conv, let t):
            o.add("call", "sendReadReceipt"); o.add("conversation", conv.description); o.add("lastMessageSentTime", t)
        case .clearUnread(let conv, let t):
            o.add("call", "clearUnread"); o.add("conversation", conv.description); o.add("upToSentTime", t)
        case .joinChatroom(let room, let n):
            o.add("call", "joinChatroom"); o.add("roomId", room); o.add("messageCount", n)
        case .joinExistChatroom(let room, let n):
            o.add("call", "joinExistChatroom"); o.add("roomId", room); o.add("messageCount", n)
        case .quitChatroom(let room): o.add("call", "quitChatroom"); o.add("roomId", room)
        case .setChatroomKV(let room, let key, let value, let autoDelete, let force):
            o.add("call", "setChatroomKV"); o.add("roomId", room); o.add("key", key); o.add("value", value)
            o.add("autoDelete", autoDelete); o.add("force", force)
        case .removeChatroomKV(let room, let key, let force):
            o.add("call", "removeChatroomKV"); o.add("roomId", room); o.add("key", key); o.add("force", force)
        case .getChatroomKV(let room): o.add("call", "getChatroomKV"); o.add("roomId", room)
        case .getHistory(let conv, let before, let count):
            o.add("call", "getHistory"); o.add("conversation", conv.description); o.add("beforeMessageId", before)
            o.add("count", count)
        case .getRemoteHistory(let conv, let before, let count):
            o.add("call", "getRemoteHistory"); o.add("conversation", conv.description); o.add("beforeTime", before)
            o.add("count", count)
        case .getRemoteHistoryAfter(let conv, let after, let count):
            o.add("call", "getRemoteHistoryAfter"); o.add("conversation", conv.description); o.add("afterTime", after)
            o.add("count", count)
        }
    }

    static func decode(_ r: inout FieldReader) throws(CaptureError) -> ClientAPICall {
        let name = try r.string("call")
        switch name {
        case "connect": return .connect(token: try r.string("token"), timeLimitSeconds: try r.optionalInt32("timeLimit") ?? 0)
        case "disconnect": return .disconnect
        case "logout": return .logout
        case "send":
            return .send(conversation: try r.conversation("conversation"), objectName: try r.string("objectName"),
                         content: try r.string("content"), pushText: try r.optionalString("pushText"),
                         mentioned: try r.optionalBool("mentioned") ?? false)
        case "resend": return .resend(messageId: try r.int64("messageId"))
        case "recall": return .recall(messageId: try r.int64("messageId"))
        case "sendReadReceipt":
            return .sendReadReceipt(conversation: try r.conversation("conversation"), lastMessageSentTime: try r.int64("lastMessageSentTime"))
        case "clearUnread":
            return .clearUnread(conversation: try r.conversation("conversation"), upToSentTime: try r.int64("upToSentTime"))
        case "joinChatroom": return .joinChatroom(roomId: try r.string("roomId"), messageCount: try r.int32("messageCount"))
        case "joinExistChatroom": return .joinExistChatroom(roomId: try r.string("roomId"), messageCount: try r.int32("messageCount"))
        case "quitChatroom": return .quitChatroom(roomId: try r.string("roomId"))
        case "setChatroomKV":
            return .setChatroomKV(roomId: try r.string("roomId"), key: try r.string("key"), value: try r.string("value"),
                                  autoDelete: try r.optionalBool("autoDelete") ?? false, force: try r.optionalBool("force") ?? false)
        case "removeChatroomKV":
            return .removeChatroomKV(roomId: try r.string("roomId"), key: try r.string("key"), force: try r.optionalBool("force") ?? false)
        case "getChatroomKV": return .getChatroomKV(roomId: try r.string("roomId"))
        case "getHistory":
            return .getHistory(conversation: try r.conversation("conversation"), beforeMessageId: try r.int64("beforeMessageId"),
                               count: try r.int32("count"))
        case "getRemoteHistory":
            return .getRemoteHistory(conversation: try r.conversation("conversation"), beforeTime: try r.int64("beforeTime"),
                                     count: try r.int32("count"))
        case "getRemoteHistoryAfter":
            return .getRemoteHistoryAfter(conversation: try r.conversation("conversation"), afterTime: try r.int64("afterTime"),
                                          count: try r.int32("count"))
        default:
            throw r.fail("call", .invalidField, "unknown API call \"\(name)\" (known: \(names.joined(separator: ", ")))")
        }
    }
}

enum TimerCoding {
    static let names = ["connackTimeout", "heartbeat", "pingTimeout", "reconnect", "backgroundClose", "connectTimeLimit",
                        "requestTimeout", "poll", "storeRetry"]

    static func encode(_ t: ClientTimer, into o: inout ObjectBuilder) {
        switch t {
        case .connackTimeout: o.add("timer", "connackTimeout")
        case .heartbeat: o.add("timer", "heartbeat")
        case .pingTimeout: o.add("timer", "pingTimeout")
        case .reconnect: o.add("timer", "reconnect")
        case .backgroundClose: o.add("timer", "backgroundClose")
        case .connectTimeLimit: o.add("timer", "connectTimeLimit")
        case .requestTimeout(let id): o.add("timer", "requestTimeout"); o.add("messageId", id)
        case .poll: o.add("timer", "poll")
        case .storeRetry: o.add("timer", "storeRetry")
        }
    }

    static func decode(_ r: inout FieldReader) throws(CaptureError) -> ClientTimer {
        let name = try r.string("timer")
        switch name {
        case "connackTimeout": return .connackTimeout
        case "heartbeat": return .heartbeat
        case "pingTimeout": return .pingTimeout
        case "reconnect": return .reconnect
        case "backgroundClose": return .backgroundClose
        case "connectTimeLimit": return .connectTimeLimit
        case "requestTimeout": return .requestTimeout(messageId: UInt16(try r.int("messageId", in: 1...65535)))
        case "poll": return .poll
        case "storeRetry": return .storeRetry
        default:
            throw r.fail("timer", .invalidField, "unknown timer \"\(name)\" (known: \(names.joined(separator: ", ")))")
        }
    }
}
