import IMClient
import IMServer
import IMWire
import SimKernel

extension World {
    /// The message type registry both sides share: built-ins plus the workload's like type
    /// (a low-priority chatroom type).
    static func registry(_ scenario: Scenario) -> MessageTypeRegistry {
        var r = MessageTypeRegistry()
        var custom: [String] = []
        if let w = scenario.workload, w.likeRate != nil || w.bursts != nil { custom.append(w.likeType) }
        custom += scenario.server.chatroom.lowPriorityTypes + scenario.server.chatroom.whitelistTypes
        for step in scenario.script {
            if case .send(let s) = step.action { custom.append(s.objectName) }
        }
        for name in Set(custom).sorted() where !name.hasPrefix(MessageTypeRegistry.reservedPrefix) && !r.isRegistered(name) {
            let low = scenario.server.chatroom.lowPriorityTypes.contains(name) || name == scenario.workload?.likeType
            // Likes and gifts are shown as an animation and never stored (persistent NONE), as
            // apps register them; other custom types are stored.
            try? r.register(name, flags: MessageTypeFlags(persistent: low ? .none : .isPersisted, offline: false, push: false,
                                                          chatroomPriority: low ? .low : .high))
        }
        return r
    }

    static func clientConfig(_ s: Scenario) -> ClientConfig {
        var c = ClientConfig()
        c.heartbeatInterval = s.client.heartbeatInterval.duration
        c.pingTimeout = s.client.pingTimeout.duration
        c.connackTimeout = s.client.connackTimeout.duration
        c.requestTimeout = s.client.requestTimeout.duration
        c.backgroundCloseAfter = s.client.backgroundCloseAfter.duration
        c.pollInterval = s.client.pollInterval?.duration
        c.reconnectKickEnable = s.client.reconnectKickEnable
        c.pingBeforeFirstPull = s.client.pingBeforeFirstPull
        c.registry = registry(s)
        // The core writes these to its store at start, so they must be in its config.
        c.messageUIdDedup = s.client.storeDedup
        // `recallDecrementsUnread: false` is what the B14 switch does (the core sets the store
        // option on every recall).
        c.bugs = ClientBugs(s.client.bugs + (s.client.recallDecrementsUnread ? [] : [.B14]))
        c.clientUniqueIdClockFloor = s.client.store == .device
        c.restoreOwnRowsFromCopies = s.client.store == .device
        c.repullWindow = s.client.store == .device ? ClientConfig.deviceRepullWindow : 0
        return c
    }

    static func serverConfig(_ s: Scenario) -> ServerConfig {
        var c = ServerConfig()
        let x = s.server
        c.offlineRetentionDays = x.offlineRetentionDays
        c.allowEqualDataTime = x.allowEqualDataTime
        c.delivery = x.delivery == "notify" ? .notify : .direct
        c.pullPageSize = x.pullPageSize
        c.multiDeviceSync = x.multiDeviceSync
        c.newDeviceHistoryDays = x.newDeviceHistoryDays
        c.serverUtcOffsetMinutes = x.serverUtcOffsetMinutes
        c.sessionIdleTimeout = x.sessionIdleTimeout.duration
        c.rateLimitPerSecond = x.rateLimitPerSecond
        c.maxBodyBytes = x.maxBodyBytes
        c.recallWindowMs = x.recallWindow.duration.milliseconds
        c.sensitiveWords = x.sensitiveWords
        c.blacklists = x.blacklists
        c.whitelists = x.whitelists
        c.persistAcrossCrash = x.persistAcrossCrash
        c.registry = registry(s)
        let r = x.chatroom
        c.chatroom.memberLimit = r.memberLimit
        c.chatroom.oneRoomPerUser = r.oneRoomPerUser
        c.chatroom.historySize = r.historySize
        c.chatroom.quotaWindowMs = r.quotaWindow.duration.milliseconds
        c.chatroom.quotaCapacity = r.quotaCapacity
        c.chatroom.quotaReservedHigh = r.quotaReservedHigh
        var low = r.lowPriorityTypes
        if let w = s.workload, w.likeRate != nil || w.bursts != nil, !low.contains(w.likeType) { low.append(w.likeType) }
        c.chatroom.lowPriorityTypes = low
        c.chatroom.whitelistTypes = r.whitelistTypes
        c.chatroom.dropNotifiesSender = r.dropNotifiesSender
        c.chatroom.kickVariant = r.kickVariant == "faq" ? .faq : .spec
        c.chatroom.offlineKickWindowMs = r.offlineKickWindow.duration.milliseconds
        c.chatroom.offlineKickMessages = r.offlineKickMessages
        c.chatroom.autoDestroyAfterMs = r.autoDestroyAfter.duration.milliseconds
        c.chatroom.kvMaxKeys = r.kvMaxKeys
        c.chatroom.kvOpsPerSecond = r.kvOpsPerSecond
        c.chatroom.autoDestroyCountsLeaving = r.autoDestroyCountsLeaving
        c.bugs = ServerBugs(x.bugs)
        return c
    }
}

