import IMStore
import IMWire
import SimKernel

/// The client SDK core of one device: connection/reconnect, send, receive + sync, chatrooms,
/// recall and receipts, as sans-IO state machines over the device's `IMStore`
/// (Docs/client.md).
///
/// The driver (the simulated world, or a network runtime) feeds inputs with the device's clock
/// and executes the returned effects. The core never reads a clock, opens a socket or draws a
/// random number; the store is the one thing it touches directly. Dropping the value and
/// creating a new one over the same store models an app kill: what is in memory (pending
/// requests, the chatroom cursor) is lost, what is in the store survives.
public struct ClientCore {
    public let identity: DeviceIdentity
    public let config: ClientConfig
    /// The device's database, owned by the world (it survives app kills).
    public let store: IMStore

    var link: ConnectionStateMachine
    var sync = InboxSyncMachine()
    var rooms = ChatroomTable()
    var requests = RequestTable()
    var messageIds = MessageIdCounter()
    var decoder: StreamDecoder
    /// Storage for the frames of one read (empty between inputs).
    private var receivedFrames = FrameScratch()
    var out = EffectBuffer()
    /// Where the buffers of this core's writes come from (`WriteBufferPool`); nil: fresh arrays.
    public var writeBuffers: WriteBufferPool? {
        get { out.writeBuffers }
        set { out.writeBuffers = newValue }
    }
    /// The device time of the input being handled.
    var now = DeviceTime(milliseconds: 0)
    /// The session of the current connection (nil when not connected).
    var session: ConnectedState?
    /// The current session is an automatic reconnect (rooms are rejoined).
    var isReconnectSession = false
    /// Sync echoes (server PUBLISH with the dup bit) waiting for their PUBACK, by server msgId.
    var pendingEchoes: [UInt16: PendingEcho] = [:]
    /// Own rows of this process not yet SENT, by clientUniqueId (a pulled copy completes them).
    var unsentOwnRows: [Int64: Int64] = [:]
    /// Bug B5: per-conversation offset pagers of local history.
    var historyPagers: [ConversationKey: Int] = [:]
    /// Local time of the last typing status sent per conversation (at most one per 6 s).
    var lastTypingSentAt: [ConversationKey: Int64] = [:]
    /// `clientUniqueId >> 31` of every message this device sends (a stable hash of user+device).
    let deviceTag: Int64
    private var startedUp = false
    /// A message the server delivered could not be stored (storage fault): the connection is out
    /// of sync until a pull stores it; the next `s_msg` (skipped meanwhile) starts that pull again.
    var pullAfterStoreFailure = false
    /// The next pull re-asks for a window below the cursors (`ClientConfig.repullWindow`).
    var cursorsUnsure = false
    /// While the window is re-pulled: where the next page starts, per direction (a window can
    /// take more than one page, and a page's syncTime below the cursor does not move it).
    var repullFrom: (inbox: Int64, sendbox: Int64)?
    /// Writes a storage fault left owed (ClientCore+StoreRetry), retried at every input.
    var owedSentMarks: [OwedSentMark] = []
    var owedRoomCleanups: [OwedRoomCleanup] = []
    var owedClearUnreads: [OwedClearUnread] = []
    /// The `storeRetry` timer is armed (while anything above is owed).
    var storeRetryArmed = false
    /// The start-up clientUniqueId floor (device clock) whose write failed: raised inside the
    /// next send's transaction, or that send could reuse a clientUniqueId the server already
    /// accepted (a power loss took back the counter) and be swallowed as a repeat.
    var owedClientUniqueIdFloor: Int64?
    /// Rooms whose last pulled page could not be stored, or whose pull timed out: pulled again on
    /// the heartbeat.
    var roomsToRepull: Set<String> = []

    /// Inbox cursor (server ms), cached from the store.
    public internal(set) var inboxCursor: Int64
    /// Sendbox cursor (server ms), cached from the store.
    public internal(set) var sendboxCursor: Int64

