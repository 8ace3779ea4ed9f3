import IMServer
import IMWire

/// The chatroom rules the server enforces, re-derived from its events alone (im-semantics §6):
/// the offline auto-kick rule — who must be removed by each room message, and nobody else — and
/// the attribute (KV) limits and ownership. Fed by `ChatroomOracle`; returns what it finds wrong.
/// Lookups only: no Dictionary is iterated except through sorted keys.
struct ChatroomRuleModel {
    private struct Member {
        var sessions: [ConnectionID] = []
        var offlineSince: Int64?
        var messages = 0
        var faqClockStart: Int64?
    }

    /// room → user → member (only members seen joining since the start or the last restart).
    private var members: [String: [String: Member]] = [:]
    private var deviceConnection: [String: ConnectionID] = [:]
    /// Offline kicks of the current effect batch, per room (the server removes them before it
    /// emits the message that kicked them).
    private var pendingKicks: [String: [String]] = [:]
    /// room → key → creator.
    private var keyCreator: [String: [String: String]] = [:]
    /// "room\u{0}key\u{0}user" → the force flag of that user's latest request for the key.
    private var forced: [String: Bool] = [:]
    /// After a server restart the attributes it kept have unknown creators: no KV checks.
    private var kvUnknown = false

    /// The scenario's knobs (`kvMaxKeys`, `kvMaxKeyLength`; im-semantics §6 defaults 100 / 128).
    var maxKeys = 100
    var maxKeyLength = 128

    // MARK: Membership and the offline rule

    mutating func sessionOpened(_ c: ConnectionID, device: String) { deviceConnection[device] = c }

    mutating func joined(room: String, user: String, device: String) {
        guard let c = deviceConnection[device] else { return }
        var m = members[room, default: [:]][user] ?? Member()
        m.sessions.removeAll { $0 == c }
        m.sessions.append(c)
        m.offlineSince = nil
        m.messages = 0
        m.faqClockStart = nil
        members[room, default: [:]][user] = m
    }

    mutating func sessionClosed(_ c: ConnectionID, user: String, now: Int64) {
        for room in members.keys.sorted() {
            guard var m = members[room]?[user], !m.sessions.isEmpty else { continue }
            m.sessions.removeAll { $0 == c }
            if m.sessions.isEmpty { m.offlineSince = now; m.messages = 0; m.faqClockStart = nil }
            members[room]![user] = m
        }
    }

    mutating func left(room: String, user: String, reason: ChatroomLeaveReason) {
        if reason == .offlineKick {
            pendingKicks[room, default: []].append(user)
        } else {
            members[room]?[user] = nil
        }
    }

    mutating func destroyed(room: String) {
        members[room] = nil
        keyCreator[room] = nil
        pendingKicks[room] = nil
    }

    /// Sessions and (possibly) memberships are gone: forget everything, check again from the
    /// next joins.
    mutating func restarted() {
        members = [:]
        pendingKicks = [:]
        keyCreator = [:]
        kvUnknown = true
    }

    /// A message was produced in `room` at server time `now`: the offline members the rule removes
    /// must be exactly those the server removed. Returns one line per difference.
    mutating func messageProduced(room: String, now: Int64, config: ChatroomConfig, whitelist: Set<String>) -> [String] {
        let kicked = Set(pendingKicks.removeValue(forKey: room) ?? [])
        var problems: [String] = []
        guard let roomMembers = members[room] else { return [] }
        for user in roomMembers.keys.sorted() {
            var m = roomMembers[user]!
            var due = false
            if let t0 = m.offlineSince, !whitelist.contains(user) {
                switch config.kickVariant {
                case .spec:
                    if now - t0 >= config.offlineKickWindowMs { due = true } else {
                        m.messages += 1
                        due = m.messages >= config.offlineKickMessages
                    }
                case .faq:
                    let t1 = m.faqClockStart ?? now
                    m.faqClockStart = t1
                    if now - t1 >= config.offlineKickWindowMs { due = true } else {
                        m.messages += 1
                        due = m.messages >= config.faqOfflineKickMessages
                    }
                }
            }
            let wasKicked = kicked.contains(user)
            if due && !wasKicked {
                problems.append("\(user) offline since \(m.offlineSince!) ms (\(m.messages) room message(s) since) should have been " +
                                "removed by the offline rule at this message (\(config.kickVariant))")
            } else if wasKicked && !due {
                let state = m.offlineSince.map { "offline only since \($0) ms, \(m.messages) message(s)" } ?? "online"
                problems.append("\(user) removed by the offline rule but \(state)\(whitelist.contains(user) ? ", whitelisted" : "")")
            }
            members[room]![user] = wasKicked ? nil : m
        }
        return problems
    }

    // MARK: Attributes

    mutating func kvRequest(room: String, key: String, user: String, force: Bool) {
        forced["\(room)\u{0}\(key)\u{0}\(user)"] = force
    }

    /// A key was set or deleted by `user`. Returns what breaks the limits or the ownership rule.
    mutating func kvChanged(room: String, key: String, user: String, deleted: Bool) -> [String] {
        guard !kvUnknown else { return [] }
        var problems: [String] = []
        let creator = keyCreator[room]?[key]
        if let creator, creator != user, forced["\(room)\u{0}\(key)\u{0}\(user)"] == false {
            problems.append("\(user) \(deleted ? "deleted" : "changed") key \"\(key)\" of \(creator) without force (23424 expected)")
        }
        if deleted {
            keyCreator[room]?[key] = nil
            return problems
        }
        if creator == nil {
            keyCreator[room, default: [:]][key] = user
            if key.utf8.count > maxKeyLength || key.isEmpty || !key.utf8.allSatisfy(Self.isKeyByte) {
                problems.append("key \"\(key)\" accepted: keys are 1–\(maxKeyLength) chars of [A-Za-z0-9+=_-] (23423/33003)")
            }
            let n = keyCreator[room]!.count
            if n > maxKeys { problems.append("room holds \(n) keys, more than \(maxKeys) (23423 expected)") }
        }
        return problems
    }

    private static func isKeyByte(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x2B || b == 0x3D || b == 0x5F || b == 0x2D
    }
}
