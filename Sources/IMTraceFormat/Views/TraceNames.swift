import IMWire

/// What a view learns while reading a trace, to name actors: device ids (from the device
/// records at the start), users, and which device owns each connection.
public struct TraceNames: Sendable {
    public struct Device: Sendable, Equatable {
        public var id: String
        public var userId: String
        public var platform: Platform
        public var userIndex: Int
    }

    public private(set) var devices: [Int: Device] = [:]
    public private(set) var deviceIndex: [String: Int] = [:]
    public private(set) var users: [Int: String] = [:]
    /// Connection id → device index.
    public private(set) var connections: [UInt64: Int] = [:]

    public init() {}

    /// `alice-phone`, or `d3` when the trace did not say (salvaged without its first block).
    public func device(_ d: Int) -> String { devices[d]?.id ?? "d\(d)" }
    public func user(_ u: Int) -> String { u < 0 ? "(room)" : users[u] ?? "u#\(u)" }
    public func deviceOf(connection c: ConnectionID) -> Int? { connections[c.raw] }

    /// A device index from a device id or `dN` (any N when the trace named no device: a trace
    /// salvaged without its first block).
    public func resolveDevice(_ s: String) -> Int? {
        if let i = deviceIndex[s] { return i }
        if s.hasPrefix("d"), let i = Int(s.dropFirst()), i >= 0, devices.isEmpty || devices[i] != nil { return i }
        return nil
    }

    public mutating func learn(_ e: TraceEvent) {
        switch e {
        case .meta(.device(let i, let id, let u, let p, let ui)):
            devices[i] = Device(id: id, userId: u, platform: p, userIndex: ui)
            deviceIndex[id] = i
            users[ui] = u
        case .kernel(.deliver(let c, let d, _)), .kernel(.connectArrive(let c, let d)), .kernel(.connectComplete(let c, let d)),
             .kernel(.closeNotice(let c, let d, _, _)), .world(.connectionOpened(let c, let d)),
             .world(.connectionRefused(let c, let d)), .world(.connectTimedOut(let c, let d)),
             .clientEffect(let d, .openConnection(let c)):
            connections[c.raw] = d
        default:
            break
        }
    }
}
