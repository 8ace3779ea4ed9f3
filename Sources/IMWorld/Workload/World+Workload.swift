import IMClient
import IMStore
import IMWire
import SimKernel

extension World {
    func rate(_ kind: WorkloadKind) -> RateValue? {
        guard let w = scenario.workload else { return nil }
        switch kind {
        case .privateMessage: return w.privateRate
        case .groupMessage: return w.groupRate
        case .chatroomMessage: return w.chatroomRate
        case .like: return w.likeRate
        case .churn: return w.churnRate
        case .read: return w.readRate
        case .typing: return w.typingRate
        case .history: return w.historyRate
        case .kvRead: return w.kvReadRate
        case .kvWrite: return w.kvWriteRate
        case .reenter: return w.reenterRate
        case .reconnect: return w.reconnectRate
        case .burstStart, .burstLike, .recall, .rejoin, .historyPage, .reconnectBack, .resend: return nil
        }
    }

    func scheduleWorkload() {
        guard let w = scenario.workload else { return }
        for u in users.indices where users[u].active {
            // Each (user, kind) has its own streams (`workload/<user>/<kind>`): the order here
            // decides nothing but the insertion order of the first events.
            for kind in [WorkloadKind.privateMessage, .groupMessage, .chatroomMessage, .like, .churn, .read, .typing,
                         .history, .kvRead, .kvWrite, .reenter, .reconnect] {
                if kind == .groupMessage && users[u].groups.isEmpty { continue }
                if [.chatroomMessage, .like, .churn, .kvRead, .kvWrite, .reenter].contains(kind) && users[u].rooms.isEmpty { continue }
                scheduleNext(kind, user: u)
            }
        }
        if let b = w.bursts, b.every.duration > .zero {
            sim.schedule(.workload(user: -1, kind: .burstStart), to: worldNode, after: b.every.duration)
        }
    }

    func scheduleNext(_ kind: WorkloadKind, user u: Int, mean: SimDuration? = nil) {
        guard let m = mean ?? rate(kind)?.meanInterval else { return }
        // One arrival draw per occurrence, whatever the occurrence does.
        let at = sim.now + users[u].streams.kinds[Int(kind.rawValue)].arrival.exponential(mean: m)
        guard at < healAt else { return }
        let d = users[u].devices.first ?? 0
        sim.schedule(.workload(user: Int32(u), kind: kind), to: node(d), at: at)
    }

    /// The device a user acts from: the first running one that is connected, else the first
    /// running one (a user may well send while offline; the SDK fails it).
    func actingDevice(_ u: Int) -> Int? {
        let running = users[u].devices.filter { devices[$0].isRunning && devices[$0].isForeground }
        return running.first { devices[$0].status == .connected } ?? running.first
    }

    func textContent(_ u: Int, _ rng: inout RandomStream) -> String {
        let n = rng.below(1_000_000)
        return "{\"content\":\"\(users[u].id) says \(n)\"}"
    }

