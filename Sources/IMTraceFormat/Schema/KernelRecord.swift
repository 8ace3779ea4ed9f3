import IMClient
import IMServer
import IMWire
import IMWorldValues
import SimKernel

/// A dispatched kernel event (`WorldEvent`). Record kinds 1–19 are `WorldEvent.kind`. Link
/// events carry the device that owns the connection so every record names its actors.
public enum KernelRecord: Hashable, Sendable {
    case appStart(device: Int)
    case script(step: Int, repeatIndex: Int)
    case deliver(ConnectionID, device: Int, toServer: Bool)
    case connectArrive(ConnectionID, device: Int)
    case connectComplete(ConnectionID, device: Int)
    case closeNotice(ConnectionID, device: Int, toServer: Bool, reason: TransportCloseReason)
    case clientTimer(device: Int, ClientTimer)
    case serverTimer(ServerTimer)
    case workload(user: Int, kind: WorkloadKind)
    /// `device` is nil for world-wide faults.
    case faultStart(FaultKind, device: Int?)
    case faultEnd(FaultKind, device: Int?)
    case network(device: Int, up: Bool)
    case serverRestart
    case heal
    case convergenceCheck
    case end

    /// The record kind: `WorldEvent.kind` (`WorldEventKind`, in IMWorldValues).
    public var kind: UInt16 { eventKind.rawValue }

    public var eventKind: WorldEventKind {
        switch self {
        case .appStart: .appStart
        case .script: .script
        case .deliver(_, _, let s): s ? .deliverUp : .deliverDown
        case .connectArrive: .connectArrive
        case .connectComplete: .connectComplete
        case .closeNotice(_, _, let s, _): s ? .closeUp : .closeDown
        case .clientTimer: .clientTimer
        case .serverTimer: .serverTimer
        // A room-wide workload event (a like burst) has no user (-1): its own kind, no user field.
        case .workload(let u, _): u < 0 ? .roomWorkload : .workload
        case .faultStart: .faultStart
        case .faultEnd: .faultEnd
        case .serverRestart: .serverRestart
        case .heal: .heal
        case .convergenceCheck: .convergenceCheck
        case .end: .end
        case .network(_, let up): up ? .networkUp : .networkDown
        }
    }

    // The fields of the frequent records, shared with the recorder's direct path.
    @inline(__always) static func encodeLink(_ c: UInt64, _ d: Int, into e: inout RecordEncoder) {
        e.connection(c); e.device(d)
    }
    @inline(__always) static func encodeClientTimer(_ d: Int, _ t: ClientTimer, into e: inout RecordEncoder) {
        e.device(d); e.clientTimer(t)
    }

    func encode(into e: inout RecordEncoder) {
        switch self {
        case .appStart(let d): e.device(d)
        case .script(let s, let r): e.uvarint(s); e.uvarint(r)
        case .deliver(let c, let d, _), .connectArrive(let c, let d), .connectComplete(let c, let d):
            Self.encodeLink(c.raw, d, into: &e)
        case .closeNotice(let c, let d, _, let r): e.connection(c.raw); e.device(d); e.string(r.rawValue)
        case .clientTimer(let d, let t): Self.encodeClientTimer(d, t, into: &e)
        case .serverTimer(let t): e.serverTimer(t)
        case .workload(let u, let k):
            if u >= 0 { e.uvarint(u) }
            e.uvarint(UInt64(k.rawValue))
        case .faultStart(let k, let d), .faultEnd(let k, let d): e.string(k.rawValue); e.varint(Int64(d ?? -1))
        case .network(let d, _): e.device(d)
        case .serverRestart, .heal, .convergenceCheck, .end: break
        }
    }

    static func decode(kind: WorldEventKind, _ d: inout RecordDecoder) throws(RecordDecodeError) -> KernelRecord {
        switch kind {
        case .appStart: return .appStart(device: try d.device())
        case .script: return .script(step: try d.uvarintInt(), repeatIndex: try d.uvarintInt())
        case .deliverUp, .deliverDown: return .deliver(try d.connection(), device: try d.device(), toServer: kind == .deliverUp)
        case .connectArrive: return .connectArrive(try d.connection(), device: try d.device())
        case .connectComplete: return .connectComplete(try d.connection(), device: try d.device())
        case .closeUp, .closeDown:
            return .closeNotice(try d.connection(), device: try d.device(), toServer: kind == .closeUp,
                                reason: try d.rawEnum(TransportCloseReason.self, "close reason"))
        case .clientTimer: return .clientTimer(device: try d.device(), try d.clientTimer())
        case .serverTimer: return .serverTimer(try d.serverTimer())
        case .workload, .roomWorkload:
            let u = kind == .workload ? try d.uvarintInt() : -1
            let at = d.offset
            let k = try d.uvarint()
            guard k <= 255, let kind = WorkloadKind(rawValue: UInt8(k)) else { throw d.invalid(at, "workload kind", "\(k)") }
            return .workload(user: u, kind: kind)
        case .faultStart, .faultEnd:
            let k = try d.rawEnum(FaultKind.self, "fault kind")
            let dev = try d.varint()
            let device = dev >= 0 ? Int(dev) : nil
            return kind == .faultStart ? .faultStart(k, device: device) : .faultEnd(k, device: device)
        case .serverRestart: return .serverRestart
        case .heal: return .heal
        case .convergenceCheck: return .convergenceCheck
        case .end: return .end
        case .networkUp, .networkDown: return .network(device: try d.device(), up: kind == .networkUp)
        }
    }
}
