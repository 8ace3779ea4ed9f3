import IMClient
import IMServer
import IMWire
import SimKernel

/// Something that watches a run: the trace writer, the oracles, a capture recorder, the ledger.
/// Every method has an empty default, so an observer implements only what it needs. Observers
/// must not change the world (they may read it).
///
/// A core's effects reach observers once the world has applied them (`AppliedClientEffects`,
/// `AppliedServerEffects`): the connection an `openConnection` opened is known, and what
/// applying them caused (bytes lost on a dead path) follows as notes. Observers are called
/// stage by stage (`ObserverStage`), so the order in which they were added decides nothing.
public protocol WorldObserver: AnyObject {
    /// When this observer hears of each fact, relative to the others (default `.watch`).
    var stage: ObserverStage { get }
    /// Every dispatched kernel event, before the world handles it.
    func world(_ world: World, dispatching event: SimEvent<WorldEvent>)
    /// An input about to be fed to a device's client core (`localMs` = the device's wall clock).
    func world(_ world: World, device: Int, input: ClientInput, localMs: Int64)
    /// The effects a device's client core returned for the last input, after the world applied
    /// them.
    func world(_ world: World, device: Int, applied effects: AppliedClientEffects)
    func world(_ world: World, serverInput: ServerInput, serverMs: Int64)
    /// The server core's effects for the last input, after the world applied them.
    func world(_ world: World, serverApplied effects: AppliedServerEffects)
    /// Network, fault, lifecycle and phase facts.
    func world(_ world: World, note: WorldNote)
    /// The run ended (after the liveness phase).
    func worldDidFinish(_ world: World)
}

extension WorldObserver {
    public var stage: ObserverStage { .watch }
    public func world(_ world: World, dispatching event: SimEvent<WorldEvent>) {}
    public func world(_ world: World, device: Int, input: ClientInput, localMs: Int64) {}
    public func world(_ world: World, device: Int, applied effects: AppliedClientEffects) {}
    public func world(_ world: World, serverInput: ServerInput, serverMs: Int64) {}
    public func world(_ world: World, serverApplied effects: AppliedServerEffects) {}
    public func world(_ world: World, note: WorldNote) {}
    public func worldDidFinish(_ world: World) {}
}

/// The order in which observers hear of each fact. Within a stage, observers must not depend on
/// each other.
public enum ObserverStage: Int, Sendable, Comparable {
    /// Judges the run (the oracle suite): hears of a fact first, so a violation it reports is
    /// recorded before the fact's own records, whatever order observers were added in.
    case judge = 0
    /// Watches and records (trace and capture recorders, statistics, logs).
    case watch = 1

    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}

/// A device's client effects for one input, as the world applied them.
public struct AppliedClientEffects: RandomAccessCollection, Sendable {
    public let effects: [ClientEffect]
    /// The connection each `openConnection` effect opened, in effect order (the world numbers
    /// connections as it opens them).
    public let openedConnections: [ConnectionID]
    /// How many of `effects` are app callbacks: most inputs cause none, and an observer that
    /// only looks at callbacks skips the loop (copying each effect costs a retain/release).
    public let callbackCount: Int
    /// How many of the callbacks are `connectionStatus` (rare: connects and disconnects).
    public let statusCallbackCount: Int
    /// How many of `effects` are `.note`s.
    public let noteCount: Int

    public init(_ effects: [ClientEffect], openedConnections: [ConnectionID] = []) {
        var callbacks = 0, statuses = 0, notes = 0
        for e in effects {
            switch e {
            case .callback(let cb):
                callbacks += 1
                if case .connectionStatus = cb { statuses += 1 }
            case .note: notes += 1
            default: break
            }
        }
        self.init(effects, openedConnections: openedConnections, callbackCount: callbacks,
                  statusCallbackCount: statuses, noteCount: notes)
    }

    /// The world counts the callbacks and notes as it applies them.
    init(_ effects: [ClientEffect], openedConnections: [ConnectionID], callbackCount: Int,
         statusCallbackCount: Int, noteCount: Int) {
        self.effects = effects
        self.openedConnections = openedConnections
        self.callbackCount = callbackCount
        self.statusCallbackCount = statusCallbackCount
        self.noteCount = noteCount
    }

    @inlinable public var startIndex: Int { 0 }
    @inlinable public var endIndex: Int { effects.count }
    @inlinable public subscript(i: Int) -> ClientEffect { effects[i] }
    /// `for e in applied` walks the effects array itself: the default iterator holds a copy of
    /// this whole struct, copied through outlined code now that it has five fields (~100
    /// instructions per oracle call, session 33).
    @inlinable public func makeIterator() -> IndexingIterator<[ClientEffect]> { effects.makeIterator() }
}

/// The server core's effects for one input, as the world applied them. A message the server
/// accepted and then dropped for everyone (chatroom quota, sensitive word) is one event:
/// `messageAccepted` with `AcceptedMessage.droppedForEveryone` set.
public struct AppliedServerEffects: RandomAccessCollection, Sendable {
    public let effects: [ServerEffect]
    /// How many of `effects` are `.event`s (an observer that only counts events skips the loop
    /// when there are none).
    public let eventCount: Int

    public init(_ effects: [ServerEffect]) {
        var events = 0
        for case .event in effects { events += 1 }
        self.init(effects, eventCount: events)
    }

    /// The world counts the events as it applies the effects.
    init(_ effects: [ServerEffect], eventCount: Int) {
        self.effects = effects
        self.eventCount = eventCount
    }

    @inlinable public var startIndex: Int { 0 }
    @inlinable public var endIndex: Int { effects.count }
    @inlinable public subscript(i: Int) -> ServerEffect { effects[i] }
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