    /// The device tag (`clientUniqueId >> 31`) of a user's device: the one formula, also used by
    /// the lifter and the synthetic trace stream.
    public static func deviceTag(userId: String, deviceId: String) -> Int64 {
        Int64(StableHash.fnv1a("\(userId)\u{1F}\(deviceId)") & 0x7FFF_FFFF)
    }

    public init(identity: DeviceIdentity, config: ClientConfig, store: IMStore) {
        self.identity = identity
        self.config = config
        self.store = store
        link = ConnectionStateMachine(settings: .init(identity: identity, config: config))
        decoder = StreamDecoder(direction: .serverToClient, maxFrameSize: config.maxFrameSize, obfuscated: config.obfuscatedStream)
        deviceTag = Self.deviceTag(userId: identity.userId, deviceId: identity.deviceId)
        // The public client has no general messageUId dedup (im-semantics §4); a knob may add it.
        store.options.dedupByMessageUId = config.messageUIdDedup
        inboxCursor = (try? store.cursor(.inbox)) ?? 0
        sendboxCursor = (try? store.cursor(.sendbox)) ?? 0
        // A store opened by this process: what the cursors' last moves assumed may be gone.
        cursorsUnsure = config.repullWindow > 0
    }

    /// Handles one input at device time `now`; returns the effects in order.
    public mutating func handle(_ input: ClientInput, now: DeviceTime) -> [ClientEffect] {
        self.now = now
        if !startedUp { startUp() }
        if hasOwedStoreWork { retryOwedStoreWork() }
        switch input {
        case .api(let call): api(call)
        case .transport(let event): transport(event)
        case .timerFired(let timer): timerFired(timer)
        case .lifecycle(let l): process(link.lifecycle(l, &out))
        case .networkChanged(let available): process(link.networkChanged(available: available, &out))
        }
        armStoreRetry()
        return out.take()
    }

    // MARK: - Views (tests, oracles)

    /// Name of the connection state (`idle`, `opening`, `awaitingConnack`, `connected`,
    /// `reconnectWait`, `networkWait`, `suspended`, `stopped`).
    public var connectionStateName: String { link.state.name }
    /// The last connection status reported to the app.
    public var connectionStatus: ConnectionStatus? { link.reportedStatus }
    /// A session is up (CONNACK accepted, not lost since).
    public var isConnected: Bool { hasSession }
    /// `session != nil` without copying the session out of the optional (a tag test).
    var hasSession: Bool { if case .some = session { true } else { false } }
    /// Position in the reconnect schedule of the next delay.
    public var reconnectBackoffIndex: Int { link.state.call?.backoffIndex ?? 0 }
    /// The inbox sync's state (`offline`, `linkCheck`, `pulling`, `idle`, `inSync`).
    public var syncState: SyncState { sync.state.reported }
    public var syncStateName: String { syncState.name }
    public var isPulling: Bool { sync.isPulling }
    /// The first pull of this connection finished and none runs.
    public var isInSync: Bool { sync.isInSync }
    /// Rooms the client believes it is in (joined, or rejoining), sorted.
    public var joinedChatrooms: [String] { rooms.rooms.filter(isMember).map(\.roomId) }
    /// A room's in-memory pull cursor.
    public func chatroomCursor(_ roomId: String) -> Int64? { rooms[roomId]?.cursor }
    /// Whether the post-join KV sync of a room finished.
    public func chatroomKVSynced(_ roomId: String) -> Bool { rooms[roomId]?.kvSynced ?? false }
    /// Requests (PUBLISH qos 1 and QUERY) waiting for a reply.
    public var requestsInFlight: Int { requests.count }

    private func isMember(_ r: ChatroomRoom) -> Bool {
        switch r.phase {
        case .joined: true
        case .joining(_, let kind): kind == .rejoin
        }
    }

    // MARK: - Dispatch

