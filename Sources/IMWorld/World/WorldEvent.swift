import IMClient
import IMServer
import IMWire
import SimKernel

/// Everything the kernel schedules in a simulated IM world.
public enum WorldEvent: SimPayload, Sendable {
    /// A device's app starts (first time or after a kill).
    case appStart(device: Int32)
    /// A script step fires (`repeatIndex` counts the extra sends of a `count` > 1 step).
    case script(step: Int32, repeatIndex: Int32)
    /// Bytes in flight on a connection are due at the other end.
    case deliver(connection: UInt32, toServer: Bool)
    /// The SYN of a connection attempt reaches the server side.
    case connectArrive(connection: UInt32)
    /// The client learns that its connection attempt completed.
    case connectComplete(connection: UInt32)
    /// One side learns that the connection ended.
    case closeNotice(connection: UInt32, toServer: Bool, reason: TransportCloseReason)
    case clientTimer(device: Int32, ClientTimer)
    case serverTimer(ServerTimer)
    /// A user's next random action of a workload kind.
    case workload(user: Int32, kind: WorkloadKind)
    /// A random fault starts / ends.
    case faultStart(FaultKind, device: Int32)
    case faultEnd(FaultKind, device: Int32)
    /// A device's network interface goes down or comes back (flapping).
    case network(device: Int32, up: Bool)
    /// The crashed server comes back.
    case serverRestart
    /// Liveness phase: every fault heals.
    case heal
    /// Liveness phase: periodic convergence check.
    case convergenceCheck
    /// The active phase (or the liveness deadline) ends.
    case end

    /// The event's kind, folded into the digest (the trace's kernel record kinds are the same
    /// codes, `WorldEventKind`).
    public var kind: UInt16 { eventKind.rawValue }

    public var eventKind: WorldEventKind {
        switch self {
        case .appStart: .appStart
        case .script: .script
        case .deliver(_, let s): s ? .deliverUp : .deliverDown
        case .connectArrive: .connectArrive
        case .connectComplete: .connectComplete
        case .closeNotice(_, let s, _): s ? .closeUp : .closeDown
        case .clientTimer: .clientTimer
        case .serverTimer: .serverTimer
        case .workload: .workload
        case .faultStart: .faultStart
        case .faultEnd: .faultEnd
        case .serverRestart: .serverRestart
        case .heal: .heal
        case .convergenceCheck: .convergenceCheck
        case .end: .end
        case .network(_, let up): up ? .networkUp : .networkDown
        }
    }

    public var digest: UInt64 {
        switch self {
        case .appStart(let d), .network(let d, _): UInt64(UInt32(bitPattern: d))
        case .script(let s, let r): UInt64(UInt32(bitPattern: s)) << 32 | UInt64(UInt32(bitPattern: r))
        case .deliver(let c, _), .connectArrive(let c), .connectComplete(let c): UInt64(c)
        case .closeNotice(let c, _, let r): UInt64(c) << 8 | UInt64(TransportCloseReason.allCases.firstIndex(of: r)!)
        case .clientTimer(let d, let t): UInt64(UInt32(bitPattern: d)) << 32 | t.stableCode
        case .serverTimer(let t): t.stableCode
        case .workload(let u, let k): UInt64(UInt32(bitPattern: u)) << 8 | UInt64(k.rawValue)
        case .faultStart(let k, let d), .faultEnd(let k, let d):
            UInt64(UInt32(bitPattern: d)) << 8 | UInt64(FaultKind.allCases.firstIndex(of: k)!)
        case .serverRestart, .heal, .convergenceCheck, .end: 0
        }
    }
}

// The timers' digest codes: the case's stable code (`ClientTimer.Code`, `ServerTimer.Code`, the
// ones the trace writes) with the payload above it.
extension ClientTimer {
    /// A process-independent code (never `hashValue`).
    var stableCode: UInt64 {
        switch self {
        case .requestTimeout(let m): UInt64(code.rawValue) | UInt64(m) << 8
        default: UInt64(code.rawValue)
        }
    }
}

extension ServerTimer {
    var stableCode: UInt64 {
        let c = UInt64(code.rawValue)
        return switch self {
        case .sessionIdle(let x), .connectDeadline(let x): c | x.raw << 8
        case .queryAckRetry(let x, let m): c | UInt64(m) << 8 | x.raw << 24
        case .chatroomAutoDestroy(let r): c ^ StableHash.fnv1a(r) << 8
        case .offlineExpiry: c
        case .chatroomBanEnds(let r, let u), .chatroomMuteEnds(let r, let u): c ^ StableHash.combine(StableHash.fnv1a(r), StableHash.fnv1a(u)) << 8
        }
    }
}
