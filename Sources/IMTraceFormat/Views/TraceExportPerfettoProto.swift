import IMClient
import IMWire
import SimKernel

/// `imsim trace export --format perfetto`: a Perfetto trace (`.perfetto-trace`, the TrackEvent
/// protobuf that ui.perfetto.dev and trace_processor read natively). Field numbers are those of
/// Perfetto's `protos/perfetto/trace/trace_packet.proto` and `track_event/*.proto`; the few
/// messages used are encoded by hand (`PerfettoProto`), see Docs/look.md for why.
///
/// Tracks (TrackDescriptor): "server", "world", one per device ("device <id> (<user>)") with
/// children "<id> connection" (state slices: connected, reconnect wait, …), "<id> sync" (pulling
/// slices), "<id> unread" (counter), and one per simulated connection ("connection cN <device>",
/// child of its device) with a "cN in flight" counter (bytes queued on the link, both
/// directions). Every record is an instant event on its actor's track, named like the JSON
/// export's slices, with the record's fields as debug annotations. State slices always end: the
/// ones still open at the end of the trace end at its last record's time.
///
/// Flows: one flow id per (messageUId, device that stored it): the sender's `cb.messageInserted`
/// and `srv.accepted` carry every path of the message, `srv.fannedOut` / `srv.pulled` for a
/// device carry that device's path, and `client.stored` (new) on the device terminates it.
public enum TraceExportPerfettoProto {
    public struct Summary: Equatable, Sendable {
        public var packets = 0
        public var instants = 0
        public var slices = 0
        public var counters = 0
        public var flows = 0
    }

    struct PathKey: Hashable { var uid: String; var device: Int }

    static let serverTrack: UInt64 = 1, worldTrack: UInt64 = 2
    static func deviceTrack(_ d: Int) -> UInt64 { 0x1_0000_0000 + UInt64(d) }
    static func stateTrack(_ d: Int) -> UInt64 { 0x2_0000_0000 + UInt64(d) }
    static func syncTrack(_ d: Int) -> UInt64 { 0x3_0000_0000 + UInt64(d) }
    static func unreadTrack(_ d: Int) -> UInt64 { 0x4_0000_0000 + UInt64(d) }
    static func connTrack(_ c: ConnectionID) -> UInt64 { 0x5_0000_0000 + c.raw }
    static func queueTrack(_ c: ConnectionID) -> UInt64 { 0x6_0000_0000 + c.raw }

    static func flowId(_ k: PathKey) -> UInt64 {
        StableHash.fnv1a(Array(k.uid.utf8) + [0] + Array(String(k.device).utf8))
    }

    /// Writes the trace. `open` reopens the .imtrace (the export reads it twice: flows need to
    /// know every device a message reached before its send is written).
    public static func run(open: () throws(TraceError) -> TraceEventReader, filter: TraceFilter, to out: TextOutput)
        throws(TraceViewError) -> Summary {
        do {
            return try runThrowing(open: open, filter: filter, to: out)
        } catch let e as TraceViewError { throw e } catch let e as TraceError { throw .trace(e) } catch {
            throw .usage("\(error)")
        }
    }

