import IMWire

// CONNECT: authentication, the one-session-per-platform-class rule, kicks and reconnects
// (im-semantics §5; Docs/server.md §2).
extension ServerCore {
    mutating func handleConnect(_ c: Frame.Connect, on id: ConnectionID, now: Int64) {
        guard !inPlace(connections.index(forKey: id)!, { $0.hasSession }) else {
            protocolViolation(id, "CONNECT on an open session", now: now)
            return
        }
        if inPlace(connections.index(forKey: id)!, { $0.connectDeadlineArmed }) {
            connections.values[connections.index(forKey: id)!].connectDeadlineArmed = false
            effect(.cancelTimer(.connectDeadline(id)))
        }
        guard c.protocolName == Frame.Connect.rcloudProtocolName, c.protocolVersion == Frame.Connect.rcloudProtocolVersion else {
            return refuse(id, .badProtocolVersion, now: now)
        }
        guard let (platform, deviceId) = c.platformAndDevice, !deviceId.isEmpty else {
            return refuse(id, .identifierRejected, now: now)
        }
        if let key = c.appKey, key != config.appKey { return refuse(id, .notAuthorized, now: now) }
        if directory.appBlocked { return refuse(id, .appBlocked, now: now) }
        guard let token = c.token else { return refuse(id, .tokenIncorrect, now: now) }
        let userId: String
        if let entry = directory._tokens[token] {
            switch entry.state {
            case .valid: break
            case .expired: return refuse(id, .tokenExpired, now: now)
            case .revoked: return refuse(id, .tokenIncorrect, now: now)
            }
            userId = entry.userId
        } else if let signer = directory.signer {
            // A signed token: right form, right MAC, an account, not expired (31020 / CONNACK 10);
            // anything else is incorrect (31004 / CONNACK 4).
            switch signer.check(token, nowMs: now) {
            case .valid(let u) where directory.accounts.contains(u): userId = u
            case .expired(let u) where directory.accounts.contains(u): return refuse(id, .tokenExpired, now: now)
            default: return refuse(id, .tokenIncorrect, now: now)
            }
        } else {
            return refuse(id, .tokenIncorrect, now: now)
        }
        if directory.bannedUsers.contains(userId) { return refuse(id, .userBlocked, now: now) }

        // One session per platform class.
        if let holder = online[userId]?.slots[platform.rank], holder != id, let held = session(of: holder) {
            if held.deviceId == deviceId {
                // The same device again: its old connection is half-open. Replace it quietly.
                endConnection(holder, reason: .replaced, now: now, closeTransport: true)
            } else if c.isReconnect && c.reconnectKickEnable && !config.bugs.contains(.b12) {
                // A device in automatic retry whose app set reconnectKickEnable finds another
                // session in its slot: refused, the device in use stays (im-semantics §5). The
                // client reports 31023 and stops retrying. B12: the setting is not honoured.
                emit(.reconnectRefused(id, userId: userId, deviceId: deviceId, activeDeviceId: held.deviceId))
                write(id, .connack(Frame.Connack(statusCode: Frame.Connack.otherDeviceLoggedInStatusCode)))
                endConnection(id, reason: .transportClosed, now: now, closeTransport: true)
                return
            } else {
                // A newer login kicks the older session; so does a retry (reconnectKickEnable off,
                // the documented default race — or B12, the setting not honoured).
                kick(holder, byDeviceId: deviceId, now: now)
            }
        }

        sessionCounter += 1
        let sessionId = Self.sessionId(generation: generation, counter: sessionCounter)
        let deviceIndex = registerDevice(userId: userId, deviceId: deviceId, now: now)
        let session = Session(userId: userId, deviceId: deviceId, platform: platform, sessionId: sessionId,
                              deviceIndex: deviceIndex, openedAt: now)
        connections.values[connections.index(forKey: id)!].session = session
        online[userId, default: OnlineUser()].slots[platform.rank] = id
        emit(.sessionOpened(id, userId: userId, deviceId: deviceId, platform: platform, sessionId: sessionId))
        write(id, .connack(Frame.Connack(status: .accepted, session: .init(userId: userId, sessionId: sessionId, timestamp: now))))
    }

    /// `S<generation>-<counter>`, the counter in eight digits: like a real server's opaque ids,
    /// every session id has the same length, so a CONNACK's size — and with it the link's
    /// timing and every draw keyed by it — does not depend on how many sessions other devices
    /// opened before (removing a user must leave the others' runs as they were: Docs/world.md).
    static func sessionId(generation: UInt32, counter: UInt64) -> String {
        let digits = String(counter)
        return "S\(generation)-" + String(repeating: "0", count: max(0, 8 - digits.count)) + digits
    }

    /// CONNACK with a refusal, then close.
    mutating func refuse(_ id: ConnectionID, _ status: ConnackStatus, now: Int64) {
        emit(.connectRejected(id, status: status))
        write(id, .connack(Frame.Connack(status: status)))
        endConnection(id, reason: .transportClosed, now: now, closeTransport: true)
    }

    /// DISCONNECT status 1 to `victim`, then close it.
    mutating func kick(_ victim: ConnectionID, byDeviceId: String, now: Int64) {
        guard let s = session(of: victim) else { return }
        emit(.kicked(victim: victim, userId: s.userId, victimDeviceId: s.deviceId, byDeviceId: byDeviceId))
        write(victim, .disconnect(Frame.Disconnect(status: .kickedByOtherDevice)))
        endConnection(victim, reason: .kicked, now: now, closeTransport: true)
    }

    /// The device's index in the user's device list; a first-seen device gets its history floor
    /// (new-device window) and the entries it will never see are reported as dropped.
    mutating func registerDevice(userId: String, deviceId: String, now: Int64) -> Int32 {
        var user = store.users[userId] ?? UserRecord()
        if let i = user.deviceIndex(deviceId) { return Int32(i) }
        // Only a *new* device of a user who already has one is limited (multi-device sync); the
        // first device of a user gets the whole offline inbox.
        let limited = config.multiDeviceSync && !user.devices.isEmpty
        let floor = limited ? rules.newDeviceHistoryFloor(now: now) : Int64.min
        user.devices.append(DeviceRecord(deviceId: deviceId, historyFloor: floor))
        store.users[userId] = user
        if limited {
            let cut = floor - 1 // entries with dataTime ≤ cut are before the window
            for box in [user.inbox, user.sendbox] {
                let k = box.firstIndex(after: cut)
                for i in 0..<k {
                    let m = box[i].message
                    emit(.dropped(messageUId: m.uid, conversation: m.conversation, userId: userId, reason: .beforeDeviceHistoryWindow))
                }
            }
        }
        return Int32(user.devices.count - 1)
    }
}
