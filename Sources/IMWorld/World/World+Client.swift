import IMClient
import IMStore
import IMWire
import SimKernel

extension World {
    /// Feeds one input to a device's client core and applies what it returns.
    func clientInput(_ d: Int, _ input: ClientInput) {
        guard devices[d].core != nil else { return }
        let local = devices[d].clock.wallMs(at: sim.now)
        forEachObserver { $0.world(self, device: d, input: input, localMs: local) }
        let effects = devices[d].core!.handle(input, now: DeviceTime(milliseconds: local))
        applyClientEffects(effects, device: d)
        runPendingAppCalls()
    }

    /// Applies the effects, then tells observers what was applied (with the connections opened),
    /// then folds what the app was told into the digest.
    func applyClientEffects(_ effects: [ClientEffect], device d: Int) {
        var opened: [ConnectionID] = []
        var callbacks = 0, statuses = 0, notes = 0
        applyThenPublish({
            for effect in effects {
                switch effect {
                case .openConnection:
                    opened.append(openConnection(device: d))
                case .send(let bytes, _):
                    clientWrite(device: d, bytes)
                case .closeConnection:
                    network.close(device: d)
                case .setTimer(let timer, let after):
                    let delay = devices[d].clock.simDuration(forLocal: after)
                    devices[d].timers[timer] = sim.rearm(devices[d].timers[timer], .clientTimer(device: Int32(d), timer), to: node(d), after: delay)
                case .cancelTimer(let timer):
                    if let old = devices[d].timers.removeValue(forKey: timer) { sim.cancel(old) }
                case .callback(let cb):
                    callbacks += 1
                    if case .connectionStatus = cb { statuses += 1 }
                    appCallback(cb, device: d)
                case .note:
                    notes += 1
                }
            }
        }, {
            let applied = AppliedClientEffects(effects, openedConnections: opened, callbackCount: callbacks,
                                               statusCallbackCount: statuses, noteCount: notes)
            forEachObserver { $0.world(self, device: d, applied: applied) }
        })
        // After publishing: a trace checkpoint written among these effects' records holds the
        // digest from before them (trace format 1). Nothing else folds while effects are applied.
        guard callbacks > 0 else { return }
        for case .callback(let cb) in effects {
            sim.foldIntoDigest(UInt64(d) << 32 | 0xCA11)
            sim.foldIntoDigest(Self.digestKey(cb))
        }
    }

    /// Calls the app makes in reaction to callbacks run after the SDK finished its current work,
    /// like a real app's callback queue.
    func runPendingAppCalls() {
        guard !inBatch else { return }
        inBatch = true
        while !pendingAppCalls.isEmpty {
            let (d, call) = pendingAppCalls.removeFirst()
            clientInput(d, .api(call))
        }
        inBatch = false
    }

    func appCall(_ d: Int, _ call: ClientAPICall) {
        if case .quitChatroom(let room) = call { devices[d].appQuitRequested.insert(room) }
        pendingAppCalls.append((d, call))
    }

    /// The workload recalls or resends some messages: each own message gets a decision stream.
    var decidesAboutMessages: Bool {
        guard let w = scenario.workload else { return false }
        return !w.recallProbability.ratio.isZero || !(w.resendProbability?.ratio.isZero ?? true)
    }