    static func runThrowing(open: () throws(TraceError) -> TraceEventReader, filter: TraceFilter, to out: TextOutput) throws -> Summary {
        // Pass 1: the sender's local ids and the devices that stored each message.
        var localIds: [[Int64]: String] = [:]
        var stores: [String: [Int]] = [:]
        do {
            let r = try open()
            var f = TraceFilterState(filter)
            while let e = try r.next() {
                if let to = filter.to, e.time > to { break }
                guard try f.matches(e, r.names) else { continue }
                switch e.event {
                case .callback(let d, .sendResult(let id, let uid?, _, nil)):
                    localIds[[Int64(d), id]] = uid
                case .clientNote(let d, .stored(_, let uid?, _, _, _, true)):
                    if !(stores[uid]?.contains(d) ?? false) { stores[uid, default: []].append(d) }
                default: break
                }
            }
        }
        func paths(_ uid: String) -> [UInt64] { (stores[uid] ?? []).map { flowId(PathKey(uid: uid, device: $0)) } }

        let r = try open()
        var f = TraceFilterState(filter)
        var w = PerfettoWriter(out: out)
        var s = Summary()
        let labels = TraceExportPerfetto.Writer(out: out)
        var declared: Set<UInt64> = []
        var open: [UInt64: Int] = [:]   // slice track → depth (0 or 1)
        var lastTime: Int64 = 0
        var devConn: [Int: ConnectionID] = [:]
        var lastDeliver: ConnectionID?
        var inFlight: [UInt64: Int64] = [:]
        var unread: [Int: [ConversationKey: Int64]] = [:]

        func declare(_ uuid: UInt64, name: String, parent: UInt64? = nil, counterUnit: UInt64? = nil, rank: Int64? = nil) {
            guard declared.insert(uuid).inserted else { return }
            w.descriptor(uuid: uuid, name: name, parent: parent, counterUnit: counterUnit, rank: rank)
            s.packets += 1
        }
        func declareDevice(_ d: Int, _ names: TraceNames) {
            let id = names.device(d)
            let user = names.devices[d]?.userId
            declare(deviceTrack(d), name: "device \(id)" + (user.map { " (\($0))" } ?? ""), rank: Int64(10 + d))
        }
        func track(_ a: TraceActor, _ names: TraceNames) -> UInt64 {
            switch a {
            case .server:
                declare(serverTrack, name: "server", rank: 0)
                return serverTrack
            case .world:
                declare(worldTrack, name: "world", rank: 1)
                return worldTrack
            case .device(let d):
                declareDevice(d, names)
                return deviceTrack(d)
            case .link(let c):
                let owner = names.deviceOf(connection: c)
                if let owner { declareDevice(owner, names) }
                declare(connTrack(c), name: "connection \(c)" + (owner.map { " " + names.device($0) } ?? ""),
                        parent: owner.map { deviceTrack($0) })
                return connTrack(c)
            }
        }
        func endSlice(_ t: UInt64, at ns: Int64) {
            guard open[t] == 1 else { return }
            open[t] = 0
            w.event(ns: ns, track: t, type: 2)
            s.packets += 1
        }
        func beginSlice(_ t: UInt64, _ name: String, at ns: Int64) {
            endSlice(t, at: ns)
            open[t] = 1
            w.event(ns: ns, track: t, type: 1, name: name, category: "state")
            s.packets += 1
            s.slices += 1
        }
        func counter(_ t: UInt64, _ v: Int64, at ns: Int64) {
            w.event(ns: ns, track: t, type: 4, counter: v)
            s.packets += 1
            s.counters += 1
        }
        func flight(_ c: ConnectionID, _ delta: Int64, at ns: Int64, names: TraceNames, reset: Bool = false) {
            let old = inFlight[c.raw] ?? 0
            let v = reset ? 0 : max(0, old + delta)
            guard v != old || inFlight[c.raw] == nil else { return }
            inFlight[c.raw] = v
            _ = track(.link(c), names)
            declare(queueTrack(c), name: "\(c) in flight (bytes)", parent: connTrack(c), counterUnit: 3)
            counter(queueTrack(c), v, at: ns)
        }
        func setUnread(_ d: Int, _ k: ConversationKey, _ v: Int64?, at ns: Int64, names: TraceNames) {
            let before = unread[d, default: [:]].values.reduce(0, +)
            if let v { unread[d, default: [:]][k] = v } else { unread[d, default: [:]][k] = (unread[d]?[k] ?? 0) + 1 }
            let after = unread[d, default: [:]].values.reduce(0, +)
            guard after != before else { return }
            declareDevice(d, names)
            declare(unreadTrack(d), name: "\(names.device(d)) unread", parent: deviceTrack(d), counterUnit: 2)
            counter(unreadTrack(d), after, at: ns)
        }

        while let e = try r.next() {
            if let to = filter.to, e.time > to { break }
            guard try f.matches(e, r.names) else { continue }
            let names = r.names
            let ns = e.time.nanoseconds
            lastTime = max(lastTime, ns)
            let t = track(e.event.actor, names)

            // State slices and counters.
            switch e.event {
            case .clientNote(let d, .state(_, let to, _)):
                declareDevice(d, names)
                declare(stateTrack(d), name: "\(names.device(d)) connection", parent: deviceTrack(d), rank: 0)
                if to == "idle" || to == "stopped" { endSlice(stateTrack(d), at: ns) } else { beginSlice(stateTrack(d), stateName(to), at: ns) }
            case .clientNote(let d, .syncState(_, let to, _)):
                declareDevice(d, names)
                declare(syncTrack(d), name: "\(names.device(d)) sync", parent: deviceTrack(d), rank: 1)
                if case .pulling(let page)? = SyncState(name: to) {
                    beginSlice(syncTrack(d), "pulling page \(page)", at: ns)
                } else {
                    endSlice(syncTrack(d), at: ns)
                }
            case .clientNote(let d, .stored(_, _, let conv, _, .receive, true)):
                setUnread(d, conv, nil, at: ns, names: names)
            case .clientInput(let d, .clearUnread(let conv, _)), .callback(let d, .syncReadStatus(let conv, _)):
                setUnread(d, conv, 0, at: ns, names: names)
            case .clientEffect(let d, .openConnection(let c)):
                devConn[d] = c
            case .clientEffect(let d, .closeConnection), .clientInput(let d, .transportClosed):
                if let c = devConn.removeValue(forKey: d) { flight(c, 0, at: ns, names: names, reset: true) }
            case .clientEffect(let d, .send(let b, _)):
                if let c = devConn[d] { flight(c, Int64(b.count), at: ns, names: names) }
            case .serverEffect(.send(let c, let b, _)):
                flight(c, Int64(b.count), at: ns, names: names)
            case .kernel(.deliver(let c, _, _)):
                lastDeliver = c
            case .serverInput(.bytes(let c, let b)):
                flight(c, -Int64(b.count), at: ns, names: names)
            case .clientInput(_, .transportBytes(let b)):
                if let c = lastDeliver { flight(c, -Int64(b.count), at: ns, names: names) }
            case .world(.bytesLost(let c, _, let n)):
                flight(c, -Int64(n), at: ns, names: names)
            default: break
            }

            // The record itself, with its flows.
            var flowIds: [UInt64] = [], terminating: [UInt64] = []
            var uid: String?
            switch e.event {
            case .callback(let d, .messageInserted(let m)):
                if let u = localIds[[Int64(d), m.messageId]] { uid = u; flowIds = paths(u) }
            case .serverEvent(.messageAccepted(let m)):
                uid = m.messageUId
                flowIds = paths(m.messageUId)
            case .serverEvent(.fannedOut(let u, _, let dev, _, _)):
                uid = u
                if let d = names.deviceIndex[dev], stores[u]?.contains(d) == true { flowIds = [flowId(PathKey(uid: u, device: d))] }
            case .serverEvent(.pulled(_, _, let dev, _, let uids, _, _)):
                if let d = names.deviceIndex[dev] {
                    flowIds = uids.filter { stores[$0]?.contains(d) == true }.map { flowId(PathKey(uid: $0, device: d)) }
                }
            case .clientNote(let d, .stored(_, let u?, _, _, _, true)):
                uid = u
                terminating = [flowId(PathKey(uid: u, device: d))]
            default: break
            }
            var ann: [(String, String)] = [("record", String(e.index)), ("kind", e.event.kindName)]
            if let uid { ann.append(("uid", uid)) }
            for field in e.event.fields(names) where field.value != .null {
                ann.append((field.name, field.value.text(epochMs: r.epochMs)))
            }
            var label = labels.label(e.event, names: names)
            if case .callback(_, .messageInserted) = e.event, let uid { label = "send \(uid)" }
            w.event(ns: ns, track: t, type: 3, name: label,
                    category: String(e.event.kindName.prefix { $0 != "." }), flowIds: flowIds, terminating: terminating, annotations: ann)
            s.packets += 1
            s.instants += 1
            s.flows += flowIds.count + terminating.count
        }
        // Every slice ends.
        for t in open.keys.sorted() { endSlice(t, at: lastTime) }
        w.flush()
        return s
    }

