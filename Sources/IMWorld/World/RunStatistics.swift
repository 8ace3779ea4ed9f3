import IMClient
import IMServer
import IMWire
import SimKernel

/// Counts what a run did (messages by fate, deliveries, drops by reason) for the summary.
public final class RunStatistics: WorldObserver {
    @exclusivity(unchecked) public private(set) var accepted = 0
    @exclusivity(unchecked) public private(set) var rejected = 0
    @exclusivity(unchecked) public private(set) var fannedOut = 0
    /// New rows stored for received messages (and sync echoes) on devices.
    @exclusivity(unchecked) public private(set) var delivered = 0
    /// Receive callbacks the apps got.
    @exclusivity(unchecked) public private(set) var notified = 0
    @exclusivity(unchecked) public private(set) var sendSucceeded = 0
    @exclusivity(unchecked) public private(set) var sendFailed = 0
    @exclusivity(unchecked) public private(set) var dropped: [DropReason: Int] = [:]
    @exclusivity(unchecked) public private(set) var kicks = 0
    @exclusivity(unchecked) public private(set) var chatroomKicks = 0

    public init() {}

    public func world(_ world: World, device: Int, applied effects: AppliedClientEffects) {
        // Only notes and callbacks count: most inputs have neither.
        guard effects.callbackCount > 0 || effects.noteCount > 0 else { return }
        for e in effects {
            switch e {
            case .note(.stored(_, _, _, _, _, let isNew)) where isNew:
                delivered += 1
            case .callback(.received):
                notified += 1
            case .callback(.sendResult(_, _, _, let error)):
                if error == nil { sendSucceeded += 1 } else { sendFailed += 1 }
            default:
                break
            }
        }
    }

    public func world(_ world: World, serverApplied serverEffects: AppliedServerEffects) {
        guard serverEffects.eventCount > 0 else { return }
        for case .event(let e) in serverEffects {
            switch e {
            case .messageAccepted(let m):
                accepted += 1
                if let reason = m.droppedForEveryone { dropped[reason, default: 0] += 1 }
            case .messageRejected: rejected += 1
            case .fannedOut: fannedOut += 1
            case .dropped(_, _, _, let reason): dropped[reason, default: 0] += 1
            case .kicked: kicks += 1
            case .chatroomLeft(_, _, let reason) where reason == .offlineKick || reason == .banned: chatroomKicks += 1
            default: break
            }
        }
    }

    /// Drops in a fixed order.
    public var droppedByReason: [(DropReason, Int)] {
        DropReason.allCases.compactMap { r in dropped[r].map { (r, $0) } }
    }
}
