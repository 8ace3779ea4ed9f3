import IMClient
import IMServer
import IMWire
import IMWorldValues
import SimKernel

/// Who a record is about: the column `actor` of `imsim trace show`, the track in Perfetto.
public enum TraceActor: Hashable, Sendable {
    case device(Int)
    case server
    case link(ConnectionID)
    case world

    public func name(_ names: TraceNames) -> String {
        switch self {
        case .device(let d): names.device(d)
        case .server: "server"
        case .link(let c): "link:\(c)"
        case .world: "world"
        }
    }
}

extension TraceEvent {
    public var kindName: String { TraceKinds.name(kind) }

    public var actor: TraceActor {
        switch self {
        case .kernel(let k):
            switch k {
            case .appStart(let d), .clientTimer(let d, _), .network(let d, _): return .device(d)
            case .deliver(let c, _, _), .connectArrive(let c, _), .connectComplete(let c, _), .closeNotice(let c, _, _, _): return .link(c)
            case .serverTimer, .serverRestart: return .server
            case .faultStart(_, let d), .faultEnd(_, let d): return d.map { .device($0) } ?? .world
            case .script, .workload, .heal, .convergenceCheck, .end: return .world
            }
        case .world(let w):
            switch w {
            case .connectionOpened(let c, _), .connectionRefused(let c, _), .connectTimedOut(let c, _), .bytesLost(let c, _, _):
                return .link(c)
            case .fault(_, let d, _, _): return d.map { .device($0) } ?? .world
            case .lifecycle(let d, _), .network(let d, _), .clockStep(let d, _): return .device(d)
            case .serverDown, .serverUp: return .server
            case .phase, .script: return .world
            }
        case .clientInput(let d, _), .clientEffect(let d, _), .callback(let d, _), .clientNote(let d, _): return .device(d)
        case .serverInput, .serverEffect, .serverEvent: return .server
        case .meta(.device(let d, _, _, _, _)): return .device(d)
        case .meta, .unknown: return .world
        }
    }

    /// The device a record concerns (its actor, the owner of its connection, or a device it names).
    public func devices(_ names: TraceNames) -> [Int] {
        switch actor {
        case .device(let d): return [d]
        case .link(let c):
            switch self {
            case .kernel(.deliver(_, let d, _)), .kernel(.connectArrive(_, let d)), .kernel(.connectComplete(_, let d)),
                 .kernel(.closeNotice(_, let d, _, _)), .world(.connectionOpened(_, let d)), .world(.connectionRefused(_, let d)),
                 .world(.connectTimedOut(_, let d)):
                return [d]
            default: return names.deviceOf(connection: c).map { [$0] } ?? []
            }
        case .world: return []
        case .server: break
        }
        func dev(_ c: ConnectionID) -> [Int] { names.deviceOf(connection: c).map { [$0] } ?? [] }
        func byId(_ ids: String...) -> [Int] { ids.compactMap { names.deviceIndex[$0] } }
        switch self {
        case .serverInput(.connectionAccepted(let c)), .serverInput(.bytes(let c, _)), .serverInput(.connectionClosed(let c, _)),
             .serverEffect(.send(let c, _, _)), .serverEffect(.close(let c)):
            return dev(c)
        case .serverInput(.timerFired(let t)), .serverEffect(.setTimer(let t, _)), .serverEffect(.cancelTimer(let t)),
             .kernel(.serverTimer(let t)):
            switch t {
            case .sessionIdle(let c), .queryAckRetry(let c, _), .connectDeadline(let c): return dev(c)
            default: return []
            }
        case .serverEvent(let e):
            switch e {
            case .sessionOpened(let c, _, _, _, _), .connectRejected(let c, _), .sessionClosed(let c, _, _, _),
                 .messageRejected(let c, _, _, _, _), .pulled(let c, _, _, _, _, _, _), .protocolError(let c, _),
                 .reconnectRefused(let c, _, _, _), .queryRejected(let c, _, _, _, _):
                return dev(c)
            case .kicked(let v, _, _, let by): return dev(v) + byId(by)
            case .fannedOut(_, _, _, let c, _): return dev(c)
            case .messageAccepted(let m): return m.senderDeviceId.map { byId($0) } ?? []
            case .chatroomJoined(_, _, let d): return byId(d)
            default: return []
            }
        default: return []
        }
    }