    /// What the simulated app does with the SDK's callbacks.
    /// (Folded into the digest by `applyClientEffects`.)
    func appCallback(_ cb: AppCallback, device d: Int) {
        switch cb {
        case .connectionStatus(let s):
            devices[d].status = s
        case .connected:
            devices[d].connectedOnce = true
            devices[d].status = .connected
            if !devices[d].joinedRoomsThisAppRun {
                devices[d].joinedRoomsThisAppRun = true
                let user = users[devices[d].userIndex]
                // One room at a time by default: the app joins the first room it belongs to.
                if let roomId = user.rooms.first, let spec = rooms.first(where: { $0.id == roomId }) {
                    appCall(d, .joinChatroom(roomId: roomId, messageCount: spec.joinCount))
                }
            }
        case .connectError:
            devices[d].gaveUp = true
        case .messageInserted(let row):
            devices[d].lastInsertedMessageId = row.messageId
            counters.apiSends += 1
            if decidesAboutMessages, row.messageId != 0 {
                devices[d].messageDecisions[row.messageId] = users[devices[d].userIndex].streams.messageDecisions(
                    sim.streams, conversation: row.conversation, objectName: row.objectName, content: row.content, at: sim.now)
            }
        case .sendResult(let id, let uid, _, let error):
            if error != nil {
                devices[d].lastFailedMessageId = id
                // The user may tap "resend" on the failed message a little later (the message's
                // stream is kept: a resend that fails again is decided on again).
                if id != 0, let p = scenario.workload?.resendProbability?.ratio, !p.isZero,
                   devices[d].messageDecisions[id]?.chance(p) == true {
                    let delay = devices[d].messageDecisions[id]!.uniform(SimDuration.seconds(1)...SimDuration.seconds(30))
                    devices[d].resendQueue.append(id)
                    sim.schedule(.workload(user: Int32(devices[d].userIndex), kind: .resend), to: node(d), after: delay)
                }
            } else if let uid {
                devices[d].lastSentOk = (id, uid)
                if var rng = devices[d].messageDecisions.removeValue(forKey: id),
                   let rate = scenario.workload?.recallProbability.ratio, !rate.isZero, rng.chance(rate) {
                    let delay = rng.uniform(SimDuration.seconds(1)...SimDuration.seconds(90))
                    devices[d].recallQueue.append(id)
                    sim.schedule(.workload(user: Int32(devices[d].userIndex), kind: .recall), to: node(d), after: delay)
                }
            }
        case .history(let conv, let messages):
            // The scroll position: the next page continues before the last row shown (an empty
            // page: the top was reached).
            if let last = messages.last {
                devices[d].historyCursor[conv] = last.messageId
            } else {
                devices[d].historyCursor[conv] = nil
            }
        case .remoteHistory(let conv, let messages, nil):
            // The cloud scroll position: the oldest sentTime shown (an empty page keeps it).
            if let first = messages.first { devices[d].remoteHistoryCursor[conv] = first.sentTime }
        case .chatroomQuit(let room):
            // A quit the app did not ask for (the SDK left the room on disconnect): the app
            // joins its room again on its next `connected`.
            if devices[d].appQuitRequested.remove(room) == nil { devices[d].joinedRoomsThisAppRun = false }
        default:
            break
        }
    }

    // MARK: - App lifecycle

    func appStart(_ d: Int) {
        guard phase != .finished else { return }
        if devices[d].isRunning { return }
        if devices[d].disk != nil, !devices[d].store.isOpen { reopenStore(d) }
        devices[d].core = ClientCore(identity: devices[d].identity, config: clientConfig, store: devices[d].store)
        devices[d].core!.writeBuffers = clientWriteBuffers
        devices[d].lifecycle = .running(foreground: true)
        devices[d].joinedRoomsThisAppRun = false
        devices[d].appQuitRequested = []
        devices[d].historyCursor = [:]
        devices[d].remoteHistoryCursor = [:]
        devices[d].gaveUp = false
        note(.lifecycle(device: d, .started))
        if devices[d].autoConnect {
            clientInput(d, .api(.connect(token: devices[d].token, timeLimitSeconds: 0)))
        }
    }

    func appKill(_ d: Int) {
        guard devices[d].isRunning else { return }
        // The OS closes the app's sockets (FIN to the server) and its timers die with it.
        network.close(device: d)
        for id in devices[d].timers.armedBySchedule { sim.cancel(id) }
        devices[d].timers = ClientTimerTable()
        devices[d].core = nil
        // The process dies: on a simulated device what it wrote stays, nothing more happens to
        // the files; the next process opens them (and recovers the WAL).
        if devices[d].disk != nil { reopenStore(d) }
        devices[d].lifecycle = .killed
        devices[d].status = .unconnected
        counters.appKills += 1
        note(.lifecycle(device: d, .killed))
    }

    func appBackground(_ d: Int) {
        guard devices[d].isForeground else { return }
        devices[d].lifecycle = .running(foreground: false)
        note(.lifecycle(device: d, .background))
        clientInput(d, .lifecycle(.background))
    }

    func appForeground(_ d: Int) {
        guard devices[d].isRunning, !devices[d].isForeground else { return }
        devices[d].lifecycle = .running(foreground: true)
        note(.lifecycle(device: d, .foreground))
        clientInput(d, .lifecycle(.foreground))
    }

    func setNetwork(_ d: Int, up: Bool, changeInterface: Bool = false, notifiedFirst: Bool = false) {
        if !up {
            guard network.isInterfaceUp(device: d) else { return }
            network.setInterface(device: d, up: false)
            if notifiedFirst {
                // The socket is dead (nothing more crosses it) but the SDK hears of the network
                // first and closes it itself: its error is never delivered.
                _ = network.dropLocal(device: d)
                note(.network(device: d, up: false))
                clientInput(d, .networkChanged(available: false))
                return
            }
            dropLocalConnection(d)
            note(.network(device: d, up: false))
            clientInput(d, .networkChanged(available: false))
        } else {
            if network.isInterfaceUp(device: d) && !changeInterface { return }
            if network.isInterfaceUp(device: d) { dropLocalConnection(d) }   // wifi ↔ cellular: the old socket dies
            network.setInterface(device: d, up: true)
            note(.network(device: d, up: true))
            clientInput(d, .networkChanged(available: true))
        }
    }
}

