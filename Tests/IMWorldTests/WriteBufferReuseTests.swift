import IMClient
import IMServer
import IMWire
import SimKernel
import Testing
@testable import IMWorld

/// The world hands delivered write buffers back to the cores (`WriteBufferPool`): only their
/// storage is reused, so every core reads exactly the bytes written to its connection.
@Suite struct WriteBufferReuseTests {
    /// Per connection and direction: the bytes written (as the effects carried them, copied at
    /// the time) and the bytes the other core was given.
    final class Wire: WorldObserver {
        var up: [ConnectionID: [UInt8]] = [:], down: [ConnectionID: [UInt8]] = [:]
        var gotUp: [ConnectionID: [UInt8]] = [:], gotDown: [ConnectionID: [UInt8]] = [:]
        var reads = 0
        func world(_ world: World, device: Int, applied effects: AppliedClientEffects) {
            guard let c = world.network.links[device].connection else { return }
            for case .send(let bytes, _) in effects { up[ConnectionID(UInt64(c)), default: []] += Array(bytes) }
        }
        func world(_ world: World, serverApplied effects: AppliedServerEffects) {
            for case .send(let id, let bytes, _) in effects { down[id, default: []] += Array(bytes) }
        }
        func world(_ world: World, serverInput: ServerInput, serverMs: Int64) {
            if case .bytes(let id, let bytes) = serverInput { gotUp[id, default: []] += Array(bytes); reads += 1 }
        }
        func world(_ world: World, device: Int, input: ClientInput, localMs: Int64) {
            guard case .transport(.bytes(let bytes)) = input, let c = world.network.links[device].connection else { return }
            gotDown[ConnectionID(UInt64(c)), default: []] += Array(bytes)
            reads += 1
        }
    }

    @Test func everyCoreReadsTheBytesWrittenToItsConnection() throws {
        let (s, _) = try Scenario.load(pathOrName: "quickstart")
        let world = try World(scenario: s, seed: 1)
        let wire = Wire()
        world.addObserver(wire)
        world.run(until: SimTime.zero + .seconds(600))
        #expect(wire.reads > 100)
        // What arrived is what was written, in order (a prefix: a close may lose the tail).
        for (id, got) in wire.gotUp { #expect(wire.up[id, default: []].starts(with: got), "up \(id)") }
        for (id, got) in wire.gotDown { #expect(wire.down[id, default: []].starts(with: got), "down \(id)") }
        #expect(wire.gotUp.values.reduce(0) { $0 + $1.count } > 1000)
        #expect(wire.gotDown.values.reduce(0) { $0 + $1.count } > 1000)
        // Delivered buffers came back and are waiting for writes.
        #expect(world.clientWriteBuffers.count > 0 && world.serverWriteBuffers.count > 0)
        #expect(world.clientWriteBuffers.count <= WriteBufferPool.maxBuffers)
    }
}