    private mutating func startUp() {
        startedUp = true
        if config.clientUniqueIdClockFloor {
            do {
                try store.raiseCounter(Self.clientUniqueIdCounter, toAtLeast: now.milliseconds & 0x7FFF_FFFF)
            } catch {
                storeError("clientUniqueId floor", error)
                owedClientUniqueIdFloor = now.milliseconds & 0x7FFF_FFFF
            }
        }
        // Chatroom rows left by a previous process: the SDK keeps room state in memory only,
        // so they are stale; local chatroom messages go with them (as on quit).
        do {
            // Also rooms whose membership row never committed (a storage fault at the join):
            // their messages would otherwise be stored again by the next join pull.
            var stale = try store.joinedChatrooms().map(\.roomId)
            for conv in try store.conversationList(types: [.chatroom]) where !stale.contains(conv.key.targetId) {
                stale.append(conv.key.targetId)
            }
            for roomId in stale {
                do {
                    let r = try store.quitChatroom(roomId)
                    out.note(.changed(conversation: ConversationKey(.chatroom, roomId), messageIds: [],
                                      what: "stale chatroom of a previous process cleared (\(r.deletedMessageCount) messages)"))
                } catch {
                    // A storage fault: the removal is owed (retried at every input; a join of
                    // the room fails with 33002 until then), or the join pull stores them twice.
                    storeError("startup chatroom cleanup", error)
                    oweRoomCleanup(roomId)
                }
            }
        } catch {
            storeError("startup chatroom cleanup", error)
        }
    }

    private mutating func api(_ call: ClientAPICall) {
        switch call {
        case .connect(let token, let timeLimit):
            // A store that could not be opened (storage fault) is the SDK's database error.
            if link.state.call == nil { out.callback(.dbOpened(code: store.isOpen ? 0 : IMErrorCode.databaseError.rawValue)) }
            process(link.connect(token: token, timeLimitSeconds: timeLimit, &out))
        case .disconnect:
            process(link.disconnect(logout: false, &out))
        case .logout:
            process(link.disconnect(logout: true, &out))
        case .send(let conversation, let objectName, let content, let pushText, let mentioned):
            send(to: conversation, objectName: objectName, content: content, pushText: pushText, mentioned: mentioned)
        case .resend(let messageId):
            resend(messageId)
        case .recall(let messageId):
            recall(messageId)
        case .sendReadReceipt(let conversation, let time):
            sendReadReceipt(conversation, lastMessageSentTime: time)
        case .clearUnread(let conversation, let time):
            clearUnread(conversation, upTo: time)
        case .joinChatroom(let roomId, let count):
            joinChatroom(roomId, messageCount: count, existing: false)
        case .joinExistChatroom(let roomId, let count):
            joinChatroom(roomId, messageCount: count, existing: true)
        case .quitChatroom(let roomId):
            quitChatroom(roomId)
        case .setChatroomKV(let roomId, let key, let value, let autoDelete, let force):
            changeChatroomKV(roomId, key: key, value: value, autoDelete: autoDelete, force: force, remove: false)
        case .removeChatroomKV(let roomId, let key, let force):
            changeChatroomKV(roomId, key: key, value: "", autoDelete: false, force: force, remove: true)
        case .getChatroomKV(let roomId):
            getChatroomKV(roomId)
        case .getHistory(let conversation, let before, let count):
            localHistory(conversation, before: before, count: count)
        case .getRemoteHistory(let conversation, let before, let count):
            remoteHistory(conversation, time: before, count: count, after: false)
        case .getRemoteHistoryAfter(let conversation, let after, let count):
            remoteHistory(conversation, time: after, count: count, after: true)
        }
    }

    private mutating func transport(_ event: TransportEvent) {
        switch event {
        case .opened:
            process(link.transportOpened(&out))
        case .closed(let reason):
            process(link.transportClosed(reason, &out))
        case .bytes(let bytes):
            receive(bytes)
        }
    }

    private mutating func timerFired(_ timer: ClientTimer) {
        switch timer {
        case .requestTimeout(let id):
            requestTimedOut(id)
        case .poll:
            pollFired()
        case .storeRetry:
            // The retry itself ran at the top of `handle`; `armStoreRetry` re-arms if still owed.
            storeRetryArmed = false
        default:
            process(link.timerFired(timer, &out))
            // A message not stored waits for a pull; do not wait for the next s_msg forever.
            if timer == .heartbeat, pullAfterStoreFailure { startPull(reason: "retry after a store failure") }
            if timer == .heartbeat, !roomsToRepull.isEmpty { repullRoomsAfterStoreFailure() }
        }
    }

