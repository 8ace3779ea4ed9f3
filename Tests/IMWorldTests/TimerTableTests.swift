import IMClient
import IMServer
import IMWire
@testable import SimKernel
import Testing
@testable import IMWorld

/// `ClientTimerTable` and `ServerTimerTable` behave as the `[Timer: EventID]` dictionaries they
/// replaced: the same answers for random sets, removes and reads of every kind of timer, and
/// the same events in the same (schedule) order for the app-kill and server-crash cancels.
@Suite struct TimerTableTests {
    static func clientTimer(_ r: inout RandomStream) -> ClientTimer {
        switch r.below(10) {
        case 0: .connackTimeout
        case 1: .heartbeat
        case 2: .pingTimeout
        case 3: .reconnect
        case 4: .backgroundClose
        case 5: .connectTimeLimit
        case 6: .poll
        case 7: .storeRetry
        default: .requestTimeout(messageId: UInt16(r.below(6)))
        }
    }

    static func serverTimer(_ r: inout RandomStream) -> ServerTimer {
        let c = ConnectionID(r.below(8) == 0 ? ServerTimerTable.slotLimit + r.below(3) : r.below(12))
        return switch r.below(8) {
        case 0, 1: .sessionIdle(c)
        case 2: .connectDeadline(c)
        case 3, 4: .queryAckRetry(c, messageId: UInt16(r.below(5)))
        case 5: .offlineExpiry
        case 6: .chatroomAutoDestroy(roomId: "room\(r.below(3))")
        default: r.below(2) == 0 ? .chatroomBanEnds(roomId: "r\(r.below(2))", userId: "u\(r.below(2))")
            : .chatroomMuteEnds(roomId: "r\(r.below(2))", userId: "u\(r.below(2))")
        }
    }

    @Test func clientTableIsTheDictionary() {
        var r = RandomStream(seed: 7)
        for _ in 0..<40 {
            var table = ClientTimerTable(), dict: [ClientTimer: EventID] = [:]
            var sequence: UInt64 = 0
            for _ in 0..<400 {
                let t = Self.clientTimer(&r)
                switch r.below(4) {
                case 0, 1:
                    // The world's re-arm: read (cancel) the old one, then store the new event.
                    #expect(table[t] == dict[t])
                    sequence += 1 + r.below(3)
                    let e = EventID(slot: UInt32(r.below(100)), sequence: sequence)
                    table[t] = e
                    dict[t] = e
                case 2:
                    #expect(table.removeValue(forKey: t) == dict.removeValue(forKey: t))
                default:
                    table[t] = nil
                    dict[t] = nil
                }
                #expect(table[t] == dict[t])
            }
            #expect(table.armedBySchedule == dict.values.sorted { $0.sequence < $1.sequence })
            #expect(table.isEmpty == dict.isEmpty)
        }
    }

    @Test func serverTableIsTheDictionary() {
        var r = RandomStream(seed: 8)
        for _ in 0..<40 {
            var table = ServerTimerTable(), dict: [ServerTimer: EventID] = [:]
            var sequence: UInt64 = 0
            for _ in 0..<600 {
                let t = Self.serverTimer(&r)
                switch r.below(4) {
                case 0, 1:
                    #expect(table[t] == dict[t])
                    sequence += 1 + r.below(3)
                    let e = EventID(slot: UInt32(r.below(100)), sequence: sequence)
                    table[t] = e
                    dict[t] = e
                case 2:
                    #expect(table.removeValue(forKey: t) == dict.removeValue(forKey: t))
                default:
                    table[t] = nil
                    dict[t] = nil
                }
                #expect(table[t] == dict[t])
            }
            #expect(table.armedBySchedule == dict.values.sorted { $0.sequence < $1.sequence })
        }
    }

    /// A server crash cancels every armed timer in schedule order and leaves none.
    @Test func serverCrashCancelsEveryTimer() throws {
        let (scenario, _) = try Scenario.load(pathOrName: "quickstart")
        let world = try World(scenario: scenario, seed: 1)
        world.run(until: SimTime.zero + .seconds(20))
        let armed = world.server.timers.armedBySchedule
        #expect(!armed.isEmpty)
        #expect(armed.allSatisfy { world.sim.isPending($0) })
        world.serverCrash(downFor: .seconds(5))
        #expect(world.server.timers.armedBySchedule.isEmpty)
        #expect(armed.allSatisfy { !world.sim.isPending($0) })
    }
}
