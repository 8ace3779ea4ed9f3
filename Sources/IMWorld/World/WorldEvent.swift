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

    public var kind: UInt16 {
        switch self {
        case .appStart: 1
        case .script: 2
        case .deliver(_, let s): s ? 3 : 4
        case .connectArrive: 5
        case .connectComplete: 6
        case .closeNotice(_, let s, _): s ? 7 : 8
        case .clientTimer: 9
        case .serverTimer: 10
        case .workload: 11
        case .faultStart: 12
        case .faultEnd: 13
        case .serverRestart: 14
        case .heal: 15
        case .convergenceCheck: 16
        case .end: 17
        case .network(_, let up): up ? 18 : 19
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

extension ClientTimer {
    /// A process-independent code (never `hashValue`).
    var stableCode: UInt64 {
        switch self {
        case .connackTimeout: 1
        case .heartbeat: 2
        case .pingTimeout: 3
        case .reconnect: 4
        case .backgroundClose: 5
        case .connectTimeLimit: 6
        case .requestTimeout(let m): 7 | UInt64(m) << 8
        case .poll: 8
        }
    }
}

extension ServerTimer {
    var stableCode: UInt64 {
        switch self {
        case .sessionIdle(let c): 1 | c.raw << 8
        case .queryAckRetry(let c, let m): 2 | UInt64(m) << 8 | c.raw << 24
        case .connectDeadline(let c): 3 | c.raw << 8
        case .chatroomAutoDestroy(let r): 4 ^ StableHash.fnv1a(r) << 8
        case .offlineExpiry: 5
        case .chatroomBanEnds(let r, let u): 6 ^ StableHash.combine(StableHash.fnv1a(r), StableHash.fnv1a(u)) << 8
        case .chatroomMuteEnds(let r, let u): 7 ^ StableHash.combine(StableHash.fnv1a(r), StableHash.fnv1a(u)) << 8
        }
    }
}
