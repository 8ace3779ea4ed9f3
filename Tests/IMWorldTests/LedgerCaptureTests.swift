import Foundation
import IMStore
import IMWire
import SimKernel
import Testing
@testable import IMWorld

/// `Ledger.capture` reads each store with one statement (`IMStore.ledgerConversations()`); it
/// must give the ledger the conversation list and the history-ordered messages give.
@Suite struct LedgerCaptureTests {
    /// The ledger as read through `conversationList()` and `allMessagesInHistoryOrder`.
    static func reference(_ run: ScenarioRun) throws -> Ledger {
        let world = run.world
        let epoch = world.scenario.epochMs ?? Scenario.defaultEpochMs
        let devices = try (0..<world.deviceCount).map { d in
            let store = world.store(ofDevice: d)
            let all = try store.allMessagesInHistoryOrder(excludingChatrooms: true)
            let convs = try store.conversationList().map { c in
                Ledger.ConversationLedger(conversation: c.key.description, unread: c.unreadCount,
                                          messages: (all[c.key] ?? []).map { m in
                    Ledger.MessageLedger(
                        uid: m.messageUId, from: m.senderUserId, direction: m.direction == .send ? "out" : "in",
                        type: m.objectName, sentTime: m.sentTime - epoch, status: m.sentStatus.description,
                        read: m.receivedStatus.contains(.read), content: Digest64.hex(StableHash.fnv1a(m.content)))
                })
            }
            return Ledger.DeviceLedger(device: world.deviceId(d), user: world.userId(ofDevice: d),
                                       connection: run.statuses.statuses(ofDevice: d),
                                       conversations: convs.sorted { $0.conversation < $1.conversation })
        }
        return Ledger(scenario: world.scenario.name, seed: world.seed, devices: devices)
    }

    @Test func equalsTheConversationListWithHistoryOrderedMessages() throws {
        let (s, _) = try Scenario.load(pathOrName: "quickstart")
        let run = try ScenarioRun(scenario: s, seed: 5)
        run.run()
        let stores = (0..<run.world.deviceCount).map { run.world.store(ofDevice: $0) }
        // The run left chatroom messages in stores, which the ledger leaves out.
        #expect(try stores.contains { try $0.allMessagesInHistoryOrder().keys.contains { $0.type == .chatroom } })
        let ledger = run.ledger()
        #expect(ledger.devices.contains { !$0.conversations.isEmpty })
        #expect(ledger == (try Self.reference(run)))
        #expect(ledger.compactJSON() == (try Self.reference(run)).compactJSON())
    }

    /// A trace recorder reads the stores (`Ledger.read`) on the simulation thread and builds the
    /// ledger on its writer thread: the reading alone is plain values, and what it builds is the capture.
    @Test func aReadingBuiltOnAnotherThreadIsTheCapture() throws {
        let (s, _) = try Scenario.load(pathOrName: "quickstart")
        let run = try ScenarioRun(scenario: s, seed: 5)
        run.run()
        let reading = Ledger.read(run.world, statuses: run.statuses)
        let built = Locked<Ledger?>(nil)
        let thread = Thread { built.set(reading.ledger()) }
        thread.start()
        while built.get() == nil { Thread.sleep(forTimeInterval: 0.001) }
        #expect(built.get() == run.ledger())
        #expect(built.get()?.compactJSON() == run.ledger().compactJSON())
    }
}

private final class Locked<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: T
    init(_ v: T) { value = v }
    func get() -> T { lock.lock(); defer { lock.unlock() }; return value }
    func set(_ v: T) { lock.lock(); value = v; lock.unlock() }
}
