import IMWire
import SimKernel

/// What `imsim trace show` / `export` keep. Every condition given must hold.
public struct TraceFilter: Sendable {
    /// Device ids (`alice-phone`) or indexes (`d3`): records of any of them.
    public var devices: [String] = []
    /// Records naming this conversation, or a message of it (`private:bob` is bob's peer view:
    /// the sender's records and the server's accept use the sender's key).
    public var conversation: ConversationKey?
    /// Records about this messageUId, including the sender's insert before the uid existed.
    public var messageUId: String?
    /// Simulated time window, inclusive.
    public var from: SimTime?
    public var to: SimTime?
    /// Kind patterns (`cb`, `srv.fannedOut`, `ev.deliver`), see `TraceKinds.matches`.
    public var kinds: [String] = []
    /// Leave out checkpoint records (structure, not events). Default true.
    public var hideCheckpoints = true

    public init() {}

    public var isTimeOnly: Bool { devices.isEmpty && conversation == nil && messageUId == nil && kinds.isEmpty }
}

/// Applies a `TraceFilter` over a stream of entries, tracking what it needs (message → conversation,
/// the sender's local message ids).
public struct TraceFilterState {
    public let filter: TraceFilter
    private var uidConversation: [String: ConversationKey] = [:]
    /// (device, local messageId) pairs of the filtered message, found by `prepare`.
    private var localIds: Set<[Int64]> = []

    public init(_ filter: TraceFilter) { self.filter = filter }

    /// With `--message`: a first pass finds the sender's local messageId (its insert and result
    /// callbacks come before / without the uid).
    public mutating func prepare(_ open: () throws(TraceError) -> TraceEventReader) throws(TraceError) {
        guard let uid = filter.messageUId else { return }
        let r = try open()
        while let e = try r.next() {
            if case .callback(let d, .sendResult(let id, let u, _, _)) = e.event, u == uid { localIds.insert([Int64(d), id]) }
            if case .callback(let d, .messageInserted(let m)) = e.event, m.messageUId == uid { localIds.insert([Int64(d), m.messageId]) }
        }
    }

    /// `--device` values were checked against the trace's devices (once the device records at
    /// its start have been read).
    private var devicesChecked = false

    /// Whether `entry` passes (updates the message → conversation map first). Throws
    /// `unknownDevice` when a `--device` names no device of the trace, rather than showing nothing.
    public mutating func matches(_ entry: TraceEntry, _ names: TraceNames) throws(TraceError) -> Bool {
        let e = entry.event
        if !devicesChecked && !filter.devices.isEmpty {
            switch e {
            case .meta(.device), .meta(.checkpoint): break
            default:
                devicesChecked = true
                if let bad = filter.devices.first(where: { names.resolveDevice($0) == nil }) {
                    let ids = names.devices.keys.sorted().prefix(5).map { names.device($0) }
                    throw .unknownDevice(bad, deviceCount: names.devices.count, examples: Array(ids))
                }
            }
        }
        if filter.conversation != nil {
            let convs = e.conversations
            if let c = convs.first { for u in e.messageUIds where uidConversation[u] == nil { uidConversation[u] = c } }
        }
        if filter.hideCheckpoints, case .meta(.checkpoint) = e { return false }
        if let f = filter.from, entry.time < f { return false }
        if let t = filter.to, entry.time > t { return false }
        if !filter.kinds.isEmpty {
            let n = e.kindName
            guard filter.kinds.contains(where: { TraceKinds.matches($0, n) }) else { return false }
        }
        if !filter.devices.isEmpty {
            let wanted = filter.devices.compactMap { names.resolveDevice($0) }
            guard e.devices(names).contains(where: wanted.contains) else { return false }
        }
        if let c = filter.conversation {
            let convs = e.conversations
            if !convs.contains(c) {
                guard e.messageUIds.contains(where: { uidConversation[$0] == c }) else { return false }
            }
        }
        if let uid = filter.messageUId {
            guard e.messageUIds.contains(uid) || mentionsLocalId(e) else { return false }
        }
        return true
    }

    private func mentionsLocalId(_ e: TraceEvent) -> Bool {
        guard !localIds.isEmpty else { return false }
        switch e {
        case .callback(let d, .messageInserted(let m)): return localIds.contains([Int64(d), m.messageId])
        case .callback(let d, .sendResult(let id, _, _, _)), .callback(let d, .recalled(let id, _)), .callback(let d, .recallResult(let id, _)),
             .clientInput(let d, .resend(let id)), .clientInput(let d, .recall(let id)),
             .clientNote(let d, .stored(let id, _, _, _, _, _)):
            return localIds.contains([Int64(d), id])
        case .clientNote(let d, .changed(_, let ids, _)): return ids.contains { localIds.contains([Int64(d), $0]) }
        default: return false
        }
    }
}
