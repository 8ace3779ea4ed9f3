import IMClient
import IMStore
import IMWire
import SimKernel
import Testing
@testable import IMWorld

// Issue 28: the unread-model failures of the storage sweeps (every bug switch off), each pinned
// to its seed. Both causes are a clearUnread whose store write failed (I/O error window) and was
// owed (`ClientCore+StoreRetry`), retried only at the next input.

/// Per device: when a clearUnread's store write failed, storage windows (start, end), kills,
/// `storeRetry` timers fired; and when the liveness phase began.
private final class ClearTap: WorldObserver {
    var failedClears: [String: [(op: String, at: SimTime)]] = [:]
    var windowStarts: [String: [SimTime]] = [:]
    var windowEnds: [String: [SimTime]] = [:]
    var kills: [String: [SimTime]] = [:]
    var retries: [String: [SimTime]] = [:]
    var healAt: SimTime?

    func world(_ world: World, device d: Int, input: ClientInput, localMs: Int64) {
        if case .timerFired(.storeRetry) = input { retries[world.deviceId(d), default: []].append(world.now) }
    }

    func world(_ world: World, device d: Int, applied: AppliedClientEffects) {
        for case .note(.storeError(let op, _)) in applied.effects where op.hasPrefix("clearUnread") {
            failedClears[world.deviceId(d), default: []].append((op, world.now))
        }
    }

    func world(_ world: World, note: WorldNote) {
        switch note {
        case .fault(.ioError, let d?, true, _), .fault(.diskFull, let d?, true, _):
            windowStarts[world.deviceId(d), default: []].append(world.now)
        case .fault(.ioError, let d?, false, _), .fault(.diskFull, let d?, false, _):
            windowEnds[world.deviceId(d), default: []].append(world.now)
        case .lifecycle(let d, .killed):
            kills[world.deviceId(d), default: []].append(world.now)
        case .phase(.liveness):
            healAt = world.now
        default:
            break
        }
    }
}

/// On one device and conversation: the last clearUnread whose store write failed, whether a retry
/// committed it since, and — at the first input after that failure whose callbacks touch the
/// conversation while the clear is still owed — the stored unread count and the SDK's answer.
private final class OwedCountTap: WorldObserver {
    let device: String
    let conversation: ConversationKey
    var failedAt: SimTime?
    var committed = false
    var judged: (at: SimTime, stored: Int?, shown: Int?)?

    init(device: String, conversation: ConversationKey) {
        self.device = device
        self.conversation = conversation
    }

    func world(_ world: World, device d: Int, applied: AppliedClientEffects) {
        guard world.deviceId(d) == device else { return }
        var touched = false
        for e in applied.effects {
            switch e {
            case .note(.storeError(let op, _)) where op == "clearUnread \(conversation)":
                (failedAt, committed) = (world.now, false)
            case .note(.changed(let c?, _, let what)) where c == conversation && what.contains("retried after a store failure"):
                committed = true
            case .callback(.received(let m, _, _, _)) where m.conversation == conversation:
                touched = true
            default:
                break
            }
        }
        guard touched, let failedAt, world.now > failedAt, !committed, judged == nil else { return }
        judged = (world.now, try? world.store(ofDevice: d).conversation(conversation)?.unreadCount,
                  world.appConversation(ofDevice: d, conversation)?.unreadCount)
    }
}

@Suite struct StorageSweepUnreadTests {
    fileprivate static func swarmRun(_ name: String, seed: UInt64, _ tap: ClearTap) throws -> ScenarioRun {
        try StorageSweepRegressionTests.swarmRun(name, seed: seed, observer: tap)
    }

