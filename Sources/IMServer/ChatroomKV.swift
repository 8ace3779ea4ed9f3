import IMWire

/// Chatroom attributes (im-semantics §6): at most `kvMaxKeys` live keys, key ≤ 128 characters of
/// `[A-Za-z0-9+=_-]`, value ≤ 4096 Unicode scalars, only the creator updates or deletes a key
/// unless `force`, `kvOpsPerSecond` set/delete operations per room per second, a missing key on
/// delete, and a concurrent-device conflict (Docs/server.md §7.4). Deleted keys stay as tombstones
/// so incremental `pullKV` can report deletions.
struct ChatroomKV: Sendable {
    struct Entry: Sendable, Hashable {
        var value: String
        var creator: String
        var autoDelete: Bool
        /// Strictly increasing per room: the `pullKV` cursor.
        var timestamp: Int64
        /// Server ms and device of the latest change (the conflict rule).
        var changedAt: Int64
        var changedByDevice: String
        var deleted: Bool
    }

    private(set) var entries: [String: Entry] = [:]
    private(set) var liveCount = 0
    private(set) var lastTimestamp: Int64 = 0
    private var opsSecond: Int64 = .min
    private var opsCount = 0

    enum Failure: Error, Equatable {
        case code(Int32)
    }

    static func validKey(_ key: String, maxLength: Int) -> Bool {
        guard !key.isEmpty, key.utf8.count <= maxLength else { return false }
        for b in key.utf8 {
            switch b {
            case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, 0x2B, 0x3D, 0x5F, 0x2D: continue
            default: return false
            }
        }
        return true
    }

    private mutating func nextTimestamp(_ now: Int64) -> Int64 {
        lastTimestamp = max(now, lastTimestamp + 1)
        return lastTimestamp
    }

    /// Counts one set/delete against the per-second budget (tumbling 1 s windows of server time).
    private mutating func consumeOp(now: Int64, limit: Int) -> Bool {
        let second = now >= 0 ? now / 1000 : (now - 999) / 1000
        if second != opsSecond {
            opsSecond = second
            opsCount = 0
        }
        guard limit <= 0 || opsCount < limit else { return false }
        opsCount += 1
        return true
    }

    private func conflicts(_ e: Entry, device: String, now: Int64, windowMs: Int64) -> Bool {
        windowMs > 0 && e.changedByDevice != device && now - e.changedAt < windowMs
    }

    /// setKV. Check order: rate 23425 → key/value 33003 → owner 23424 → conflict 23431 → key limit 23423.
    mutating func set(key: String, value: String, user: String, device: String, autoDelete: Bool, force: Bool,
                      now: Int64, config: ChatroomConfig) throws(Failure) -> Entry {
        guard consumeOp(now: now, limit: config.kvOpsPerSecond) else { throw .code(IMErrorCode.kvRateLimit.rawValue) }
        guard Self.validKey(key, maxLength: config.kvMaxKeyLength),
              value.unicodeScalars.count <= config.kvMaxValueLength else {
            throw .code(IMErrorCode.invalidParameter.rawValue)
        }
        let existing = entries[key]
        if let e = existing, !e.deleted {
            if e.creator != user && !force { throw .code(IMErrorCode.kvNotOwner.rawValue) }
        }
        if let e = existing, conflicts(e, device: device, now: now, windowMs: config.kvConflictWindowMs) {
            throw .code(IMErrorCode.kvConflict.rawValue)
        }
        let isNew = existing == nil || existing!.deleted
        if isNew, liveCount >= config.kvMaxKeys { throw .code(IMErrorCode.kvKeyLimit.rawValue) }
        // A forced overwrite of someone else's key makes the writer its creator.
        let entry = Entry(value: value, creator: user, autoDelete: autoDelete, timestamp: nextTimestamp(now),
                          changedAt: now, changedByDevice: device, deleted: false)
        entries[key] = entry
        if isNew { liveCount += 1 }
        return entry
    }

    /// delKV. Check order: rate 23425 → key 33003 → missing 23427 → owner 23424 → conflict 23431.
    mutating func delete(key: String, user: String, device: String, force: Bool, now: Int64,
                         config: ChatroomConfig) throws(Failure) -> Entry {
        guard consumeOp(now: now, limit: config.kvOpsPerSecond) else { throw .code(IMErrorCode.kvRateLimit.rawValue) }
        guard Self.validKey(key, maxLength: config.kvMaxKeyLength) else { throw .code(IMErrorCode.invalidParameter.rawValue) }
        guard var e = entries[key], !e.deleted else { throw .code(IMErrorCode.kvKeyMissing.rawValue) }
        if e.creator != user && !force { throw .code(IMErrorCode.kvNotOwner.rawValue) }
        if conflicts(e, device: device, now: now, windowMs: config.kvConflictWindowMs) {
            throw .code(IMErrorCode.kvConflict.rawValue)
        }
        e.deleted = true
        e.timestamp = nextTimestamp(now)
        e.changedAt = now
        e.changedByDevice = device
        entries[key] = e
        liveCount -= 1
        return e
    }

    /// Removes `user`'s auto-delete keys (the creator went offline or quit); returns the keys, sorted.
    mutating func removeAutoDelete(of user: String, now: Int64) -> [String] {
        let keys = entries.keys.filter { k in entries[k].map { !$0.deleted && $0.autoDelete && $0.creator == user } ?? false }.sorted()
        for k in keys {
            entries[k]!.deleted = true
            entries[k]!.timestamp = nextTimestamp(now)
            entries[k]!.changedAt = now
            liveCount -= 1
        }
        return keys
    }

    /// `pullKV{timestamp}`: 0 → every live key (a full update); otherwise every change after
    /// `timestamp`, tombstones included; sorted by (timestamp, key).
    func changes(since timestamp: Int64) -> [(key: String, entry: Entry)] {
        let full = timestamp <= 0
        return entries.filter { full ? !$0.value.deleted : $0.value.timestamp > timestamp }
            .map { (key: $0.key, entry: $0.value) }
            .sorted { ($0.entry.timestamp, $0.key) < ($1.entry.timestamp, $1.key) }
    }

    /// Live key/value pairs, sorted by key (a read-only view).
    var live: [(key: String, value: String, creator: String)] {
        entries.filter { !$0.value.deleted }.map { (key: $0.key, value: $0.value.value, creator: $0.value.creator) }
            .sorted { $0.key < $1.key }
    }
}
