// The world's value types that outlive a run: scenarios, traces, reports and the CLI name them,
// so they live apart from the simulator (a trace reader links this module, not IMWorld). Each
// type owns its stable encoding (its raw value), which the trace records write.

public enum FaultKind: String, Codable, Sendable, CaseIterable, Comparable {
    /// Connection reset; each side learns at its own time.
    case reset
    /// The path silently drops everything; only heartbeats reveal it.
    case halfOpen
    /// A device's network black-holes for `duration`.
    case partition
    /// The server is unreachable from everyone for `duration`.
    case serverPartition
    /// Latency × `factor` for `duration` on one device.
    case latencySpike
    /// The network interface goes down and up `count` times, `period` apart.
    case flap
    /// The app goes to the background for `duration`.
    case background
    /// The app is killed and restarted after `duration`.
    case kill
    /// The device clock steps by a random amount in `by`.
    case clockStep
    /// The server crashes and restarts after `duration`.
    case serverCrash
    /// Storage (issue 28; `client.store: device` only). The device loses power and boots
    /// after `duration`: only synced data survives.
    case powerLoss
    /// As `powerLoss`, torn: a random subset of unsynced sectors survives, some half-written.
    case powerLossTorn
    /// Every write of the device's store fails (SQLITE_IOERR_WRITE) for `duration`.
    case ioError
    /// The device's disk is full (SQLITE_FULL on growth) for `duration`.
    case diskFull

    public static func < (a: Self, b: Self) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }

    /// Per-device faults draw per device; the rest are world-wide.
    public var isPerDevice: Bool {
        switch self {
        case .serverPartition, .serverCrash: false
        default: true
        }
    }

    /// Storage faults: scheduled from each device's own storage stream, never the shared fault
    /// stream, so enabling them moves no other draw.
    public var isStorage: Bool {
        switch self {
        case .powerLoss, .powerLossTorn, .ioError, .diskFull: true
        default: false
        }
    }
}
