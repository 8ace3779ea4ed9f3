import IMWire
import PropertyBased
import Testing
@testable import IMStore

/// SplitMix64: the test's own deterministic source, seeded by the generated input.
struct SplitMix {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
}

/// Random programs of store operations; after every step the conversation rows must agree with
/// the message rows, and the message set with a plain model.
@Suite struct StoreProperties {
    private static let keys = [alice, bob, team]

    private func checkInvariants(_ s: IMStore, dedup: Bool, model: [Int64: String?]) throws {
        var all: [Int64] = []
        for key in Self.keys {
            let rows = try s.snapshot(of: key)
            all += rows.map(\.messageId)
            guard let c = try s.conversation(key) else { continue }
            // Unread arithmetic (knob on) equals a recount of the rows.
            #expect(c.unreadCount == rows.filter(\.isUnreadCounted).count, "\(key)")
            #expect(c.hasUnreadMentioned == rows.contains { $0.isUnreadCounted && $0.flags.contains(.mentioned) }, "\(key)")
            // Latest = greatest (sentTime, messageId).
            let latest = rows.max { ($0.sentTime, $0.messageId) < ($1.sentTime, $1.messageId) }
            #expect(c.latestMessageId == latest?.messageId, "\(key)")
            #expect(c.latestTime == (latest?.sentTime ?? 0), "\(key)")
        }
        #expect(all.sorted() == model.keys.sorted())
        if dedup { #expect(try s.duplicateMessageUIds() == []) }
        for (id, uid) in model.sorted(by: { $0.key < $1.key }) {
            #expect(try s.message(id: id)?.messageUId == uid)
        }
    }

    @Test(arguments: [true, false])
    func conversationsAgreeWithMessages(dedup: Bool) async {
        await propertyCheck(count: 12, input: Gen.uint64(in: 0...UInt64.max)) { seed in
            var rng = SplitMix(state: seed)
            do {
                let s = try memoryStore(dedup: dedup)
                var model: [Int64: String?] = [:]   // messageId → messageUId
                var uidRows: [String: [Int64]] = [:]
                for step in 0..<60 {
                    let key = Self.keys[rng.below(Self.keys.count)]
                    let t = Int64(rng.below(50) * 10)
                    switch rng.below(10) {
                    case 0, 1, 2, 3:
                        let uid = "U\(rng.below(40))"
                        let m = incoming(uid, in: key, at: t, persistent: rng.chance(80) ? .isCounted : .isPersisted,
                                         mentioned: rng.chance(20), status: rng.chance(20) ? .read : .unread)
                        let r = try s.storeReceived(m)
                        let existed = !(uidRows[uid] ?? []).isEmpty
                        #expect(r.isNew == !(dedup && existed))
                        if r.isNew {
                            model[r.messageId] = uid
                            uidRows[uid, default: []].append(r.messageId)
                        }
                    case 4:
                        let id = try s.insertOutgoing(outgoing("o\(step)", in: key, at: t)).messageId
                        model[id] = .some(nil)
                        if rng.chance(70) {
                            let uid = "S\(step)"
                            _ = try s.markSent(messageId: id, messageUId: uid, sentTime: t + Int64(rng.below(20)) - 10)
                            model[id] = uid
                            uidRows[uid, default: []].append(id)
                        }
                    case 5:
                        _ = try s.recall(.messageUId("U\(rng.below(40))"), notificationContent: "{}")
                    case 6:
                        _ = try s.clearUnread(in: key, upTo: t)
                    case 7:
                        let r = try s.clearHistory(in: key, upTo: rng.chance(20) ? 0 : t)
                        for id in r.deletedMessageIds { forget(id, &model, &uidRows) }
                    case 8:
                        if let victim = model.keys.sorted().dropFirst(rng.below(max(1, model.count))).first {
                            let r = try s.deleteMessages(ids: [victim])
                            #expect(r.deletedMessageIds == [victim])
                            forget(victim, &model, &uidRows)
                        }
                    default:
                        _ = try s.applyReadReceipt(in: key, upTo: t)
                    }
                    try checkInvariants(s, dedup: dedup, model: model)
                }
            } catch {
                Issue.record("seed \(seed): \(error)")
            }
        }
    }

    private func forget(_ id: Int64, _ model: inout [Int64: String?], _ uidRows: inout [String: [Int64]]) {
        if let uid = model.removeValue(forKey: id) ?? nil {
            uidRows[uid]?.removeAll { $0 == id }
        }
    }
}
