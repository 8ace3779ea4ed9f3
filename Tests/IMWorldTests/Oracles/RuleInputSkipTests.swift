import IMClient
import IMWire
import Testing
@testable import IMWorld

/// The chatroom oracle feeds its rejoin and attribute-sync rules only the inputs and effect lists
/// they take (`RejoinRule.takes`, `AttributeSyncRule.takes`): a rule fed everything and one fed
/// only those must find the same things at the same times.
@Suite struct RuleInputSkipTests {
    static let s: Int64 = 1_000_000_000

    /// Inputs neither rule reads (interleaved below with the ones they do).
    static let ignored: [(ClientInput, [Frame])] = [
        (.lifecycle(.foreground), []), (.lifecycle(.background), []), (.networkChanged(available: false), []),
        (.timerFired(.heartbeat), []), (.timerFired(.requestTimeout(messageId: 5)), []),
        (.transport(.bytes([1, 2, 3])), []), (.transport(.bytes([])), [.pingResp()]),
        (.api(.getChatroomKV(roomId: "r")), []),
    ]

    /// Effect lists neither rule reads.
    static let ignoredEffects: [[ClientEffect]] = [
        [], [.send([9], frames: [OutgoingFrame(type: .publish, messageId: 3, topic: "ppMsgP")])],
        [.send([9], frames: [OutgoingFrame(type: .query, messageId: 9, topic: "qryHisMsg"), OutgoingFrame(type: .pingReq)])],
        [.send([9], frames: [])],
    ]

    @Test func ignoredEffectListsAreNotTaken() {
        for list in Self.ignoredEffects {
            #expect(!AttributeSyncRule.takes(list), "\(list)")
            #expect(!RejoinRule.takes(list), "\(list)")
        }
        let pullKV: ClientEffect = .send([], frames: [OutgoingFrame(type: .query, messageId: 5, topic: Topic.pullKV.rawValue)])
        let rejoin: ClientEffect = .send([], frames: [OutgoingFrame(type: .query, messageId: 7, topic: Topic.joinChrmR.rawValue)])
        let join: ClientEffect = .send([], frames: [OutgoingFrame(type: .query, messageId: 8, topic: Topic.joinChrm.rawValue)])
        #expect(AttributeSyncRule.takes([pullKV]) && !RejoinRule.takes([pullKV]))
        #expect(AttributeSyncRule.takes([rejoin]) && RejoinRule.takes([rejoin]))
        #expect(!AttributeSyncRule.takes([join]) && RejoinRule.takes([join]))
        #expect(!AttributeSyncRule.takes([.callback(.connectionStatus(.connected))]) && RejoinRule.takes([.callback(.connectionStatus(.connected))]))
        for both: ClientEffect in [.closeConnection, .callback(.chatroomQuit(roomId: "r")), .callback(.chatroomKicked(roomId: "r"))] {
            #expect(AttributeSyncRule.takes([.send([1], frames: []), both]) && RejoinRule.takes([both]))
        }
        #expect(AttributeSyncRule.takes([.callback(.chatroomKVSynced(roomId: "r"))]))
        #expect(AttributeSyncRule.takes([.callback(.chatroomJoined(roomId: "r"))]))
    }

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
                for list in Self.ignoredEffects + [e] {
                    if !skipping || AttributeSyncRule.takes(list) { out.kv += kv.effects(list, at: t) }
                    if !skipping || RejoinRule.takes(list) { out.rejoin += rejoin.effects(list, at: t) }
                }
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
