import IMClient
import IMServer
import IMStore
import IMWire
import IMWorld
import SimKernel
@testable import IMTrace
@testable import IMTraceFormat

/// One or more values of every record kind, with the awkward cases: nil and present optionals,
/// kept and digested content, wire bytes with and without content, every timer, negative and
/// far-from-now wall times.
enum Samples {
    static let epoch: Int64 = 1_767_225_600_000
    static let alicePrivate = ConversationKey(.privateChat, "bob")
    static let group = ConversationKey(.group, "family")

    static func message(uid: String? = "BK00-0000-0000-0001", keep: Bool = false, extra: Bool = false) -> TraceMessage {
        TraceMessage(messageId: 12, messageUId: uid, conversation: alicePrivate, senderUserId: "alice", direction: .receive,
                     objectName: "RC:TxtMsg", content: .of("{\"content\":\"hi bob\"}", keep: keep),
                     extra: extra ? .of("x", keep: keep) : nil, sentTime: epoch + 20_120, receivedTime: epoch + 21_000 - 45_000,
                     sentStatus: .received, receivedStatus: 1, flags: 3, clientUniqueId: uid == nil ? nil : -77)
    }

    static let kv = TraceKVEntry(key: "mic", value: .of("on", keep: false), userId: "alice", autoDelete: true, updateTime: epoch + 5)

    static let clientTimers: [ClientTimer] = [.connackTimeout, .heartbeat, .pingTimeout, .reconnect, .backgroundClose,
                                              .connectTimeLimit, .requestTimeout(messageId: 65535), .poll, .storeRetry]
    static let serverTimers: [ServerTimer] = [.sessionIdle(ConnectionID(3)), .queryAckRetry(ConnectionID(4), messageId: 9),
                                              .connectDeadline(ConnectionID(5)), .chatroomAutoDestroy(roomId: "lobby"), .offlineExpiry,
                                              .chatroomBanEnds(roomId: "lobby", userId: "bob"), .chatroomMuteEnds(roomId: "lobby", userId: "carol")]

    static var accepted: AcceptedMessage {
        AcceptedMessage(messageUId: "BK00-0000-0000-0002", conversation: group, senderUserId: "carol", senderDeviceId: "carol-phone",
                        objectName: "RC:TxtMsg", dataTime: epoch + 30_001,
                        flags: MessageTypeFlags(persistent: .isCounted, offline: true, push: false, chatroomPriority: .low),
                        clientUniqueId: 1234, recipients: ["alice", "bob", "dave"], contentLength: 27, contentHash: 0xDEAD_BEEF_0000_0001)
    }

    static var violation: Violation {
        Violation(oracle: "no-duplicate", eventIndex: 8123, time: "41.250s", timeNanoseconds: 41_250_000_000, device: "bob-phone",
                  conversation: "private:alice", messageUId: nil, detail: "messageUId stored twice\nsecond line",
                  path: ["t=1s send", "t=2s accept"], repro: "imsim run quickstart --seed 1 --until 41.251s")
    }

