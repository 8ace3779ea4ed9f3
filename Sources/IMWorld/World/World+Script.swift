import IMClient
import IMServer
import IMStore
import IMWire
import SimKernel

extension World {
    func runScript(step i: Int, repeatIndex: Int) {
        guard phase != .finished else { return }
        let step = scenario.script[i]
        let d = step.device.flatMap { deviceIndexById[$0] }
        if repeatIndex == 0 { note(.script(step: i, action: step.action.kind.rawValue)) }
        switch step.action {
        case .connect(let limit):
            guard let d else { return }
            deliberatelyOffline.remove(d)
            if !devices[d].isRunning { appStart(d) }
            appCall(d, .connect(token: devices[d].token, timeLimitSeconds: limit))
        case .disconnect:
            guard let d else { return }
            deliberatelyOffline.insert(d)
            appCall(d, .disconnect)
        case .logout:
            guard let d else { return }
            deliberatelyOffline.insert(d)
            appCall(d, .logout)
        case .send(let s):
            guard let d else { return }
            let content: String
            if let c = s.content {
                content = c
            } else {
                let escaped = (s.text ?? "").replacingJSONSpecials()
                content = s.count > 1 ? "{\"content\":\"\(escaped) #\(repeatIndex + 1)\"}" : "{\"content\":\"\(escaped)\"}"
            }
            appCall(d, .send(conversation: s.to, objectName: s.objectName, content: content, pushText: nil, mentioned: s.mentionAll))
            if repeatIndex + 1 < s.count {
                sim.schedule(.script(step: Int32(i), repeatIndex: Int32(repeatIndex + 1)), to: worldNode, after: s.interval)
            }
        case .resendLastFailed:
            guard let d, let id = devices[d].lastFailedMessageId else { return }
            appCall(d, .resend(messageId: id))
        case .recallLastSent:
            guard let d, let last = devices[d].lastSentOk else { return }
            appCall(d, .recall(messageId: last.messageId))
        case .read(let conv):
            guard let d else { return }
            let last = (try? devices[d].store.conversation(conv))??.latestTime ?? 0
            if conv.type == .privateChat { appCall(d, .sendReadReceipt(conversation: conv, lastMessageSentTime: last)) }
            appCall(d, .clearUnread(conversation: conv, upToSentTime: last))
        case .readUpTo(let conv, let nth, let receipt):
            guard let d else { return }
            let rows = newestRows(d, conv, atLeast: nth) { _ in true }
            guard rows.count >= nth else { return }
            let upTo = rows[nth - 1].sentTime
            if receipt, conv.type == .privateChat { appCall(d, .sendReadReceipt(conversation: conv, lastMessageSentTime: upTo)) }
            appCall(d, .clearUnread(conversation: conv, upToSentTime: upTo))
        case .recallMessage(let conv, let nth):
            guard let d else { return }
            // The app's own sent messages, newest first, as its history shows them.
            let own = newestRows(d, conv, atLeast: nth) { $0.direction == .send && $0.messageUId != nil && !$0.isRecalled }
            guard own.count >= nth else { return }
            appCall(d, .recall(messageId: own[nth - 1].messageId))
        case .clearUnread(let conv):
            guard let d else { return }
            let last = (try? devices[d].store.conversation(conv))??.latestTime ?? 0
            appCall(d, .clearUnread(conversation: conv, upToSentTime: last))
        case .joinChatroom(let room, let count):
            guard let d else { return }
            appCall(d, .joinChatroom(roomId: room, messageCount: count))
        case .joinExistChatroom(let room, let count):
            guard let d else { return }
            appCall(d, .joinExistChatroom(roomId: room, messageCount: count))
        case .quitChatroom(let room):
            guard let d else { return }
            appCall(d, .quitChatroom(roomId: room))
        case .setKV(let room, let key, let value, let autoDelete, let force):
            guard let d else { return }
            appCall(d, .setChatroomKV(roomId: room, key: key, value: value, autoDelete: autoDelete, force: force))
        case .removeKV(let room, let key, let force):
            guard let d else { return }
            appCall(d, .removeChatroomKV(roomId: room, key: key, force: force))
        case .history(let conv, let count, let pages, let interval):
            guard let d else { return }
            // Page 1 from the newest; each later page continues before the last row shown.
            let before: Int64
            if repeatIndex == 0 {
                before = -1
            } else {
                guard let cursor = devices[d].historyCursor[conv] else { return }
                before = cursor
            }
            appCall(d, .getHistory(conversation: conv, beforeMessageId: before, count: count))
            if repeatIndex + 1 < pages {
                sim.schedule(.script(step: Int32(i), repeatIndex: Int32(repeatIndex + 1)), to: worldNode, after: interval)
            }
        case .getKV(let room):
            guard let d else { return }
            appCall(d, .getChatroomKV(roomId: room))
        case .remoteHistory(let conv, let count, let cursor):
            guard let d else { return }
            // The SDK takes server timestamps (sentTime): the server's clock at that simulated instant.
            switch cursor {
            case .newest: appCall(d, .getRemoteHistory(conversation: conv, beforeTime: 0, count: count))
            case .previous:
                guard let t = devices[d].remoteHistoryCursor[conv] else { return }
                appCall(d, .getRemoteHistory(conversation: conv, beforeTime: t, count: count))
            case .before(let t): appCall(d, .getRemoteHistory(conversation: conv, beforeTime: server.clock.ms(at: SimTime.zero + t), count: count))
            case .after(let t): appCall(d, .getRemoteHistoryAfter(conversation: conv, afterTime: server.clock.ms(at: SimTime.zero + t), count: count))
            }
        case .background:
            if let d { appBackground(d) }
        case .foreground:
            if let d { appForeground(d) }
        case .kill:
            if let d { appKill(d) }
        case .restart:
            if let d { appStart(d) }
        case .network(let state):
            guard let d else { return }
            setNetwork(d, up: state.isUp, changeInterface: state.isUp, notifiedFirst: state == .noneNotified)
        case .clockStep(let by):
            guard let d else { return }
            devices[d].clock.step(byMs: by.milliseconds)
            note(.clockStep(device: d, byMs: by.milliseconds))
        case .partition(let target, let length):
            if target == "server" {
                network.partitionServer(until: sim.now + length)
                note(.fault(.serverPartition, device: nil, started: true, detail: "for \(length) (script)"))
            } else if let t = deviceIndexById[target] {
                network.partition(device: t, until: sim.now + length)
                note(.fault(.partition, device: t, started: true, detail: "for \(length) (script)"))
            }
        case .resetConnection:
            guard let d else { return }
            note(.fault(.reset, device: d, started: true, detail: "(script)"))
            network.reset(device: d)
        case .halfOpenConnection:
            guard let d else { return }
            note(.fault(.halfOpen, device: d, started: true, detail: "(script)"))
            network.halfOpen(device: d)
        case .latencySpike(let factor, let length):
            for t in (d.map { [$0] } ?? Array(devices.indices)) {
                network.spike(device: t, factor: factor, until: sim.now + length)
            }
            note(.fault(.latencySpike, device: d, started: true, detail: "×\(factor) for \(length) (script)"))
        case .serverCrash(let downFor):
            note(.fault(.serverCrash, device: nil, started: true, detail: "down for \(downFor) (script)"))
            serverCrash(downFor: downFor)
        case .powerLoss(let torn, let downFor):
            if let d { powerLoss(d, torn: torn, bootAfter: downFor, script: true) }
        case .storageFault(let kind, let length):
            if let d { storageErrorWindow(kind, device: d, for: length, script: true) }
        case .server(let call):
            guard server.up else { return }
            serverInput(.api(serverCall(call)))
        case .typing(let conv):
            guard let d else { return }
            appCall(d, .send(conversation: conv, objectName: "RC:TypSts", content: "{\"typingContentType\":\"RC:TxtMsg\"}",
                             pushText: nil, mentioned: false))
        }
        runPendingAppCalls()
    }

