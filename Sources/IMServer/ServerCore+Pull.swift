import IMWire

// QUERY dispatch and `pullMsg` (wire-protocol §4; Docs/server.md §6).
extension ServerCore {
    mutating func handleQuery(_ q: Frame.Query, on id: ConnectionID, session s: Session, now: Int64) {
        guard let topic = q.knownTopic, topic.kind == .query else {
            return rejectQuery(id, q, code: IMErrorCode.invalidParameter.rawValue, now: now)
        }
        switch topic {
        case .pullMsg: handlePullMsg(q, on: id, session: s, now: now)
        case .joinChrm, .joinChrmR: handleJoin(q, on: id, session: s, now: now)
        case .exitChrm: handleExit(q, on: id, session: s, now: now)
        case .chrmPull: handleChatroomPull(q, on: id, session: s, now: now)
        case .setKV: handleKVChange(q, delete: false, on: id, session: s, now: now)
        case .delKV: handleKVChange(q, delete: true, on: id, session: s, now: now)
        case .pullKV: handlePullKV(q, on: id, session: s, now: now)
        case .qryPMsg, .qryGMsg, .qryCHMsg: handleHistory(q, topic: topic, on: id, session: s, now: now)
        case .updRRTime: handleReadTime(q, on: id, session: s, now: now)
        default: rejectQuery(id, q, code: IMErrorCode.invalidParameter.rawValue, now: now)
        }
    }

    /// `pullMsg`: inbox entries with dataTime > syncTime and (with `isPullSend` and multi-device
    /// sync) own messages with dataTime > sendBoxSyncTime, merged in (dataTime, messageUId) order,
    /// at most `pullPageSize` — but a page never ends inside a run of equal dataTimes: the run is
    /// left for the next page, or, when it alone fills the page, taken whole (so a page can exceed
    /// the size). Expired entries and entries before the device's history floor are never returned.
    mutating func handlePullMsg(_ q: Frame.Query, on id: ConnectionID, session s: Session, now: Int64) {
        guard let req = try? q.decodeBody(RMTPSyncRequestMsg.self) else {
            return rejectQuery(id, q, code: IMErrorCode.invalidParameter.rawValue, now: now)
        }
        let built = Self.buildPullPage(store.users[s.userId], session: s, request: req, base: rules.retentionMs,
                                       now: now, pageSize: config.pullPageSize, includeSent: req.isPullSend && config.multiDeviceSync)
        // Mark what this device now has (status bit 0x02, "unseen" at expiry).
        for i in built.inboxIndices { store.users[s.userId]!.inbox.markReceived(i, by: s.deviceIndex) }
        let (items, uids, syncTime, finished) = (built.items, built.uids, built.syncTime, built.finished)
        let body = FastProto.downStreamMessages(encoded: items, syncTime: syncTime, finished: finished)
        emit(.pulled(id, userId: s.userId, deviceId: s.deviceId, topic: q.topic, messageUIds: uids, syncTime: syncTime, finished: finished))
        queryAck(id, messageId: q.messageId, body: body, reliable: true, now: now)
    }

    struct PullPage {
        var items: [[UInt8]] = []
        var uids: [String] = []
        var inboxIndices: [Int] = []
        var syncTime: Int64
        var finished: Bool
    }

    /// Reads one page (no mutation: the caller marks the returned inbox entries afterwards, so the
    /// user's mailbox is never copied).
    static func buildPullPage(_ user: UserRecord?, session s: Session, request req: RMTPSyncRequestMsg, base retentionMs: Int64,
                              now: Int64, pageSize: Int, includeSent: Bool) -> PullPage {
        guard let user else { return PullPage(syncTime: req.syncTime, finished: true) }
        let floor = user.devices.indices.contains(Int(s.deviceIndex)) ? user.devices[Int(s.deviceIndex)].historyFloor : .min
        // dataTime ≤ lower: expired, or before the device's history floor.
        let lower = max(now - retentionMs, floor == .min ? .min : floor - 1)
        let i0 = user.inbox.firstIndex(after: max(req.syncTime, lower))
        let j0 = includeSent ? user.sendbox.firstIndex(after: max(req.sendBoxSyncTime, lower)) : user.sendbox.count
        let picks = PullPager.page(user.inbox, from: i0, user.sendbox, from: j0, size: pageSize)
        var page = PullPage(syncTime: req.syncTime, finished: picks.finished)
        page.items.reserveCapacity(picks.picks.count)
        page.uids.reserveCapacity(picks.picks.count)
        for p in picks.picks {
            if p.inbox {
                let e = user.inbox[p.index]
                page.items.append(e.message.encoded(own: false, receivedElsewhere: e.receivedElsewhere(than: s.deviceIndex)))
                page.uids.append(e.message.uid)
                page.inboxIndices.append(p.index)
                page.syncTime = e.dataTime
            } else {
                let m = user.sendbox[p.index].message
                page.items.append(m.encoded(own: true, receivedElsewhere: false))
                page.uids.append(m.uid)
            }
        }
        return page
    }
}

/// Paging over two sorted mailboxes (inbox, sendbox) merged in (dataTime, messageUId) order.
enum PullPager {
    struct Result: Equatable {
        var picks: [Pick]
        var finished: Bool
    }

    struct Pick: Equatable {
        var inbox: Bool
        var index: Int
    }

    /// At most `size` picks, except that a page never ends inside a run of equal dataTimes: the run
    /// is left for the next page or, when it starts the page, taken whole. With cursors at the
    /// page's last dataTime the next request therefore neither skips nor repeats a message.
    static func page(_ a: Mailbox, from i0: Int, _ b: Mailbox, from j0: Int, size: Int) -> Result {
        func next(_ i: Int, _ j: Int) -> Pick? {
            switch (i < a.count, j < b.count) {
            case (false, false): return nil
            case (true, false): return Pick(inbox: true, index: i)
            case (false, true): return Pick(inbox: false, index: j)
            case (true, true): return a[i].precedes(b[j].dataTime, b[j].seq) ? Pick(inbox: true, index: i) : Pick(inbox: false, index: j)
            }
        }
        func time(_ p: Pick) -> Int64 { p.inbox ? a[p.index].dataTime : b[p.index].dataTime }
        func advance(_ p: Pick, _ i: inout Int, _ j: inout Int) { if p.inbox { i += 1 } else { j += 1 } }

        var picks: [Pick] = []
        var (i, j) = (i0, j0)
        while picks.count < max(1, size), let n = next(i, j) {
            picks.append(n)
            advance(n, &i, &j)
        }
        if let last = picks.last, let n = next(i, j), time(n) == time(last) {
            let d = time(last)
            while let l = picks.last, time(l) == d { picks.removeLast() }
            if picks.isEmpty {
                (i, j) = (i0, j0)
                while let n = next(i, j), time(n) == d {
                    picks.append(n)
                    advance(n, &i, &j)
                }
            } else {
                i = picks.last(where: { $0.inbox }).map { $0.index + 1 } ?? i0
                j = picks.last(where: { !$0.inbox }).map { $0.index + 1 } ?? j0
            }
        }
        return Result(picks: picks, finished: next(i, j) == nil)
    }
}
