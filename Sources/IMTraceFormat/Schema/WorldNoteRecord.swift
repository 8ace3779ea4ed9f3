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

    public var kind: UInt16 {
        switch self {
        case .connectionOpened: 176
        case .connectionRefused: 177
        case .connectTimedOut: 178
        case .bytesLost: 179
        case .fault: 180
        case .lifecycle: 181
        case .network: 182
        case .clockStep: 183
        case .serverDown: 184
        case .serverUp: 185
        case .phase: 186
        case .script: 187
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

    static func decode(kind: UInt16, _ d: inout RecordDecoder) throws(RecordDecodeError) -> WorldNoteRecord? {
        switch kind {
        case 176: return .connectionOpened(try d.connection(), device: try d.device())
        case 177: return .connectionRefused(try d.connection(), device: try d.device())
        case 178: return .connectTimedOut(try d.connection(), device: try d.device())
        case 179: return .bytesLost(try d.connection(), toServer: try d.bool(), count: try d.uvarintInt())
        case 180:
            let k = try d.rawEnum(FaultKind.self, "fault kind")
            let dev = try d.varint()
            return .fault(k, device: dev >= 0 ? Int(dev) : nil, started: try d.bool(), detail: try d.utf8())
        case 181: return .lifecycle(device: try d.device(), try d.rawEnum(LifecycleChange.self, "lifecycle"))
        case 182: return .network(device: try d.device(), up: try d.bool())
        case 183: return .clockStep(device: try d.device(), byMs: try d.varint())
        case 184: return .serverDown
        case 185: return .serverUp
        case 186: return .phase(try d.rawEnum(RunPhase.self, "phase"))
        case 187: return .script(step: try d.uvarintInt(), action: try d.utf8())
        default: return nil
        }
    }
}
