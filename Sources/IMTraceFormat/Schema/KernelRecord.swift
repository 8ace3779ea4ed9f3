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

    /// The record kind: `WorldEvent.kind`.
    public var kind: UInt16 {
        switch self {
        case .appStart: 1
        case .script: 2
        case .deliver(_, _, let s): s ? Self.deliverUpKind : Self.deliverDownKind
        case .connectArrive: 5
        case .connectComplete: 6
        case .closeNotice(_, _, let s, _): s ? 7 : 8
        case .clientTimer: Self.clientTimerKind
        case .serverTimer: 10
        // A room-wide workload event (a like burst) has no user (-1): its own kind, no user field.
        case .workload(let u, _): u < 0 ? 32 : 11
        case .faultStart: 12
        case .faultEnd: 13
        case .serverRestart: 14
        case .heal: 15
        case .convergenceCheck: 16
        case .end: 17
        case .network(_, let up): up ? 18 : 19
        }
    }

    // The kinds and fields of the frequent records, shared with the recorder's direct path.
    static let deliverUpKind: UInt16 = 3, deliverDownKind: UInt16 = 4, clientTimerKind: UInt16 = 9
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

    static func decode(kind: UInt16, _ d: inout RecordDecoder) throws(RecordDecodeError) -> KernelRecord? {
        switch kind {
        case 1: return .appStart(device: try d.device())
        case 2: return .script(step: try d.uvarintInt(), repeatIndex: try d.uvarintInt())
        case 3, 4: return .deliver(try d.connection(), device: try d.device(), toServer: kind == 3)
        case 5: return .connectArrive(try d.connection(), device: try d.device())
        case 6: return .connectComplete(try d.connection(), device: try d.device())
        case 7, 8:
            return .closeNotice(try d.connection(), device: try d.device(), toServer: kind == 7,
                                reason: try d.rawEnum(TransportCloseReason.self, "close reason"))
        case 9: return .clientTimer(device: try d.device(), try d.clientTimer())
        case 10: return .serverTimer(try d.serverTimer())
        case 11, 32:
            let u = kind == 11 ? try d.uvarintInt() : -1
            let at = d.offset
            let k = try d.uvarint()
            guard k <= 255, let kind = WorkloadKind(rawValue: UInt8(k)) else { throw d.invalid(at, "workload kind", "\(k)") }
            return .workload(user: u, kind: kind)
        case 12, 13:
            let k = try d.rawEnum(FaultKind.self, "fault kind")
            let dev = try d.varint()
            let device = dev >= 0 ? Int(dev) : nil
            return kind == 12 ? .faultStart(k, device: device) : .faultEnd(k, device: device)
        case 14: return .serverRestart
        case 15: return .heal
        case 16: return .convergenceCheck
        case 17: return .end
        case 18, 19: return .network(device: try d.device(), up: kind == 18)
        default: return nil
        }
    }
}
