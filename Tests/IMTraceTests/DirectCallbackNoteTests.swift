import IMClient
import IMServer
import IMStore
import IMWire
import IMWorldValues
import SimKernel
import Testing
@testable import IMTraceFormat

/// `CoreTraceRecorder` writes every callback and note, and the frequent server effects,
/// straight from the core's values (`CallbackRecord.encode(_:…)`, `ClientNoteRecord.encode(_:…)`,
/// `ServerEffectRecord.encodeDirect`): the same kinds and bytes as building the record types
/// first, for every case, with and without kept content.
@Suite struct DirectCallbackNoteTests {
    static let epoch: Int64 = 1_767_225_600_000
    static let conv = ConversationKey(.privateChat, "bob")

    static func row(_ id: Int64, uid: String?) -> StoredMessage {
        StoredMessage(messageId: id, messageUId: uid, conversation: conv, senderUserId: "bob", direction: .receive,
                      objectName: "RC:TxtMsg", content: "{\"content\":\"hi \(id)\"}", extra: id == 2 ? "x" : nil,
                      sentTime: epoch + 1_000 * id, receivedTime: epoch + 1_000 * id + 7, sentStatus: .received,
                      receivedStatus: [], flags: MessageFlags(persistent: .isCounted), clientUniqueId: id == 3 ? 42 : nil)
    }

    static var callbacks: [AppCallback] {
        let kv = ChatroomKVEntry(key: "mic", value: "on", userId: "alice", autoDelete: true, updateTime: epoch + 5)
        return [
            .connectionStatus(.connecting), .connectionStatus(.connected), .dbOpened(code: 0), .connected(userId: "alice"),
            .connectError(code: 31004), .messageInserted(row(1, uid: nil)),
            .sendResult(messageId: 1, messageUId: "BK00-0000-0000-0001", sentTime: epoch + 9, error: nil),
            .sendResult(messageId: 5, messageUId: nil, sentTime: epoch - 3, error: 30003),
            .received(row(2, uid: "BK00-0000-0000-0002"), left: 3, offline: true, hasPackage: false),
            .received(row(3, uid: "BK00-0000-0000-0002"), left: 0, offline: false, hasPackage: true),
            .recalled(messageId: 2, conversation: conv), .recallResult(messageId: 1, error: nil), .recallResult(messageId: 1, error: 25101),
            .readReceipt(conversation: conv, lastMessageSentTime: epoch + 4),
            .syncReadStatus(conversation: conv, upToSentTime: epoch + 8), .chatroomJoined(roomId: "room-1"),
            .chatroomJoinFailed(roomId: "room-2", code: 23410), .chatroomQuit(roomId: "room-1"), .chatroomKicked(roomId: "room-1"),
            .chatroomDestroyed(roomId: "room-3"), .chatroomKVSynced(roomId: "room-1"),
            .chatroomKVUpdated(roomId: "room-1", entries: [kv]), .chatroomKVRemoved(roomId: "room-1", keys: ["mic", "cam"]),
            .chatroomKVResult(roomId: "room-1", key: "mic", error: nil), .chatroomKV(roomId: "room-1", entries: [kv], error: 23427),
            .history(conversation: conv, messages: [row(1, uid: nil), row(2, uid: "BK00-0000-0000-0002")]),
            .remoteHistory(conversation: conv, messages: [row(3, uid: "BK00-0000-0000-0003")], error: nil),
        ]
    }

