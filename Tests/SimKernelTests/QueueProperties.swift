import PropertyBased
import Testing
@testable import SimKernel

/// Random schedule/cancel programs against a simple sorted-array model.
@Suite struct QueueProperties {
    @Test func queueMatchesModel() async {
        await propertyCheck(count: 60, input: Gen.uint64(in: 0...UInt64.max)) { seed in
            var rng = RandomStream(seed: seed)
            var q = EventQueue<Int>()
            var model: [(time: Int64, seq: Int, id: EventID)] = []
            var popped: [Int] = [], expected: [Int] = []
            var next = 0
            for _ in 0..<400 {
                switch rng.below(4) {
                case 0, 1:
                    let t = rng.uniform(0...50)
                    let id = q.insert(next, to: NodeID(0), at: t)
                    model.append((t, next, id)); next += 1
                case 2:
                    if let pick = rng.pick(model.indices.map { $0 }) {
                        let victim = model.remove(at: pick)
                        let first = q.cancel(victim.id), second = q.cancel(victim.id)
                        #expect(first && !second)
                    }
                default:
                    model.sort { ($0.time, $0.seq) < ($1.time, $1.seq) }
                    if !model.isEmpty { expected.append(model.removeFirst().seq) }
                    if let e = q.popMin() { popped.append(e.payload) }
                }
                #expect(q.liveCount == model.count)
                let consistent = q.checkInvariants()
                #expect(consistent)
            }
            model.sort { ($0.time, $0.seq) < ($1.time, $1.seq) }
            expected += model.map(\.seq)
            while let e = q.popMin() { popped.append(e.payload) }
            #expect(popped == expected)
        }
    }
}