    static func stateName(_ s: String) -> String {
        switch s {
        case "reconnectWait": "reconnect wait"
        case "awaitingConnack": "awaiting CONNACK"
        case "networkWait": "network wait"
        default: s
        }
    }
}

/// The few Perfetto messages the export writes, encoded by hand (proto2 wire format).
/// Trace.packet = 1; TracePacket: timestamp 8, trusted_packet_sequence_id 10, track_event 11,
/// track_descriptor 60; TrackDescriptor: uuid 1, name 2, parent_uuid 5, counter 8
/// (CounterDescriptor.unit 3), sibling_order_rank 12; TrackEvent: debug_annotations 4, type 9,
/// track_uuid 11, categories 22, name 23, counter_value 30, flow_ids 47 (fixed64),
/// terminating_flow_ids 48; DebugAnnotation: string_value 6, name 10.
struct PerfettoWriter {
    let out: TextOutput
    var packet = PB()
    var ev = PB()
    var nested = PB()
    var file = PB()

    init(out: TextOutput) { self.out = out }

    mutating func descriptor(uuid: UInt64, name: String, parent: UInt64?, counterUnit: UInt64?, rank: Int64?) {
        ev.b.removeAll(keepingCapacity: true)
        ev.uint(1, uuid)
        ev.string(2, name)
        if let parent { ev.uint(5, parent) }
        if let counterUnit {
            nested.b.removeAll(keepingCapacity: true)
            nested.uint(3, counterUnit)
            ev.bytes(8, nested.b)
        }
        if let rank { ev.uint(12, UInt64(bitPattern: rank)) }
        packet.b.removeAll(keepingCapacity: true)
        packet.uint(8, 0)
        packet.uint(10, 1)
        packet.bytes(60, ev.b)
        emitPacket()
    }

