import IMClient
import IMServer
import IMWire
import SimKernel

/// Something that watches a run: the trace writer, the oracles, a capture recorder, the ledger.
/// Every method has an empty default, so an observer implements only what it needs. Observers
/// must not change the world (they may read it).
public protocol WorldObserver: AnyObject {
    /// Every dispatched kernel event, before the world handles it.
    func world(_ world: World, dispatching event: SimEvent<WorldEvent>)
    /// An input about to be fed to a device's client core (`localMs` = the device's wall clock).
    func world(_ world: World, device: Int, input: ClientInput, localMs: Int64)
    /// The effects a device's client core returned for the last input.
    func world(_ world: World, device: Int, effects: [ClientEffect])
    func world(_ world: World, serverInput: ServerInput, serverMs: Int64)
    func world(_ world: World, serverEffects: [ServerEffect])
    /// Network, fault, lifecycle and phase facts.
    func world(_ world: World, note: WorldNote)
    /// The run ended (after the liveness phase).
    func worldDidFinish(_ world: World)
}

extension WorldObserver {
    public func world(_ world: World, dispatching event: SimEvent<WorldEvent>) {}
    public func world(_ world: World, device: Int, input: ClientInput, localMs: Int64) {}
    public func world(_ world: World, device: Int, effects: [ClientEffect]) {}
    public func world(_ world: World, serverInput: ServerInput, serverMs: Int64) {}
    public func world(_ world: World, serverEffects: [ServerEffect]) {}
    public func world(_ world: World, note: WorldNote) {}
    public func worldDidFinish(_ world: World) {}
}

/// World-level facts (what happened to devices, links and the server that no core reports).
public enum WorldNote: Sendable {
    case connectionOpened(ConnectionID, device: Int)
    case connectionRefused(ConnectionID, device: Int)
    case connectTimedOut(ConnectionID, device: Int)
    /// Bytes lost on a dead or black-holed path.
    case bytesLost(ConnectionID, toServer: Bool, count: Int)
    case fault(FaultKind, device: Int?, started: Bool, detail: String)
    case lifecycle(device: Int, LifecycleChange)
    case network(device: Int, up: Bool)
    case clockStep(device: Int, byMs: Int64)
    case serverDown
    case serverUp
    case phase(RunPhase)
    case script(step: Int, action: String)
}
