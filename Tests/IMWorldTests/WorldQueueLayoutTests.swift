import SimKernel
import Testing
@testable import IMWorld

/// Worlds run on a timing wheel (`World.queueLayout`); the layout only changes what a pop costs,
/// never which event comes next. The same scenario and seed on the plain heap and on other wheel
/// geometries must dispatch the same events: same digest, same count, same time.
@Suite struct WorldQueueLayoutTests {
    func outcome(_ name: String, seed: UInt64, queue: QueueLayout) throws -> [String] {
        let (s, _) = try Scenario.load(pathOrName: name)
        let world = try World(scenario: s, seed: seed, shared: nil, queue: queue)
        _ = world.run(until: SimTime.zero + .seconds(240))
        return ["\(world.sim.digest)", "\(world.sim.counters)", "\(world.now)"]
    }

    @Test(arguments: ["quickstart", "quickstart-storage"])
    func everyLayoutDispatchesTheSameEvents(_ name: String) throws {
        let heap = try outcome(name, seed: 2, queue: .heap)
        #expect(try outcome(name, seed: 2, queue: World.queueLayout) == heap)
        // Buckets far narrower than the timers (most keys beyond the span) and far wider.
        #expect(try outcome(name, seed: 2, queue: .wheel(bucketShift: 12, bucketCount: 64)) == heap)
        #expect(try outcome(name, seed: 2, queue: .wheel(bucketShift: 34, bucketCount: 64)) == heap)
    }

    @Test func worldsRunOnTheWheel() throws {
        let (s, _) = try Scenario.load(pathOrName: "quickstart")
        let world = try World(scenario: s, seed: 1, shared: nil)
        #expect(world.sim.queueLayout == World.queueLayout)
        #expect(World.queueLayout != .heap)
    }
}