    mutating func event(ns: Int64, track: UInt64, type: UInt64, name: String? = nil, category: String? = nil,
                        counter: Int64? = nil, flowIds: [UInt64] = [], terminating: [UInt64] = [],
                        annotations: [(String, String)] = []) {
        ev.b.removeAll(keepingCapacity: true)
        for (k, v) in annotations {
            nested.b.removeAll(keepingCapacity: true)
            nested.string(10, k)
            nested.string(6, v)
            ev.bytes(4, nested.b)
        }
        ev.uint(9, type)
        ev.uint(11, track)
        if let category { ev.string(22, category) }
        if let name { ev.string(23, name) }
        if let counter { ev.uint(30, UInt64(bitPattern: counter)) }
        for f in flowIds { ev.fixed64(47, f) }
        for f in terminating { ev.fixed64(48, f) }
        packet.b.removeAll(keepingCapacity: true)
        packet.uint(8, UInt64(bitPattern: ns))
        packet.uint(10, 1)
        packet.bytes(11, ev.b)
        emitPacket()
    }

    mutating func emitPacket() {
        file.bytes(1, packet.b)
        if file.b.count >= 1 << 20 { flush() }
    }

    mutating func flush() {
        out.write(bytes: file.b)
        file.b.removeAll(keepingCapacity: true)
    }
}

/// A protobuf byte builder (varint, fixed64, length-delimited).
struct PB {
    var b: [UInt8] = []
    mutating func varint(_ v: UInt64) { b.appendVarint(v) }
    mutating func uint(_ field: Int, _ v: UInt64) {
        varint(UInt64(field) << 3)
        varint(v)
    }
    mutating func fixed64(_ field: Int, _ v: UInt64) {
        varint(UInt64(field) << 3 | 1)
        for i in 0..<8 { b.append(UInt8((v >> (8 * UInt64(i))) & 0xFF)) }
    }
    mutating func bytes(_ field: Int, _ v: [UInt8]) {
        varint(UInt64(field) << 3 | 2)
        varint(UInt64(v.count))
        b.append(contentsOf: v)
    }
    mutating func string(_ field: Int, _ s: String) {
        varint(UInt64(field) << 3 | 2)
        varint(UInt64(s.utf8.count))
        b.append(contentsOf: s.utf8)
    }
}