    func workload(user u: Int, kind: WorkloadKind) {
        if u < 0 {
            burst()
            return
        }
        guard phase == .active else { return }
        // This occurrence's details (peer, content, delays) come from its own stream: a detail
        // skipped here (no acting device) moves nothing else.
        var rng = users[u].streams.kinds[Int(kind.rawValue)].nextDetail(sim.streams)
        defer {
            switch kind {
            case .burstLike, .recall, .rejoin, .burstStart, .historyPage, .reconnectBack, .resend: break
            default: scheduleNext(kind, user: u)
            }
        }
        // The skipped random prefix (`randomFrom`): a chain's occurrence is drawn above and not
        // carried out. Continuations (recall, rejoin, …, kinds without a rate) are consequences
        // of something that ran (a script send's recall included) and run.
        if sim.now < randomFrom, rate(kind) != nil { return }
        switch kind {
        case .historyPage, .reconnectBack, .resend:
            // Continuations of something a device started: not tied to the acting device.
            appBehaviour(user: u, kind: kind)
            runPendingAppCalls()
            return
        default:
            break
        }
        guard let d = actingDevice(u) else { return }
        switch kind {
        case .privateMessage:
            guard let peer = rendezvousPick(users[u].contacts, hashes: users[u].contactHashes, &rng) else { return }
            appCall(d, .send(conversation: ConversationKey(.privateChat, peer), objectName: "RC:TxtMsg",
                             content: textContent(u, &rng), pushText: nil, mentioned: false))
        case .groupMessage:
            guard let g = rendezvousPick(users[u].groups, hashes: users[u].groupHashes, &rng) else { return }
            appCall(d, .send(conversation: ConversationKey(.group, g), objectName: "RC:TxtMsg",
                             content: textContent(u, &rng), pushText: nil, mentioned: false))
        case .chatroomMessage:
            guard let r = users[u].rooms.first else { return }
            appCall(d, .send(conversation: ConversationKey(.chatroom, r), objectName: "RC:TxtMsg",
                             content: textContent(u, &rng), pushText: nil, mentioned: false))
        case .like, .burstLike:
            guard let r = users[u].rooms.first, let w = scenario.workload else { return }
            appCall(d, .send(conversation: ConversationKey(.chatroom, r), objectName: w.likeType,
                             content: "{\"like\":1}", pushText: nil, mentioned: false))
            if kind == .burstLike, let b = w.bursts, let mean = b.rate.meanInterval {
                let next = sim.now + users[u].streams.kinds[Int(WorkloadKind.burstLike.rawValue)].arrival.exponential(mean: mean)
                if next < burstUntil && next < healAt {
                    sim.schedule(.workload(user: Int32(u), kind: .burstLike), to: node(d), at: next)
                }
            }
        case .churn:
            guard let r = users[u].rooms.first else { return }
            appCall(d, .quitChatroom(roomId: r))
            sim.schedule(.workload(user: Int32(u), kind: .rejoin), to: node(d),
                         after: rng.uniform(SimDuration.seconds(1)...SimDuration.seconds(20)))
        case .rejoin:
            guard let r = users[u].rooms.first else { return }
            let count = rooms.first { $0.id == r }?.joinCount ?? 10
            appCall(d, .joinChatroom(roomId: r, messageCount: count))
        case .read:
            // The user opens the first conversation with unread messages.
            guard let conv = (try? devices[d].store.conversationList())?.first(where: { $0.unreadCount > 0 }) else { return }
            let last = conv.latestTime
            if conv.key.type == .privateChat {
                appCall(d, .sendReadReceipt(conversation: conv.key, lastMessageSentTime: last))
            }
            appCall(d, .clearUnread(conversation: conv.key, upToSentTime: last))
        case .typing:
            guard let peer = rendezvousPick(users[u].contacts, hashes: users[u].contactHashes, &rng) else { return }
            appCall(d, .send(conversation: ConversationKey(.privateChat, peer), objectName: "RC:TypSts",
                             content: "{\"typingContentType\":\"RC:TxtMsg\"}", pushText: nil, mentioned: false))
        case .recall:
            for dev in users[u].devices where !devices[dev].recallQueue.isEmpty {
                let id = devices[dev].recallQueue.removeFirst()
                if devices[dev].isRunning { appCall(dev, .recall(messageId: id)) }
                break
            }
        case .history:
            // The user opens a conversation (one of the newest ten) and scrolls back.
            guard users[u].paging == nil, let list = try? devices[d].store.conversationList(),
                  let conv = rng.pick(Array(list.prefix(10))) else { return }
            let pages = scenario.workload?.historyPages ?? 3
            users[u].paging = (d, conv.key, pages - 1)
            appCall(d, .getHistory(conversation: conv.key, beforeMessageId: -1, count: Int32(IMStore.historyPageLimit)))
            if pages > 1 { sim.schedule(.workload(user: Int32(u), kind: .historyPage), to: node(d), after: historyInterval) }
        case .kvRead:
            guard let r = users[u].rooms.first else { return }
            appCall(d, .getChatroomKV(roomId: r))
        case .kvWrite:
            guard let r = users[u].rooms.first else { return }
            let key = ["topic", "pinned", "score", "host", "mode"][Int(rng.below(5))]
            appCall(d, .setChatroomKV(roomId: r, key: key, value: "\(users[u].id)-\(rng.below(1000))", autoDelete: false, force: false))
        case .reenter:
            // Re-entering the room screen joins again while still in the room.
            guard let r = users[u].rooms.first, devices[d].status == .connected else { return }
            let count = rooms.first { $0.id == r }?.joinCount ?? 10
            appCall(d, .joinChatroom(roomId: r, messageCount: count))
        case .reconnect:
            // The user signs out and back in a little later.
            guard devices[d].status == .connected, !users[u].reconnecting.contains(d) else { return }
            deliberatelyOffline.insert(d)
            appCall(d, .disconnect)
            users[u].reconnecting.append(d)
            sim.schedule(.workload(user: Int32(u), kind: .reconnectBack), to: node(d),
                         after: rng.uniform(SimDuration.seconds(2)...SimDuration.seconds(30)))
        case .burstStart, .historyPage, .reconnectBack, .resend:
            break
        }
        runPendingAppCalls()
    }