    static func all() -> [TraceEvent] {
        var e: [TraceEvent] = []
        let c = ConnectionID(7)
        // Kernel
        e += [.kernel(.appStart(device: 0)), .kernel(.script(step: 3, repeatIndex: 2)),
              .kernel(.deliver(c, device: 1, toServer: true)), .kernel(.deliver(c, device: 1, toServer: false)),
              .kernel(.connectArrive(c, device: 1)), .kernel(.connectComplete(c, device: 1)),
              .kernel(.closeNotice(c, device: 1, toServer: true, reason: .reset)),
              .kernel(.closeNotice(c, device: 1, toServer: false, reason: .networkDown)),
              .kernel(.workload(user: 17, kind: .burstLike)), .kernel(.workload(user: -1, kind: .burstStart)),
              .kernel(.faultStart(.partition, device: 2)), .kernel(.faultStart(.serverCrash, device: nil)),
              .kernel(.faultEnd(.partition, device: 2)), .kernel(.serverRestart), .kernel(.heal), .kernel(.convergenceCheck),
              .kernel(.end), .kernel(.network(device: 4, up: true)), .kernel(.network(device: 4, up: false))]
        e += clientTimers.map { .kernel(.clientTimer(device: 2, $0)) }
        e += serverTimers.map { .kernel(.serverTimer($0)) }
        // World notes
        e += [.world(.connectionOpened(c, device: 1)), .world(.connectionRefused(c, device: 1)), .world(.connectTimedOut(c, device: 1)),
              .world(.bytesLost(c, toServer: false, count: 300)), .world(.fault(.latencySpike, device: 1, started: true, detail: "×8 for 3s")),
              .world(.fault(.serverPartition, device: nil, started: false, detail: "")), .world(.lifecycle(device: 2, .killed)),
              .world(.network(device: 2, up: false)), .world(.clockStep(device: 2, byMs: -59_999)), .world(.serverDown), .world(.serverUp),
              .world(.phase(.liveness)), .world(.script(step: 1, action: "send private:bob \"hi\""))]
        // Client inputs
        let inputs: [ClientInputRecord] = [
            .connect(token: .of("token-alice", keep: false), timeLimitSeconds: 0), .disconnect, .logout,
            .send(conversation: alicePrivate, objectName: "RC:TxtMsg", content: .of("{\"content\":\"hi\"}", keep: true),
                  pushText: nil, mentioned: false),
            .send(conversation: group, objectName: "RC:TxtMsg", content: .of("x", keep: false), pushText: .of("p", keep: false), mentioned: true),
            .resend(messageId: 12), .recall(messageId: -1), .sendReadReceipt(conversation: alicePrivate, lastMessageSentTime: epoch + 1),
            .clearUnread(conversation: group, upToSentTime: 0), .joinChatroom(roomId: "lobby", messageCount: -1),
            .joinExistChatroom(roomId: "lobby", messageCount: 50), .quitChatroom(roomId: "lobby"),
            .setChatroomKV(roomId: "lobby", key: "k", value: .of("v", keep: true), autoDelete: true, force: false),
            .removeChatroomKV(roomId: "lobby", key: "k", force: true), .getChatroomKV(roomId: "lobby"),
            .getHistory(conversation: group, beforeMessageId: -1, count: 20),
            .getRemoteHistory(conversation: group, beforeTime: epoch - 86_400_000, count: 200),
            .getRemoteHistoryAfter(conversation: group, afterTime: epoch - 3_600_000, count: 1),
            .transportOpened, .transportBytes(TraceBytes(count: 1400)), .transportBytes(TraceBytes(bytes: [0x32, 0, 255])),
            .transportClosed(.closedByPeer), .lifecycle(.background), .lifecycle(.foreground), .networkChanged(available: true),
            .wallClock(offsetMs: -2000)]
        e += inputs.map { .clientInput(device: 3, $0) }
        e += clientTimers.map { .clientInput(device: 3, .timerFired($0)) }
        // Client effects
        let frames = [OutgoingFrame(type: .publish, messageId: 3, topic: "ppMsgP"), OutgoingFrame(type: .pingReq)]
        e += [.clientEffect(device: 1, .openConnection(ConnectionID(9))), .clientEffect(device: 1, .send(TraceBytes(count: 88), frames: frames)),
              .clientEffect(device: 1, .send(TraceBytes(bytes: [1, 2, 3]), frames: [])), .clientEffect(device: 1, .closeConnection)]
        e += clientTimers.map { .clientEffect(device: 1, .setTimer($0, after: .milliseconds(250))) }
        e += clientTimers.map { .clientEffect(device: 1, .cancelTimer($0)) }
        // Callbacks
        let callbacks: [CallbackRecord] = [
            .connectionStatus(.kickedOfflineByOtherClient), .dbOpened(code: 0), .connected(userId: "alice"), .connectError(code: 31004),
            .messageInserted(message(uid: nil)), .messageInserted(message(keep: true, extra: true)),
            .sendResult(messageId: 12, messageUId: "BK00-0000-0000-0001", sentTime: epoch + 20_120, error: nil),
            .sendResult(messageId: 13, messageUId: nil, sentTime: epoch + 1, error: 30003),
            .received(message(), left: 3, offline: true, hasPackage: false), .received(message(extra: true), left: 0, offline: false, hasPackage: true),
            .recalled(messageId: 12, conversation: alicePrivate), .readReceipt(conversation: alicePrivate, lastMessageSentTime: epoch + 9),
            .syncReadStatus(conversation: group, upToSentTime: epoch + 10), .chatroomJoined(roomId: "lobby"),
            .chatroomJoinFailed(roomId: "lobby", code: 23410), .chatroomQuit(roomId: "lobby"), .chatroomKicked(roomId: "lobby"),
            .chatroomDestroyed(roomId: "lobby"), .chatroomKVSynced(roomId: "lobby"), .chatroomKVUpdated(roomId: "lobby", entries: [kv, kv]),
            .chatroomKVRemoved(roomId: "lobby", keys: ["a", "b"]), .chatroomKVResult(roomId: "lobby", key: "a", error: nil),
            .chatroomKVResult(roomId: "lobby", key: "a", error: 23424), .chatroomKV(roomId: "lobby", entries: [], error: 34004),
            .history(conversation: group, messages: [message(), message(uid: nil)]),
            .remoteHistory(conversation: group, messages: [], error: nil),
            .recallResult(messageId: 12, error: nil), .recallResult(messageId: 13, error: 25101)]
        e += callbacks.map { .callback(device: 0, $0) }
        // Client notes
        let notes: [ClientNoteRecord] = [
            .state(from: "connecting", to: "connected", reason: "CONNACK 0"),
            .stored(messageId: 12, messageUId: "BK00-0000-0000-0001", conversation: alicePrivate, sentTime: epoch + 20_120, direction: .receive, isNew: true),
            .stored(messageId: 13, messageUId: nil, conversation: group, sentTime: epoch - 5, direction: .send, isNew: false),
            .skipped(messageUId: "BK00-0000-0000-0003", conversation: group, reason: "s_msg during pull"),
            .skipped(messageUId: nil, conversation: group, reason: "status"), .cursor(name: "inbox", value: epoch + 20_120),
            .reconnectScheduled(attempt: 4, delay: .seconds(2)), .requestTimedOut(messageId: 7, what: "pullMsg"),
            .chatroomState(roomId: "lobby", joined: false),
            .changed(conversation: group, messageIds: [12, -3, 99_999_999_999], what: "SENDING → SENT"),
            .changed(conversation: nil, messageIds: [], what: "all read"),
            .storeError(operation: "insert", message: "SQLITE_FULL: database or disk is full"),
            .ignored(input: "s_msg #12", reason: "bad DownStreamMessage body: field 6 missing"),
            .syncState(from: "idle", to: "pulling#1", reason: "s_ntf"),
            .incompleteBody(IncompleteBody(message: "ChrmInput", field: "nothing", site: "IMClient/ClientCore+Chatroom.swift:35")),
            .incompleteBody(IncompleteBody(message: "NotifyMsg", field: nil, site: "x:1"))]
        e += notes.map { .clientNote(device: 2, $0) }
        // Server inputs
        let sin: [ServerInputRecord] = [
            .connectionAccepted(c), .bytes(c, TraceBytes(count: 17)), .bytes(c, TraceBytes(bytes: [9, 8])), .connectionClosed(c, .timeout),
            .createChatroom(roomId: "r"), .destroyChatroom(roomId: "r"), .keepAliveChatroom(roomId: "r", enabled: true),
            .banChatroomUser(roomId: "r", userId: "u", durationMs: 60_000), .muteChatroomUser(roomId: "r", userId: "u", durationMs: 0),
            .setChatroomUserWhitelist(roomId: "r", userIds: ["a", "b"]), .muteGroupUser(groupId: "g", userId: "u", muted: true),
            .addGroupMembers(groupId: "g", userIds: ["x"]), .removeGroupMembers(groupId: "g", userIds: []),
            .blockUser(userId: "u", blocked: false), .sendSystemMessage(toUserId: "u", objectName: "RC:TxtMsg", content: .of("sys", keep: false)),
            .broadcast(objectName: "RC:InfoNtf", content: .of("all", keep: true)),
            .setChatroomMessageWhitelist(objectNames: ["app:Gift", "RC:TxtMsg"])]
        e += sin.map { .serverInput($0) }
        e += serverTimers.map { .serverInput(.timerFired($0)) }
        // Server effects
        let sframes = [FrameSummary(type: .publish, messageId: 1, dup: true, topic: "ppMsgP"), FrameSummary(type: .puback, messageId: 1)]
        e += [.serverEffect(.send(c, TraceBytes(count: 300), frames: sframes)), .serverEffect(.send(c, TraceBytes(bytes: [7]), frames: [])),
              .serverEffect(.close(c))]
        e += serverTimers.map { .serverEffect(.setTimer($0, after: .seconds(90))) }
        e += serverTimers.map { .serverEffect(.cancelTimer($0)) }
        // Server events
        let sev: [ServerEventRecord] = [
            .sessionOpened(c, userId: "alice", deviceId: "alice-phone", platform: .mobile, sessionId: "s-1"),
            .connectRejected(c, status: .tokenExpired), .sessionClosed(c, userId: "alice", deviceId: "alice-phone", reason: .idleTimeout),
            .kicked(victim: c, userId: "alice", victimDeviceId: "alice-phone", byDeviceId: "alice-phone2"), .messageAccepted(accepted),
            .messageRejected(c, userId: "bob", conversation: group, clientUniqueId: -5, code: 22406),
            .duplicateSendAbsorbed(messageUId: "BK00-0000-0000-0002", userId: "carol", clientUniqueId: 1234),
            .fannedOut(messageUId: "BK00-0000-0000-0002", userId: "bob", deviceId: "bob-phone", c, via: .syncEcho),
            .pulled(c, userId: "bob", deviceId: "bob-phone", topic: "pullMsg", messageUIds: ["BK00-0000-0000-0002"], syncTime: epoch + 30_001, finished: false),
            .offlineStored(messageUId: "BK00-0000-0000-0002", userId: "dave"), .pushed(messageUId: "BK00-0000-0000-0002", userId: "dave"),
            .dropped(messageUId: nil, conversation: ConversationKey(.chatroom, "lobby"), userId: nil, reason: .chatroomQuota),
            .dropped(messageUId: "BK00-0000-0000-0004", conversation: group, userId: "dave", reason: .statusToOffline),
            .chatroomJoined(roomId: "lobby", userId: "bob", deviceId: "bob-phone"),
            .chatroomLeft(roomId: "lobby", userId: "bob", reason: .offlineKick), .chatroomDestroyed(roomId: "lobby", reason: "idle 1h"),
            .chatroomKVChanged(roomId: "lobby", key: "mic", userId: "alice", deleted: true),
            .recalled(messageUId: "BK00-0000-0000-0002", byUserId: "carol"), .restarted(keptPersistentState: true),
            .protocolError(c, description: "bad checksum at byte 1"),
            .reconnectRefused(c, userId: "alice", deviceId: "alice-phone", activeDeviceId: "alice-phone2"),
            .queryRejected(c, userId: "bob", topic: "joinChrm", targetId: "nowhere", code: 23410),
            .chatroomCreated(roomId: "lobby", byUserId: "bob"), .chatroomCreated(roomId: "hall", byUserId: nil),
            .incompleteBody(IncompleteBody(message: "NotifyMsg", field: "type", site: "IMServer/ServerCore+Chatroom.swift:72"))]
        e += sev.map { .serverEvent($0) }
        // Meta
        e += [.meta(.checkpoint(nextEvent: 123_456, digest: 0xFFFF_0000_1234_5678)),
              .meta(.device(index: 3, deviceId: "carol-phone", userId: "carol", platform: .web, userIndex: 2)),
              .meta(.violation(violation)), .meta(.ledger(part: 1, parts: 2, json: Array("{\"a\":1}".utf8))),
              .meta(.runEnd(stopReason: "queue empty", events: 99, complete: true, digest: 42))]
        return e
    }
}