    func serverCall(_ call: ServerScriptCall) -> ServerAPICall {
        switch call {
        case .banChatroomUser(let r, let u, let d): .banChatroomUser(roomId: r, userId: u, durationMs: d.milliseconds)
        case .muteChatroomUser(let r, let u, let d): .muteChatroomUser(roomId: r, userId: u, durationMs: d.milliseconds)
        case .destroyChatroom(let r): .destroyChatroom(roomId: r)
        case .systemMessage(let u, let t):
            .sendSystemMessage(toUserId: u, objectName: "RC:TxtMsg", content: Array("{\"content\":\"\(t.replacingJSONSpecials())\"}".utf8))
        case .broadcast(let t):
            .broadcast(objectName: "RC:TxtMsg", content: Array("{\"content\":\"\(t.replacingJSONSpecials())\"}".utf8))
        case .addGroupMembers(let g, let u): .addGroupMembers(groupId: g, userIds: u)
        case .removeGroupMembers(let g, let u): .removeGroupMembers(groupId: g, userIds: u)
        case .blockUser(let u, let b): .blockUser(userId: u, blocked: b)
        case .createChatroom(let r): .createChatroom(roomId: r)
        case .keepAliveChatroom(let r, let e): .keepAliveChatroom(roomId: r, enabled: e)
        case .setChatroomWhitelist(let r, let u): .setChatroomUserWhitelist(roomId: r, userIds: u)
        case .setChatroomMessageWhitelist(let t): .setChatroomMessageWhitelist(objectNames: t)
        }
    }

    /// The conversation's newest rows on device `d` matching `keep`, newest first, paged the way
    /// an app scrolls back, until `n` are found or the history ends.
    func newestRows(_ d: Int, _ conv: ConversationKey, atLeast n: Int, _ keep: (StoredMessage) -> Bool) -> [StoredMessage] {
        var out: [StoredMessage] = []
        var before: Int64 = -1
        while out.count < n {
            guard let page = try? devices[d].store.history(in: conv, before: before, count: 20), let last = page.last else { break }
            out += page.filter(keep)
            before = last.messageId
        }
        return out
    }
}

extension String {
    /// The JSON escape of `self`, without the quotes.
    func replacingJSONSpecials() -> String { JSONText.escaped(self) }
}