    /// quickstart-storage --swarm seeds 141 and 320: the app cleared a conversation's unread
    /// during an I/O error window that the liveness heal did not end (the heal ended network
    /// faults only). The failed write stayed owed, the quiet app gave the core no input to retry
    /// it, and the run converged on a disk still failing: the count the app saw was the old one
    /// (unread-model at the end). The heal now ends storage windows, and the owed write is retried
    /// on the `storeRetry` timer.
    @Test("a clearUnread failed in an I/O error window that ran into the heal commits before the end",
          arguments: [(UInt64(141), "bob-phone", ConversationKey(.privateChat, "carol")),
                      (UInt64(320), "carol-phone", ConversationKey(.privateChat, "alice"))])
    func clearFailedAcrossTheHeal(seed: UInt64, device: String, conversation: ConversationKey) throws {
        let tap = ClearTap()
        let run = try Self.swarmRun("quickstart-storage", seed: seed, tap)
        let heal = try #require(tap.healAt)
        // The situation: the clear failed in a window that started before the heal and was still
        // on at it (so the heal is what ended it).
        let failed = try #require(tap.failedClears[device]?.last, "no failed clearUnread on \(device)")
        #expect(failed.op == "clearUnread \(conversation)")
        let windowStart = try #require(tap.windowStarts[device]?.last)
        #expect(windowStart <= failed.at && failed.at < heal)
        #expect(tap.windowEnds[device]?.last == heal, "the window did not run into the heal: \(tap.windowEnds[device] ?? [])")
        #expect(tap.retries[device, default: []].contains { $0 > heal }, "no storeRetry after the heal")
        let d = try #require(run.world.deviceIndex(device))
        #expect(try run.world.store(ofDevice: d).conversation(conversation)?.unreadCount == 0)
        #expect(run.violations.isEmpty, "\(run.violations.map { "\($0.oracle): \($0.detail)" })")
    }

    /// everyday-storage --swarm seed 426: bob cleared private:dave (up to messageId 51) at 445 s
    /// during an I/O error window (444.9–450.7 s). The window ended, but bob's app gave the core no
    /// input before it was killed at 452.8 s, and a kill drops what is owed: after the restart the
    /// history showed messageId 51 unread (unread-model). The `storeRetry` timer commits it
    /// between the window's end and the kill.
    @Test("a clearUnread failed before an app kill commits once the window ends, before the kill (everyday-storage --swarm seed 426)")
    func clearFailedBeforeAKill() throws {
        let tap = ClearTap()
        let run = try Self.swarmRun("everyday-storage", seed: 426, tap)
        let device = "bob-phone", dave = ConversationKey(.privateChat, "dave")
        let failed = try #require(tap.failedClears[device]?.first { $0.op == "clearUnread \(dave)" }, "no failed clearUnread of \(dave)")
        let kill = try #require(tap.kills[device]?.first { $0 > failed.at }, "no kill after the failed clear")
        let windowEnd = try #require(tap.windowEnds[device]?.first { $0 > failed.at })
        #expect(windowEnd < kill)
        // The retry that committed it came from the timer, between the window's end and the kill.
        #expect(tap.retries[device, default: []].contains { $0 > windowEnd && $0 < kill })
        let d = try #require(run.world.deviceIndex(device))
        #expect(try run.world.store(ofDevice: d).conversation(dave)?.unreadCount == 0)
        #expect(!run.violations.contains { $0.oracle == UnreadModelOracle.oracleName },
                "\(run.violations.map { "\($0.oracle): \($0.detail)" })")
    }

    /// everyday-storage --swarm seed 6831: grace-newphone cleared private:frank at 455.925 s on a
    /// full disk (the write owed); 47 ms later a typing status from frank (no store write, so the
    /// retry at the top of that input failed again) touched the conversation, and unread-model
    /// compared the stored count, still 1, with the app's 0. The SDK's unread answers now show an
    /// owed clear as done (`ClientCore.conversation(_:)`, as local history's `showOwedReads`), and
    /// the oracle judges what the SDK answers.
    @Test("the unread count judged while a clearUnread is owed is the one the app asked for (everyday-storage --swarm seed 6831)")
    func countJudgedWhileAClearIsOwed() throws {
        let frank = ConversationKey(.privateChat, "frank")
        let tap = OwedCountTap(device: "grace-newphone", conversation: frank)
        let run = try StorageSweepRegressionTests.swarmRun("everyday-storage", seed: 6831, observer: tap)
        // The situation: the count is judged after the failed clear, before any retry committed it,
        // with the stored count still the old one.
        let failed = try #require(tap.failedAt, "no failed clearUnread of \(frank) on grace-newphone")
        let judged = try #require(tap.judged, "private:frank not touched while its clear was owed")
        #expect(judged.at > failed && judged.at < failed + .milliseconds(500), "judged at \(judged.at), the clear failed at \(failed)")
        #expect(judged.stored == 1)
        #expect(judged.shown == 0)
        #expect(run.violations.isEmpty, "\(run.violations.map { "\($0.oracle): \($0.detail)" })")
    }
}
