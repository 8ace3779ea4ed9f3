import IMClient
import IMServer
import IMWire
import IMWorldValues
import SimKernel

/// The fields of each record kind, for text (`show`, `diff`) and JSON (`export`). The actor is
/// not repeated here.
extension TraceEvent {
    public func fields(_ names: TraceNames) -> [TraceField] {
        typealias F = TraceField
        func conn(_ c: ConnectionID) -> F { F("conn", .text(c.description)) }
        func dev(_ d: Int) -> F { F("device", .text(names.device(d))) }
        func conv(_ c: ConversationKey) -> F { F("conversation", .text(c.description)) }
        switch self {
        case .kernel(let k):
            switch k {
            case .appStart, .serverRestart, .heal, .convergenceCheck, .end, .network: return []
            case .script(let s, let r): return [F("step", .int(s)), F("repeat", .int(r))]
            case .deliver(_, let d, _), .connectArrive(_, let d), .connectComplete(_, let d): return [dev(d)]
            case .closeNotice(_, let d, _, let r): return [dev(d), F("reason", .text(r.rawValue))]
            case .clientTimer(_, let t): return [F("timer", .text(t.description))]
            case .serverTimer(let t): return [F("timer", .text(t.description))]
            case .workload(let u, let kind): return [F("user", .text(names.user(u))), F("what", .text("\(kind)"))]
            case .faultStart(let f, _), .faultEnd(let f, _): return [F("fault", .text(f.rawValue))]
            }
        case .world(let w):
            switch w {
            case .connectionOpened(_, let d), .connectionRefused(_, let d), .connectTimedOut(_, let d): return [dev(d)]
            case .bytesLost(_, let up, let n): return [F("direction", .text(up ? "up" : "down")), F("bytes", .int(n))]
            case .fault(let f, _, let started, let detail):
                return [F("fault", .text(f.rawValue)), F("started", .bool(started)), F("detail", detail.isEmpty ? .null : .text(detail))]
            case .lifecycle(_, let c): return [F("change", .text(c.rawValue))]
            case .network(_, let up): return [F("up", .bool(up))]
            case .clockStep(_, let by): return [F("byMs", .int(by))]
            case .serverDown, .serverUp: return []
            case .phase(let p): return [F("phase", .text(p.rawValue))]
            case .script(let s, let a): return [F("step", .int(s)), F("action", .text(a))]
            }
        case .clientInput(_, let r):
            switch r {
            case .connect(let t, let l): return [F("token", .content(t)), F("timeLimit", .int(Int64(l)))]
            case .disconnect, .logout, .transportOpened: return []
            case .send(let c, let type, let content, let push, let m):
                return [conv(c), F("type", .text(type)), F("content", .content(content)),
                        F("pushText", push.map { .content($0) } ?? .null), F("mentioned", m ? .bool(true) : .null)]
            case .resend(let id), .recall(let id): return [F("messageId", .int(id))]
            case .sendReadReceipt(let c, let t): return [conv(c), F("lastSentTime", .wallMs(t))]
            case .clearUnread(let c, let t): return [conv(c), F("upTo", .wallMs(t))]
            case .joinChatroom(let r, let n), .joinExistChatroom(let r, let n): return [F("room", .text(r)), F("count", .int(Int64(n)))]
            case .quitChatroom(let r), .getChatroomKV(let r): return [F("room", .text(r))]
            case .setChatroomKV(let r, let k, let v, let a, let f):
                return [F("room", .text(r)), F("key", .text(k)), F("value", .content(v)), F("autoDelete", .bool(a)), F("force", .bool(f))]
            case .removeChatroomKV(let r, let k, let f): return [F("room", .text(r)), F("key", .text(k)), F("force", .bool(f))]
            case .getHistory(let c, let b, let n): return [conv(c), F("before", .int(b)), F("count", .int(Int64(n)))]
            case .getRemoteHistory(let c, let b, let n): return [conv(c), F("before", .wallMs(b)), F("count", .int(Int64(n)))]
            case .getRemoteHistoryAfter(let c, let a, let n): return [conv(c), F("after", .wallMs(a)), F("count", .int(Int64(n)))]
            case .transportBytes(let b): return Self.bytesFields(b)
            case .transportClosed(let r): return [F("reason", .text(r.rawValue))]
            case .timerFired(let t): return [F("timer", .text(t.description))]
            case .lifecycle(let l): return [F("to", .text(l == .foreground ? "foreground" : "background"))]
            case .networkChanged(let a): return [F("available", .bool(a))]
            case .wallClock(let o): return [F("offsetMs", .int(o))]
            }
        case .clientEffect(_, let r):
            switch r {
            case .openConnection(let c): return [conn(c)]
            case .send(let b, let frames):
                return Self.bytesFields(b) + [F("frames", .list(frames.map { .text($0.description) }))]
            case .closeConnection: return []
            case .setTimer(let t, let after): return [F("timer", .text(t.description)), F("after", .duration(after))]
            case .cancelTimer(let t): return [F("timer", .text(t.description))]
            }
        case .callback(_, let r):
            switch r {
            case .connectionStatus(let s): return [F("status", .text(s.description))]
            case .dbOpened(let c), .connectError(let c): return [F("code", .int(Int64(c)))]
            case .connected(let u): return [F("user", .text(u))]
            case .messageInserted(let m): return Self.messageFields(m)
            case .sendResult(let id, let uid, let t, let err):
                return [F("messageId", .int(id)), F("uid", .opt(uid)), F("sentTime", .wallMs(t)), F("error", .opt(err))]
            case .received(let m, let left, let off, let pkg):
                return Self.messageFields(m) + [F("left", .int(left)), F("offline", .bool(off)), F("hasPackage", .bool(pkg))]
            case .recalled(let id, let c): return [F("messageId", .int(id)), conv(c)]
            case .readReceipt(let c, let t), .syncReadStatus(let c, let t): return [conv(c), F("upTo", .wallMs(t))]
            case .chatroomJoined(let r), .chatroomQuit(let r), .chatroomKicked(let r), .chatroomDestroyed(let r), .chatroomKVSynced(let r):
                return [F("room", .text(r))]
            case .chatroomJoinFailed(let r, let c): return [F("room", .text(r)), F("code", .int(Int64(c)))]
            case .chatroomKVUpdated(let r, let l): return [F("room", .text(r)), F("entries", .list(l.map(Self.kvValue)))]
            case .chatroomKVRemoved(let r, let k): return [F("room", .text(r)), F("keys", .texts(k))]
            case .chatroomKVResult(let r, let k, let err): return [F("room", .text(r)), F("key", .text(k)), F("error", .opt(err))]
            case .chatroomKV(let r, let l, let err):
                return [F("room", .text(r)), F("entries", .list(l.map(Self.kvValue))), F("error", .opt(err))]
            case .history(let c, let l):
                return [conv(c), F("count", .int(l.count)), F("messages", .list(l.map { .object(Self.messageFields($0)) }))]
            case .remoteHistory(let c, let l, let err):
                return [conv(c), F("count", .int(l.count)), F("messages", .list(l.map { .object(Self.messageFields($0)) })),
                        F("error", .opt(err))]
            case .recallResult(let id, let err): return [F("messageId", .int(id)), F("error", .opt(err))]
            }
        case .clientNote(_, let r):
            switch r {
            case .state(let f, let t, let why): return [F("from", .text(f)), F("to", .text(t)), F("reason", .text(why))]
            case .stored(let id, let uid, let c, let t, let dir, let new):
                return [F("messageId", .int(id)), F("uid", .opt(uid)), conv(c), F("sentTime", .wallMs(t)),
                        F("direction", .text(dir == .send ? "out" : "in")), F("new", .bool(new))]
            case .skipped(let uid, let c, let why): return [F("uid", .opt(uid)), conv(c), F("reason", .text(why))]
            case .cursor(let n, let v): return [F("name", .text(n)), F("value", .wallMs(v))]
            case .reconnectScheduled(let a, let d): return [F("attempt", .int(a)), F("delay", .duration(d))]
            case .requestTimedOut(let m, let w): return [F("msgId", .int(Int64(m))), F("what", .text(w))]
            case .chatroomState(let r, let j): return [F("room", .text(r)), F("joined", .bool(j))]
            case .changed(let c, let ids, let w):
                return [F("conversation", .opt(c?.description)), F("messageIds", .list(ids.map { .int($0) })), F("what", .text(w))]
            case .storeError(let op, let m): return [F("operation", .text(op)), F("message", .text(m))]
            case .ignored(let i, let r): return [F("input", .text(i)), F("reason", .text(r))]
            case .syncState(let f, let t, let why): return [F("from", .text(f)), F("to", .text(t)), F("reason", .text(why))]
            case .incompleteBody(let i): return Self.fields(i)
            }
        case .serverInput(let r):
            switch r {
            case .connectionAccepted(let c): return [conn(c)]
            case .bytes(let c, let b): return [conn(c)] + Self.bytesFields(b)
            case .connectionClosed(let c, let why): return [conn(c), F("reason", .text(why.rawValue))]
            case .timerFired(let t): return [F("timer", .text(t.description))]
            case .createChatroom(let r), .destroyChatroom(let r): return [F("room", .text(r))]
            case .keepAliveChatroom(let r, let e): return [F("room", .text(r)), F("enabled", .bool(e))]
            case .banChatroomUser(let r, let u, let ms), .muteChatroomUser(let r, let u, let ms):
                return [F("room", .text(r)), F("user", .text(u)), F("durationMs", .int(ms))]
            case .setChatroomUserWhitelist(let r, let u): return [F("room", .text(r)), F("users", .texts(u))]
            case .muteGroupUser(let g, let u, let m): return [F("group", .text(g)), F("user", .text(u)), F("muted", .bool(m))]
            case .addGroupMembers(let g, let u), .removeGroupMembers(let g, let u): return [F("group", .text(g)), F("users", .texts(u))]
            case .blockUser(let u, let b): return [F("user", .text(u)), F("blocked", .bool(b))]
            case .sendSystemMessage(let u, let t, let c): return [F("to", .text(u)), F("type", .text(t)), F("content", .content(c))]
            case .broadcast(let t, let c): return [F("type", .text(t)), F("content", .content(c))]
            case .setChatroomMessageWhitelist(let t): return [F("types", .texts(t))]
            }
        case .serverEffect(let r):
            switch r {
            case .send(let c, let b, let frames):
                return [conn(c)] + Self.bytesFields(b) + [F("frames", .list(frames.map { .text($0.description) }))]
            case .close(let c): return [conn(c)]
            case .setTimer(let t, let after): return [F("timer", .text(t.description)), F("after", .duration(after))]
            case .cancelTimer(let t): return [F("timer", .text(t.description))]
            }
        case .serverEvent(let e):
            switch e {
            case .sessionOpened(let c, let u, let d, let p, let s):
                return [conn(c), F("user", .text(u)), F("device", .text(d)), F("platform", .text(p.rawValue)), F("session", .text(s))]
            case .connectRejected(let c, let s): return [conn(c), F("status", .text("\(s)"))]
            case .sessionClosed(let c, let u, let d, let why):
                return [conn(c), F("user", .text(u)), F("device", .text(d)), F("reason", .text(why.rawValue))]
            case .kicked(let v, let u, let vd, let by):
                return [conn(v), F("user", .text(u)), F("victim", .text(vd)), F("by", .text(by))]
            case .messageAccepted(let m):
                return [F("uid", .text(m.messageUId)), conv(m.conversation), F("from", .text(m.senderDeviceId ?? m.senderUserId)),
                        F("type", .text(m.objectName)), F("dataTime", .wallMs(m.dataTime)), F("cuid", .int(m.clientUniqueId)),
                        F("recipients", .texts(m.recipients)),
                        F("content", .object([F("length", .int(m.contentLength)), F("hash", .hex(m.contentHash))])),
                        F("persistent", .int(Int64(m.flags.persistent.rawValue))), F("offline", .bool(m.flags.offline)),
                        F("push", .bool(m.flags.push)), F("priority", .text(m.flags.chatroomPriority.rawValue))]
            case .messageRejected(let c, let u, let cv, let cuid, let code):
                return [conn(c), F("user", .text(u)), conv(cv), F("cuid", .int(cuid)), F("code", .int(Int64(code)))]
            case .duplicateSendAbsorbed(let uid, let u, let cuid): return [F("uid", .text(uid)), F("user", .text(u)), F("cuid", .int(cuid))]
            case .fannedOut(let uid, let u, let d, let c, let via):
                return [F("uid", .text(uid)), F("to", .text(d)), F("user", .text(u)), conn(c), F("via", .text(via.rawValue))]
            case .pulled(let c, let u, let d, let t, let uids, let st, let f):
                return [conn(c), F("user", .text(u)), F("device", .text(d)), F("topic", .text(t)), F("count", .int(uids.count)),
                        F("uids", .texts(uids)), F("syncTime", .wallMs(st)), F("finished", .bool(f))]
            case .offlineStored(let uid, let u), .pushed(let uid, let u): return [F("uid", .text(uid)), F("user", .text(u))]
            case .dropped(let uid, let c, let u, let why):
                return [F("uid", .opt(uid)), conv(c), F("user", .opt(u)), F("reason", .text(why.rawValue))]
            case .chatroomJoined(let r, let u, let d): return [F("room", .text(r)), F("user", .text(u)), F("device", .text(d))]
            case .chatroomLeft(let r, let u, let why): return [F("room", .text(r)), F("user", .text(u)), F("reason", .text(why.rawValue))]
            case .chatroomDestroyed(let r, let why): return [F("room", .text(r)), F("reason", .text(why))]
            case .chatroomKVChanged(let r, let k, let u, let del):
                return [F("room", .text(r)), F("key", .text(k)), F("user", .text(u)), F("deleted", .bool(del))]
            case .recalled(let uid, let by): return [F("uid", .text(uid)), F("by", .text(by))]
            case .restarted(let kept): return [F("keptPersistentState", .bool(kept))]
            case .protocolError(let c, let d): return [conn(c), F("description", .text(d))]
            case .reconnectRefused(let c, let u, let d, let a):
                return [conn(c), F("user", .text(u)), F("device", .text(d)), F("active", .text(a))]
            case .queryRejected(let c, let u, let t, let target, let code):
                return [conn(c), F("user", .text(u)), F("topic", .text(t)), F("target", .text(target)), F("code", .int(Int64(code)))]
            case .chatroomCreated(let r, let by): return [F("room", .text(r)), F("by", .opt(by))]
            case .incompleteBody(let i): return Self.fields(i)
            }
        case .meta(let m):
            switch m {
            case .checkpoint(let n, let d): return [F("nextEvent", .uint(n)), F("digest", .hex(d))]
            case .device(_, let id, let u, let p, _): return [F("id", .text(id)), F("user", .text(u)), F("platform", .text(p.rawValue))]
            case .violation(let v):
                return [F("oracle", .text(v.oracle)), F("eventIndex", .uint(v.eventIndex)), F("device", .opt(v.device)),
                        F("conversation", .opt(v.conversation)), F("uid", .opt(v.messageUId)), F("detail", .text(v.detail)),
                        F("path", .texts(v.path)), F("repro", .text(v.repro))]
            case .ledger(let p, let n, let json): return [F("part", .int(p)), F("parts", .int(n)), F("bytes", .int(json.count))]
            case .runEnd(let r, let n, let c, let d):
                return [F("stop", .text(r)), F("events", .uint(n)), F("complete", .bool(c)), F("digest", .hex(d))]
            }
        case .unknown(_, let body): return [F("bytes", .int(body.count))]
        }
    }