    static var notes: [ClientNote] {
        [
            .state(from: "connecting", to: "connected", reason: "connack"),
            .stored(messageId: 2, messageUId: "BK00-0000-0000-0002", conversation: conv, sentTime: epoch + 2, direction: .receive, isNew: true),
            .stored(messageId: 3, messageUId: nil, conversation: conv, sentTime: epoch, direction: .send, isNew: false),
            .skipped(messageUId: "BK00-0000-0000-0002", conversation: conv, reason: "status"),
            .skipped(messageUId: nil, conversation: conv, reason: "older than room cursor"),
            .cursor(name: "inbox", value: epoch + 11), .reconnectScheduled(attempt: 2, delay: .milliseconds(500)),
            .requestTimedOut(messageId: 7, what: "qry"), .chatroomState(roomId: "room-1", joined: true),
            .changed(conversation: conv, messageIds: [1, 2], what: "sent 1"), .changed(conversation: nil, messageIds: [], what: "x"),
            .storeError(operation: "insert", message: "disk I/O error"), .ignored(input: "puback #3", reason: "late"),
            .syncState(from: .idle, to: .pulling(page: 1), reason: "notify"),
            .incompleteBody(IncompleteBody(message: "NotifyMsg", field: nil, site: "x:1")),
        ]
    }

    /// The same records twice: through the recorder's direct path, then through the record types.
    func traces(keep: Bool) throws -> (direct: [UInt8], viaRecords: [UInt8]) {
        let options = TraceRecorderOptions(keepContent: keep, writer: TraceWriterOptions(recordsPerBlock: 7, writerThread: false))
        let effects: [ClientEffect] = Self.callbacks.map { .callback($0) } + Self.notes.map { .note($0) }
        let a = try TraceWriter(inMemory: testHeader(), options: options.writer)
        let direct = CoreTraceRecorder(writer: a, options: options, epochMs: Self.epoch)
        let b = try TraceWriter(inMemory: testHeader(), options: options.writer)
        let records = CoreTraceRecorder(writer: b, options: options, epochMs: Self.epoch)
        for d in [1, 1, 0] {  // the same device twice: the device field's context
            let now = SimTime.zero + .seconds(Int64(d + 1))
            direct.clientEffects(device: d, effects, opened: { _ in ConnectionID(0) }, at: now)
            for cb in Self.callbacks { records.record(.callback(device: d, CallbackRecord(cb, keepContent: keep)), at: now) }
            for n in Self.notes { records.record(.clientNote(device: d, ClientNoteRecord(n)), at: now) }
        }
        try direct.close(finalDigest: 1)
        try records.close(finalDigest: 1)
        return (a.bytes, b.bytes)
    }

    @Test func everyCallbackAndNoteIsWrittenAsItsRecordTypeWritesIt() throws {
        for keep in [false, true] {
            let (direct, viaRecords) = try traces(keep: keep)
            #expect(direct == viaRecords, "keepContent \(keep)")
        }
    }

    @Test func serverEffectsAreWrittenAsTheirRecordTypesWriteThem() throws {
        let c = ConnectionID(3)
        let wire: [UInt8] = [0x32, 0x05, 0x01, 0x02, 0x03]
        let effects: [ServerEffect] = [
            .send(c, wire, frames: [FrameSummary(type: .publish, messageId: 1, dup: false, topic: "s_msg")]),
            .setTimer(.sessionIdle(c), after: .seconds(90)), .setTimer(.chatroomBanEnds(roomId: "room-1", userId: "bob"), after: .seconds(5)),
            .cancelTimer(.queryAckRetry(c, messageId: 9)),
            .event(.fannedOut(messageUId: "BK00-0000-0000-0002", userId: "bob", deviceId: "bob-phone", c, via: .direct)),
            .event(.pulled(c, userId: "bob", deviceId: "bob-phone", topic: "pullMsg", messageUIds: ["BK00-0000-0000-0002", "BK00-0000-0000-0003"],
                           syncTime: Self.epoch + 30_001, finished: true)),
            .event(.offlineStored(messageUId: "BK00-0000-0000-0003", userId: "carol")),
            .event(.dropped(messageUId: "BK00-0000-0000-0003", conversation: Self.conv, userId: "bob", reason: .sensitiveWord)),
            .close(c),
        ]
        for keep in [false, true] {
            let options = TraceRecorderOptions(keepContent: keep, writer: TraceWriterOptions(recordsPerBlock: 5, writerThread: false))
            let a = try TraceWriter(inMemory: testHeader(), options: options.writer)
            let direct = CoreTraceRecorder(writer: a, options: options, epochMs: Self.epoch)
            let b = try TraceWriter(inMemory: testHeader(), options: options.writer)
            let records = CoreTraceRecorder(writer: b, options: options, epochMs: Self.epoch)
            for s in 1...2 {
                let now = SimTime.zero + .seconds(Int64(s))
                direct.serverEffects(effects, at: now)
                for effect in effects {
                    switch effect {
                    case .send(let c, let bytes, let frames): records.record(.serverEffect(.send(c, .of(bytes, keep: keep), frames: frames)), at: now)
                    case .close(let c): records.record(.serverEffect(.close(c)), at: now)
                    case .setTimer(let t, let after): records.record(.serverEffect(.setTimer(t, after: after)), at: now)
                    case .cancelTimer(let t): records.record(.serverEffect(.cancelTimer(t)), at: now)
                    case .event(let e):
                        records.record(.serverEvent(ServerEventRecord(e)), at: now)
                        if let d = ServerEventRecord.droppedRecord(e) { records.record(.serverEvent(d), at: now) }
                    }
                }
            }
            try direct.close(finalDigest: 1)
            try records.close(finalDigest: 1)
            #expect(a.bytes == b.bytes, "keepContent \(keep)")
        }
        #expect(effects.map(ServerEffectRecord.directKind(of:)) == [84, 86, 86, 87, 103, 104, 0, 0, 0])
    }