    /// Conversations a record names.
    public var conversations: [ConversationKey] {
        switch self {
        case .clientInput(_, let r):
            switch r {
            case .send(let c, _, _, _, _), .sendReadReceipt(let c, _), .clearUnread(let c, _), .getHistory(let c, _, _),
                 .getRemoteHistory(let c, _, _), .getRemoteHistoryAfter(let c, _, _):
                return [c]
            case .joinChatroom(let r, _), .joinExistChatroom(let r, _), .quitChatroom(let r), .setChatroomKV(let r, _, _, _, _),
                 .removeChatroomKV(let r, _, _), .getChatroomKV(let r):
                return [ConversationKey(.chatroom, r)]
            default: return []
            }
        case .callback(_, let r):
            switch r {
            case .messageInserted(let m), .received(let m, _, _, _): return [m.conversation]
            case .recalled(_, let c), .readReceipt(let c, _), .syncReadStatus(let c, _), .history(let c, _), .remoteHistory(let c, _, _):
                return [c]
            case .chatroomJoined(let r), .chatroomJoinFailed(let r, _), .chatroomQuit(let r), .chatroomKicked(let r),
                 .chatroomDestroyed(let r), .chatroomKVSynced(let r), .chatroomKVUpdated(let r, _), .chatroomKVRemoved(let r, _),
                 .chatroomKVResult(let r, _, _), .chatroomKV(let r, _, _):
                return [ConversationKey(.chatroom, r)]
            default: return []
            }
        case .clientNote(_, let r):
            switch r {
            case .stored(_, _, let c, _, _, _), .skipped(_, let c, _): return [c]
            case .changed(let c, _, _): return c.map { [$0] } ?? []
            case .chatroomState(let r, _): return [ConversationKey(.chatroom, r)]
            default: return []
            }
        case .serverEvent(let e):
            switch e {
            case .messageAccepted(let m): return [m.conversation]
            case .messageRejected(_, _, let c, _, _), .dropped(_, let c, _, _): return [c]
            case .chatroomJoined(let r, _, _), .chatroomLeft(let r, _, _), .chatroomDestroyed(let r, _), .chatroomKVChanged(let r, _, _, _),
                 .chatroomCreated(let r, _):
                return [ConversationKey(.chatroom, r)]
            default: return []
            }
        default: return []
        }
    }

    /// messageUIds a record names.
    public var messageUIds: [String] {
        switch self {
        case .callback(_, let r):
            switch r {
            case .messageInserted(let m), .received(let m, _, _, _): return m.messageUId.map { [$0] } ?? []
            case .sendResult(_, let uid, _, _): return uid.map { [$0] } ?? []
            case .history(_, let l), .remoteHistory(_, let l, _): return l.compactMap(\.messageUId)
            default: return []
            }
        case .clientNote(_, .stored(_, let uid, _, _, _, _)), .clientNote(_, .skipped(let uid, _, _)): return uid.map { [$0] } ?? []
        case .serverEvent(let e):
            switch e {
            case .messageAccepted(let m): return [m.messageUId]
            case .duplicateSendAbsorbed(let u, _, _), .fannedOut(let u, _, _, _, _), .offlineStored(let u, _), .pushed(let u, _),
                 .recalled(let u, _):
                return [u]
            case .pulled(_, _, _, _, let l, _, _): return l
            case .dropped(let u, _, _, _): return u.map { [$0] } ?? []
            default: return []
            }
        case .meta(.violation(let v)): return v.messageUId.map { [$0] } ?? []
        default: return []
        }
    }
}