    static func fields(_ i: IncompleteBody) -> [TraceField] {
        [TraceField("message", .text(i.message)), TraceField("field", .opt(i.field)), TraceField("site", .text(i.site))]
    }

    static func bytesFields(_ b: TraceBytes) -> [TraceField] {
        var f = [TraceField("bytes", .int(b.count))]
        if let raw = b.bytes { f.append(TraceField("hex", .text(raw.map { $0 < 16 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()))) }
        return f
    }

    static func messageFields(_ m: TraceMessage) -> [TraceField] {
        [TraceField("messageId", .int(m.messageId)), TraceField("uid", .opt(m.messageUId)),
         TraceField("conversation", .text(m.conversation.description)), TraceField("from", .text(m.senderUserId)),
         TraceField("direction", .text(m.direction == .send ? "out" : "in")), TraceField("type", .text(m.objectName)),
         TraceField("content", .content(m.content)), TraceField("extra", m.extra.map { .content($0) } ?? .null),
         TraceField("sentTime", .wallMs(m.sentTime)), TraceField("receivedTime", .wallMs(m.receivedTime)),
         TraceField("status", .text(m.sentStatus.description)), TraceField("receivedStatus", .int(Int64(m.receivedStatus))),
         TraceField("flags", .int(Int64(m.flags))), TraceField("cuid", m.clientUniqueId.map { .int($0) } ?? .null)]
    }

    static func kvValue(_ e: TraceKVEntry) -> TraceFieldValue {
        .object([TraceField("key", .text(e.key)), TraceField("value", .content(e.value)), TraceField("user", .text(e.userId)),
                 TraceField("autoDelete", .bool(e.autoDelete)), TraceField("updateTime", .wallMs(e.updateTime))])
    }
}