    /// `CoreTraceRecorder.kernel(_:at:)` (no `TraceEvent` around the record) writes what
    /// `record(.kernel(_:), at:)` writes, and counts each record as a kernel event.
    @Test func kernelRecordsAreWrittenAsTheirTraceEventsWriteThem() throws {
        let kernel: [KernelRecord] = [
            .appStart(device: 0), .script(step: 2, repeatIndex: 1), .deliver(ConnectionID(4), device: 1, toServer: true),
            .connectArrive(ConnectionID(4), device: 1), .connectComplete(ConnectionID(5), device: 2),
            .closeNotice(ConnectionID(5), device: 2, toServer: false, reason: .closedByPeer), .clientTimer(device: 1, .heartbeat),
            .serverTimer(.chatroomMuteEnds(roomId: "room-1", userId: "bob")), .workload(user: 3, kind: .chatroomMessage),
            .workload(user: -1, kind: .burstLike), .faultStart(.reset, device: 1), .faultEnd(.reset, device: nil),
            .network(device: 2, up: false), .serverRestart, .heal, .convergenceCheck, .end,
        ]
        let options = TraceRecorderOptions(writer: TraceWriterOptions(recordsPerBlock: 4, writerThread: false))
        let a = try TraceWriter(inMemory: testHeader(), options: options.writer)
        let direct = CoreTraceRecorder(writer: a, options: options, epochMs: Self.epoch)
        let b = try TraceWriter(inMemory: testHeader(), options: options.writer)
        let viaEvents = CoreTraceRecorder(writer: b, options: options, epochMs: Self.epoch)
        for (i, k) in kernel.enumerated() {
            let t = SimTime(nanoseconds: Int64(i) * 1_500_000)
            direct.kernel(k, at: t)
            viaEvents.record(.kernel(k), at: t)
        }
        #expect(direct.nextEvent == UInt64(kernel.count))
        #expect(viaEvents.nextEvent == UInt64(kernel.count))
        try direct.close(finalDigest: 1)
        try viaEvents.close(finalDigest: 1)
        #expect(a.bytes == b.bytes)
    }

    @Test func theKindsAreTheRecordTypesKinds() {
        for cb in Self.callbacks { #expect(cb.traceKind.rawValue == CallbackRecord(cb, keepContent: false).kind) }
        for n in Self.notes { #expect(n.traceKind.rawValue == ClientNoteRecord(n).kind) }
        // Every kind is covered by the samples above.
        #expect(Set(Self.callbacks.map { $0.traceKind.rawValue }) == Set(AppCallback.TraceKind.allCases.map(\.rawValue)))
        #expect(Set(Self.notes.map { $0.traceKind.rawValue }) == Set(ClientNote.TraceKind.allCases.map(\.rawValue)))
    }
}