    var historyInterval: SimDuration { scenario.workload?.historyInterval?.duration ?? .seconds(2) }

    /// The continuation of an app behaviour on the device that started it.
    func appBehaviour(user u: Int, kind: WorkloadKind) {
        switch kind {
        case .historyPage:
            guard let p = users[u].paging else { return }
            guard devices[p.device].isRunning, let before = devices[p.device].historyCursor[p.conversation], p.left > 0 else {
                users[u].paging = nil
                return
            }
            users[u].paging = p.left > 1 ? (p.device, p.conversation, p.left - 1) : nil
            appCall(p.device, .getHistory(conversation: p.conversation, beforeMessageId: before, count: Int32(IMStore.historyPageLimit)))
            if p.left > 1 { sim.schedule(.workload(user: Int32(u), kind: .historyPage), to: node(p.device), after: historyInterval) }
        case .reconnectBack:
            guard !users[u].reconnecting.isEmpty else { return }
            let d = users[u].reconnecting.removeFirst()
            guard devices[d].isRunning else { return }
            deliberatelyOffline.remove(d)
            appCall(d, .connect(token: devices[d].token, timeLimitSeconds: 0))
        case .resend:
            for dev in users[u].devices where !devices[dev].resendQueue.isEmpty {
                let id = devices[dev].resendQueue.removeFirst()
                if devices[dev].isRunning { appCall(dev, .resend(messageId: id)) }
                break
            }
        default:
            break
        }
    }

    /// A like storm: every member of every room sends likes at the burst rate for `length`.
    func burst() {
        guard phase == .active, let b = scenario.workload?.bursts, let mean = b.rate.meanInterval else { return }
        guard sim.now >= randomFrom else {
            // A burst in the skipped random prefix: none now, the next one as scheduled.
            sim.schedule(.workload(user: -1, kind: .burstStart), to: worldNode, after: b.every.duration)
            return
        }
        burstUntil = sim.now + b.length.duration
        for u in users.indices where users[u].active && !users[u].rooms.isEmpty {
            let at = sim.now + users[u].streams.kinds[Int(WorkloadKind.burstLike.rawValue)].arrival.exponential(mean: mean)
            if at < burstUntil {
                sim.schedule(.workload(user: Int32(u), kind: .burstLike), to: node(users[u].devices[0]), at: at)
            }
        }
        sim.schedule(.workload(user: -1, kind: .burstStart), to: worldNode, after: b.every.duration)
    }
}
