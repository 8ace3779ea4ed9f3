import IMClient
import IMWire
import Testing
@testable import IMWorld

/// The chatroom oracle feeds its rejoin and attribute-sync rules only the inputs they take
/// (`RejoinRule.takes`, `AttributeSyncRule.takes`): a rule fed every input and one fed only
/// those must find the same things at the same times.
@Suite struct RuleInputSkipTests {
    static let s: Int64 = 1_000_000_000

    /// Inputs neither rule reads (interleaved below with the ones they do).
    static let ignored: [(ClientInput, [Frame])] = [
        (.lifecycle(.foreground), []), (.lifecycle(.background), []), (.networkChanged(available: false), []),
        (.timerFired(.heartbeat), []), (.timerFired(.requestTimeout(messageId: 5)), []),
        (.transport(.bytes([1, 2, 3])), []), (.transport(.bytes([])), [.pingResp()]),
        (.api(.getChatroomKV(roomId: "r")), []),
    ]

    @Test func ignoredInputsAreNotTaken() {
        for (input, inbound) in Self.ignored {
            #expect(!AttributeSyncRule.takes(input, inbound: inbound), "\(input)")
            #expect(!RejoinRule.takes(input), "\(input)")
        }
        #expect(AttributeSyncRule.takes(.transport(.bytes([])), inbound: [.queryAck(Frame.QueryAck(messageId: 5, date: 0))]))
        #expect(AttributeSyncRule.takes(.transport(.opened), inbound: []))
        #expect(!RejoinRule.takes(.transport(.opened)))
        for taken: ClientInput in [.api(.joinChatroom(roomId: "r", messageCount: 10)), .api(.quitChatroom(roomId: "r")),
                                   .transport(.closed(.reset))] {
            #expect(AttributeSyncRule.takes(taken, inbound: []) && RejoinRule.takes(taken))
        }
    }

    /// A join, a sync, a lost connection, a rejoin never refreshed and a session never rejoined:
    /// both rules find the same with and without the ignored inputs.
    @Test func skippingChangesNoFinding() {
        struct Outcome: Equatable {
            var kv: [AttributeSyncRule.Finding] = []
            var rejoin: [RejoinRule.Finding] = []
            var kvDue: [Int64?] = []
            var rejoinDue: [Int64?] = []
        }
        func run(skipping: Bool) -> Outcome {
            var kv = AttributeSyncRule(requestTimeoutNanoseconds: 30 * Self.s)
            var rejoin = RejoinRule()
            var out = Outcome()
            var t: Int64 = 0
            func input(_ i: ClientInput, _ inbound: [Frame] = []) {
                t += Self.s
                for (noise, frames) in Self.ignored {
                    if !skipping || AttributeSyncRule.takes(noise, inbound: frames) { kv.input(noise, inbound: frames, at: t) }
                    if !skipping || RejoinRule.takes(noise) { out.rejoin += rejoin.input(noise, at: t) }
                }
                kv.input(i, inbound: inbound, at: t)
                out.rejoin += rejoin.input(i, at: t)
                out.kvDue.append(kv.nextDue)
                out.rejoinDue.append(rejoin.nextDue)
            }
            func effects(_ e: [ClientEffect]) {
                out.kv += kv.effects(e, at: t)
                out.rejoin += rejoin.effects(e, at: t)
            }
            input(.api(.joinChatroom(roomId: "r", messageCount: 10)))
            effects([.callback(.connectionStatus(.connected)), .callback(.chatroomJoined(roomId: "r")),
                     .send([], frames: [OutgoingFrame(type: .query, messageId: 5, topic: Topic.pullKV.rawValue)])])
            input(.transport(.bytes([])), [.queryAck(Frame.QueryAck(messageId: 5, date: 0))])
            effects([.callback(.chatroomKVSynced(roomId: "r"))])
            input(.transport(.closed(.reset)))
            input(.transport(.opened))
            effects([.callback(.connectionStatus(.connected)),
                     .send([], frames: [OutgoingFrame(type: .query, messageId: 7, topic: Topic.joinChrmR.rawValue)])])
            input(.transport(.bytes([])), [.queryAck(Frame.QueryAck(messageId: 7, date: 0))])
            effects([])
            t += 60 * Self.s
            out.kv += kv.due(at: t)
            input(.transport(.closed(.reset)))
            input(.transport(.opened))
            effects([.callback(.connectionStatus(.connected))])
            t += 60 * Self.s
            out.rejoin += rejoin.due(at: t)
            return out
        }
        let all = run(skipping: false)
        #expect(all == run(skipping: true))
        #expect(all.kv.contains { $0.refreshMissing }, "the missing refresh is found")
        #expect(!all.rejoin.isEmpty, "the missing rejoin is found")
    }
}