/// Expands `population` and computes who talks to whom. All draws come from the `population`
/// stream; every collection it returns is ordered.
struct PopulationBuilder {
    let scenario: Scenario
    var rng: RandomStream
    var users: [UserSpec] = []
    var groups: [String: [String]] = [:]
    var userGroups: [String: [String]] = [:]
    var rooms: [ChatroomSpec] = []
    var contacts: [String: [String]] = [:]
    var activeUsers: Set<String> = []
    let streams: RandomStreams

    init(scenario: Scenario, streams: RandomStreams) {
        self.scenario = scenario
        self.streams = streams
        rng = streams.stream("population")
    }

    mutating func build() throws(ScenarioError) {
        users = scenario.users
        for g in scenario.groups { groups[g.id] = g.members }
        rooms = scenario.chatrooms
        if let p = scenario.population {
            let width = String(p.users).count
            let platforms = Platform.allCases.filter { (p.platforms[$0.rawValue] ?? 0) > 0 }
            let weights = platforms.map { UInt64(((p.platforms[$0.rawValue] ?? 0) * 1000).rounded()) }
            let total = weights.reduce(0, +)
            let second = Ratio(probability: p.secondDeviceFraction)
            var ids: [String] = []
            for i in 1...p.users {
                let id = p.idPrefix + pad(i, width)
                ids.append(id)
                var pick = rng.below(max(total, 1))
                var platform = Platform.mobile
                for (k, w) in zip(platforms, weights) {
                    if pick < w { platform = k; break }
                    pick -= w
                }
                var devs = [DeviceSpec(id: "\(id)-\(platform.rawValue)", platform: platform)]
                if rng.chance(second) {
                    let other: Platform = platform == .desktop ? .mobile : .desktop
                    devs.append(DeviceSpec(id: "\(id)-\(other.rawValue)", platform: other))
                }
                users.append(UserSpec(id: id, devices: devs))
            }
            for g in 0..<p.groups {
                var pool = ids
                rng.shuffle(&pool)
                groups["g" + pad(g + 1, 4)] = Array(pool.prefix(max(2, min(p.groupSize, pool.count)))).sorted()
            }
            for r in 0..<p.chatrooms {
                var pool = ids
                rng.shuffle(&pool)
                var room = ChatroomSpec(id: "room" + pad(r + 1, 2),
                                        members: Array(pool.prefix(min(p.chatroomMembers, pool.count))).sorted())
                room.joinCount = 10
                rooms.append(room)
            }
        }
        let known = Set(users.map(\.id))
        for (gid, members) in groups.sorted(by: { $0.key < $1.key }) {
            for m in members {
                guard known.contains(m) else {
                    throw ScenarioError(path: "$.groups", message: "group \(gid): unknown user \"\(m)\"")
                }
                userGroups[m, default: []].append(gid)
            }
        }
        // Private contacts: people who share a group or a room; otherwise everyone else.
        var sets: [String: Set<String>] = [:]
        for members in groups.keys.sorted().map({ groups[$0]! }) + rooms.map(\.members) {
            for m in members { sets[m, default: []].formUnion(members) }
        }
        let all = users.map(\.id).sorted()
        for u in all {
            var c = (sets[u] ?? []).subtracting([u]).sorted()
            if c.isEmpty { c = all.filter { $0 != u } }
            contacts[u] = c
        }
        let fraction = scenario.workload?.activeFraction.ratio ?? .always
        // Per user (by id), so the same users are active whoever else is in the scenario.
        for u in all {
            var active = streams.stream(StreamKey.active(user: u))
            if active.chance(fraction) { activeUsers.insert(u) }
        }
    }
}

/// Zero-padded decimal (never `String(format:)`, which truncates Int on Linux).
func pad(_ n: Int, _ width: Int) -> String {
    let s = String(n)
    return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
}
