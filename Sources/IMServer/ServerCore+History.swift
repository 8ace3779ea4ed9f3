import IMWire

// Cloud history: qryPMsg / qryGMsg / qryCHMsg (im-semantics §6; Docs/server.md §6.3).
extension ServerCore {
    static let historyMaxCount: Int32 = 200

    /// HistoryMsgInput{targetId, time, count 1…200, order}: order 0 = messages *before* `time`
    /// (0 = now), the newest `count`; order 1 = messages *after* `time`, the oldest `count`. The
    /// page is in ascending dataTime order; `syncTime` is the next cursor (the oldest returned for
    /// order 0, the newest for order 1); `hasMsg` = 1 when more remain that way. Like pulls, a page
    /// never splits a run of equal dataTimes. Recalled messages come back as RC:RcNtf.
    mutating func handleHistory(_ q: Frame.Query, topic: Topic, on id: ConnectionID, session s: Session, now: Int64) {
        guard let req = try? q.decodeBody(RMTPHistoryMsgInput.self), (1...Self.historyMaxCount).contains(req.count) else {
            return rejectQuery(id, q, code: IMErrorCode.invalidParameter.rawValue, now: now)
        }
        let target = !q.targetId.isEmpty ? q.targetId : req.targetID
        let type: ConversationType = topic == .qryPMsg ? .privateChat : (topic == .qryGMsg ? .group : .chatroom)
        var visibleFrom = Int64.min
        if type == .group {
            guard let g = groups[target], g.memberSet.contains(s.userId) else {
                return rejectQuery(id, q, code: IMErrorCode.notInGroup.rawValue, now: now)
            }
            visibleFrom = g.joinedAt[s.userId] ?? .min
        }
        let log = store.conversations[ConversationClockKey(type: type, user: s.userId, target: target)]?.messages ?? []
        // Visible range of the log: [lo, hi).
        var lo = visibleFrom == .min ? 0 : Self.firstIndex(log, after: visibleFrom - 1)
        var hi = log.count
        let before = req.order == 0
        if before {
            hi = req.time > 0 ? Self.firstIndex(log, after: req.time - 1) : log.count
        } else {
            lo = max(lo, Self.firstIndex(log, after: req.time))
        }
        let n = Int(req.count)
        var a: Int, b: Int // the page is log[a..<b]
        if before {
            b = hi
            a = max(lo, b - n)
            if a > lo, log[a - 1].dataTime == log[a].dataTime {
                let d = log[a].dataTime
                while a < b, log[a].dataTime == d { a += 1 }
                if a == b { // the run fills the page: take it whole
                    a = max(lo, b - n)
                    while a > lo, log[a - 1].dataTime == d { a -= 1 }
                }
            }
        } else {
            a = lo
            b = min(hi, a + n)
            if b < hi, b > a, log[b].dataTime == log[b - 1].dataTime {
                let d = log[b - 1].dataTime
                while b > a, log[b - 1].dataTime == d { b -= 1 }
                if a == b {
                    b = min(hi, a + n)
                    while b < hi, log[b].dataTime == d { b += 1 }
                }
            }
        }
        let page = log[a..<b]
        let hasMore = before ? a > lo : b < hi
        let syncTime = (before ? page.first?.dataTime : page.last?.dataTime) ?? req.time
        let items: [[UInt8]] = page.map { m in
            let own = m.senderUserId == s.userId
            if let recallTime = store.recalled[m.uid] {
                let ntf = RecallNotificationContent(operatorId: m.senderUserId, recallTime: recallTime,
                                                    originalObjectName: m.objectName, originalMessageUId: m.uid)
                return m.replacedContent(objectName: RecallNotificationContent.objectName, content: ntf.json.serialized(), own: own)
            }
            return m.encoded(own: own, receivedElsewhere: false)
        }
        let body = FastProto.historyOutput(encoded: items, syncTime: syncTime, hasMsg: hasMore ? 1 : 0)
        emit(.pulled(id, userId: s.userId, deviceId: s.deviceId, topic: q.topic, messageUIds: page.map { $0.uid },
                     syncTime: syncTime, finished: !hasMore))
        queryAck(id, messageId: q.messageId, body: body, reliable: true, now: now)
    }

    /// First index of a (dataTime-sorted) log with dataTime > `time`.
    static func firstIndex(_ log: [MessageRecord], after time: Int64) -> Int {
        var lo = 0, hi = log.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if log[mid].dataTime > time { hi = mid } else { lo = mid + 1 }
        }
        return lo
    }

    // MARK: updRRTime

    /// `updRRTime` (SessionMsgReadInput{type, msgTime, channelId}): the user's read time of the
    /// conversation moves forward; answered with an empty QUERYACK. With multi-device sync the
    /// user's other devices learn it as an RC:SRSMsg `{lastMessageSendTime}` — a message "sent" by
    /// the user in that conversation to nobody else: sendbox + sync echoes (private and group).
    mutating func handleReadTime(_ q: Frame.Query, on id: ConnectionID, session s: Session, now: Int64) {
        guard let req = try? q.decodeBody(RMTPSessionMsgReadInput.self) else {
            return rejectQuery(id, q, code: IMErrorCode.invalidParameter.rawValue, now: now)
        }
        let conversation = ConversationKey(ConversationType(req.type), req.channelID)
        let old = store.users[s.userId]?.readTimes[conversation] ?? .min
        store.users[s.userId, default: UserRecord()].readTimes[conversation] = max(old, req.msgTime)
        queryAck(id, messageId: q.messageId, reliable: false, now: now)
        guard config.multiDeviceSync, let topic = Topic.send(to: conversation.type), !req.channelID.isEmpty else { return }
        let content = SyncReadStatusContent(lastMessageSendTime: req.msgTime).json.serialized()
        let flags = config.registry.flags(for: SyncReadStatusContent.objectName) ?? .command
        let m = makeRecord(conversation: conversation, sender: s.userId, senderDevice: s.deviceId,
                           objectName: SyncReadStatusContent.objectName, content: content, flags: flags, clientUniqueId: 0,
                           mentioned: false, noNotification: false, pushAllowed: false, extraContent: nil, now: now)
        emitAccepted(m, recipients: [])
        var up = RMTPUpStreamMessage()
        up.sessionID = UpStreamFlags(persistent: flags.persistent).rawValue
        up.classname = SyncReadStatusContent.objectName
        up.contentBytes = content
        syncEcho(m, topic: topic, upBody: built(up), except: id, now: now)
    }
}
