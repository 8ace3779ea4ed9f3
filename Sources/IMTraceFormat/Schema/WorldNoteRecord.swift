import IMWire
import IMWorldValues
import SimKernel

/// A world-level fact (`WorldNote`): links, faults, lifecycle, phases. Kinds 176–187.
public enum WorldNoteRecord: Hashable, Sendable {
    case connectionOpened(ConnectionID, device: Int)
    case connectionRefused(ConnectionID, device: Int)
    case connectTimedOut(ConnectionID, device: Int)
    case bytesLost(ConnectionID, toServer: Bool, count: Int)
    case fault(FaultKind, device: Int?, started: Bool, detail: String)
    case lifecycle(device: Int, LifecycleChange)
    case network(device: Int, up: Bool)
    case clockStep(device: Int, byMs: Int64)
    case serverDown
    case serverUp
    case phase(RunPhase)
    case script(step: Int, action: String)

    public var kind: UInt16 { noteKind.rawValue }

    public var noteKind: WorldNoteKind {
        switch self {
        case .connectionOpened: .connectionOpened
        case .connectionRefused: .connectionRefused
        case .connectTimedOut: .connectTimedOut
        case .bytesLost: .bytesLost
        case .fault: .fault
        case .lifecycle: .lifecycle
        case .network: .network
        case .clockStep: .clockStep
        case .serverDown: .serverDown
        case .serverUp: .serverUp
        case .phase: .phase
        case .script: .script
        }
    }

    func encode(into e: inout RecordEncoder) {
        switch self {
        case .connectionOpened(let c, let d), .connectionRefused(let c, let d), .connectTimedOut(let c, let d):
            e.connection(c.raw); e.device(d)
        case .bytesLost(let c, let s, let n): e.connection(c.raw); e.bool(s); e.uvarint(n)
        case .fault(let k, let d, let s, let detail): e.string(k.rawValue); e.varint(Int64(d ?? -1)); e.bool(s); e.utf8(detail)
        case .lifecycle(let d, let c): e.device(d); e.string(c.rawValue)
        case .network(let d, let up): e.device(d); e.bool(up)
        case .clockStep(let d, let by): e.device(d); e.varint(by)
        case .serverDown, .serverUp: break
        case .phase(let p): e.string(p.rawValue)
        case .script(let s, let a): e.uvarint(s); e.utf8(a)
        }
    }

    static func decode(kind: WorldNoteKind, _ d: inout RecordDecoder) throws(RecordDecodeError) -> WorldNoteRecord {
        switch kind {
        case .connectionOpened: return .connectionOpened(try d.connection(), device: try d.device())
        case .connectionRefused: return .connectionRefused(try d.connection(), device: try d.device())
        case .connectTimedOut: return .connectTimedOut(try d.connection(), device: try d.device())
        case .bytesLost: return .bytesLost(try d.connection(), toServer: try d.bool(), count: try d.uvarintInt())
        case .fault:
            let k = try d.rawEnum(FaultKind.self, "fault kind")
            let dev = try d.varint()
            return .fault(k, device: dev >= 0 ? Int(dev) : nil, started: try d.bool(), detail: try d.utf8())
        case .lifecycle: return .lifecycle(device: try d.device(), try d.rawEnum(LifecycleChange.self, "lifecycle"))
        case .network: return .network(device: try d.device(), up: try d.bool())
        case .clockStep: return .clockStep(device: try d.device(), byMs: try d.varint())
        case .serverDown: return .serverDown
        case .serverUp: return .serverUp
        case .phase: return .phase(try d.rawEnum(RunPhase.self, "phase"))
        case .script: return .script(step: try d.uvarintInt(), action: try d.utf8())
        }
    }
}