extension World {
    /// The key fields of what the app is told (ids, times, codes, a hash of content), folded into
    /// the determinism digest. Rare callbacks fold their whole description.
    static func digestKey(_ cb: AppCallback) -> UInt64 {
        func message(_ m: StoredMessage) -> UInt64 {
            var h = Digest64()
            h.fold(m.messageId)
            h.fold(m.messageUId ?? "")
            h.fold(conversationHash(m.conversation))
            h.fold(m.senderUserId)
            h.fold(m.objectName)
            h.fold(m.content)
            h.fold(m.sentTime)
            h.fold(m.receivedTime)
            return h.value
        }
        var h = Digest64()
        switch cb {
        case .connectionStatus(let s):
            h.fold(UInt64(1))
            h.fold(s.description)
        case .connected(let user):
            h.fold(UInt64(2))
            h.fold(user)
        case .connectError(let code):
            h.fold(UInt64(3))
            h.fold(Int64(code))
        case .messageInserted(let m):
            h.fold(UInt64(4))
            h.fold(message(m))
        case .sendResult(let id, let uid, let sentTime, let error):
            h.fold(UInt64(5))
            h.fold(id)
            h.fold(uid ?? "")
            h.fold(sentTime)
            h.fold(Int64(error ?? 0))
        case .received(let m, let left, let offline, let hasPackage):
            h.fold(UInt64(6))
            h.fold(message(m))
            h.fold(UInt64(left) << 2 | (offline ? 2 : 0) | (hasPackage ? 1 : 0))
        case .readReceipt(let conversation, let time), .syncReadStatus(let conversation, let time):
            h.fold(UInt64(7))
            h.fold(conversationHash(conversation))
            h.fold(time)
        default:
            h.fold(UInt64(8))
            h.fold(describedHash(cb))
        }
        return h.value
    }

    /// `StableHash.fnv1a(c.description)` without building the description.
    static func conversationHash(_ c: ConversationKey) -> UInt64 {
        let h = StableHash.fnv1a(continuing: StableHash.basis, c.type.description)
        return StableHash.fnv1a(continuing: StableHash.fnv1a(continuing: h, byte: UInt8(ascii: ":")), c.targetId)
    }

    /// `StableHash.fnv1a(String(describing: cb))`: the common payload-light callbacks are spelled
    /// out as the runtime's reflection prints them (which costs tens of thousands of
    /// instructions per callback); the others are described by reflection.
    static func describedHash(_ cb: AppCallback) -> UInt64 {
        StableHash.fnv1a(describedForDigest(cb))
    }

    /// `String(describing: cb)`, spelled out for the callbacks of plain ids, codes and
    /// conversations (`DigestContentTests.callbackDescriptionsAreTheReflectedOnes`).
    static func describedForDigest(_ cb: AppCallback) -> String {
        func q(_ s: String) -> String { s.debugDescription }
        func opt(_ e: Int32?) -> String { e.map { "Optional(" + String($0) + ")" } ?? "nil" }
        switch cb {
        case .dbOpened(let code): return "dbOpened(code: " + String(code) + ")"
        case .recalled(let id, let c): return "recalled(messageId: " + String(id) + ", conversation: " + c.description + ")"
        case .recallResult(let id, let e): return "recallResult(messageId: " + String(id) + ", error: " + opt(e) + ")"
        case .chatroomJoined(let r): return "chatroomJoined(roomId: " + q(r) + ")"
        case .chatroomJoinFailed(let r, let code): return "chatroomJoinFailed(roomId: " + q(r) + ", code: " + String(code) + ")"
        case .chatroomQuit(let r): return "chatroomQuit(roomId: " + q(r) + ")"
        case .chatroomKicked(let r): return "chatroomKicked(roomId: " + q(r) + ")"
        case .chatroomDestroyed(let r): return "chatroomDestroyed(roomId: " + q(r) + ")"
        case .chatroomKVSynced(let r): return "chatroomKVSynced(roomId: " + q(r) + ")"
        case .chatroomKVResult(let r, let k, let e):
            return "chatroomKVResult(roomId: " + q(r) + ", key: " + q(k) + ", error: " + opt(e) + ")"
        default: return String(describing: cb)
        }
    }
}