    // MARK: - Frames in

    private mutating func receive(_ bytes: [UInt8]) {
        guard link.state.hasTransport else {
            out.note(.ignored(input: "\(bytes.count) bytes", reason: "no connection"))
            return
        }
        var frames = receivedFrames.take()
        defer { receivedFrames.putBack(&frames) }
        do {
            try decoder.feed(bytes, into: &frames)
        } catch {
            process(link.protocolError("\(error)", &out))
            return
        }
        // Each frame is handled where it lies in the array (borrowed, not copied out of it).
        frames.withUnsafeBufferPointer { buf in
            for k in buf.indices {
                // A frame may end the connection (DISCONNECT, a refused CONNACK): drop the rest.
                guard link.state.hasTransport else { break }
                handle(buf[k])
            }
        }
        if let failure = decoder.failure, link.state.hasTransport {
            process(link.protocolError("\(failure)", &out))
        }
    }

    private mutating func handle(_ frame: Frame) {
        switch frame {
        case .connack(let c):
            process(link.connackReceived(c, &out))
        case .pingResp:
            process(link.pingResponse(&out))
        case .disconnect(let d):
            process(link.disconnectReceived(d, &out))
        case .publish(let p) where hasSession:
            publishReceived(p)
        case .puback(let a) where hasSession:
            pubackReceived(a)
        case .queryAck(let q) where hasSession:
            queryAckReceived(q)
        default:
            out.note(.ignored(input: "\(frame.type)", reason: !hasSession ? "no session" : "not expected from the server"))
        }
    }

    // MARK: - Frames out

    /// Writes a frame on the current connection.
    mutating func write(_ frame: consuming Frame, topic: String = "") {
        out.write(consume frame, topic: topic, obfuscated: config.obfuscatedStream)
    }

    /// Sends a request (PUBLISH qos 1 or QUERY) and tracks it with a 30 s timeout.
    mutating func sendRequest(_ frame: consuming Frame, topic: Topic, _ request: PendingRequest) {
        let messageId = frame.messageId
        write(consume frame, topic: topic.rawValue)
        if let id = messageId {
            requests.add(id, request)
            out.setTimer(.requestTimeout(messageId: id), after: config.requestTimeout)
        }
    }

    /// A QUERY with an encoded protobuf body as a tracked request; returns its message id.
    @discardableResult
    mutating func query(_ topic: Topic, target: String, body: [UInt8], _ request: PendingRequest) -> UInt16 {
        let id = messageIds.next()
        sendRequest(.query(Frame.Query(topic: topic, targetId: target, messageId: id, body: body)), topic: topic, request)
        return id
    }

    // MARK: - Helpers

    /// Changes the inbox sync machine and notes the transition.
    mutating func syncChange(_ reason: String, _ body: (inout InboxSyncMachine) -> Void) {
        let before = sync.state.reported
        body(&sync)
        let after = sync.state.reported
        if before != after { out.note(.syncState(from: before, to: after, reason: reason)) }
    }

    /// The bytes of a body built here (`ProtoBody.encodeBuilt`); one built without a required
    /// field is reported (`incompleteBody`) and sent as built.
    mutating func built(_ message: some BodyMessage, file: StaticString = #fileID, line: UInt = #line) -> [UInt8] {
        let b = ProtoBody.encodeBuilt(message, file: file, line: line)
        if let i = b.incomplete { out.note(.incompleteBody(i)) }
        return b.bytes
    }

    mutating func storeError(_ operation: String, _ error: any Error) {
        out.note(.storeError(operation: operation, message: "\(error)"))
    }

    /// This device's own message (its clientUniqueId carries this device's tag).
    func isOwnDevice(_ clientUniqueId: Int64?) -> Bool {
        guard let c = clientUniqueId, c > 0 else { return false }
        return c >> 31 == deviceTag
    }

    /// The user id of the session (or of the identity before the first CONNACK).
    var userId: String { session?.userId ?? identity.userId }
}
