import IMServer
import IMWire
import SimKernel

/// `imsim trace export --format perfetto`: Chrome trace-event JSON (the "JSON Object Format":
/// `{"traceEvents":[…],"displayTimeUnit":"ms"}`) that ui.perfetto.dev and chrome://tracing open.
///
/// Tracks: process 1 "devices" with a thread per device, process 2 "server", process 3 "links"
/// with a thread per connection (its lifetime as a slice, deliveries inside), process 4 "world".
/// Every record is a complete slice (`ph:"X"`, 1 µs) on its actor's track, its fields as args.
/// Display times are the simulated times, nudged forward so that no two slices overlap: records
/// at the same simulated time are laid out 1 µs apart, in record order (the exact time is in
/// `args.time`).
///
/// Message flows: for every message and every device it reached, a flow (`ph:"s"` … `"t"` …
/// `"f"`, `bp:"e"`, `cat:"message"`, one `id` per path) through the slices of its path: send
/// (`cb.messageInserted` on the sender) → `srv.accepted` → `srv.fannedOut` / `srv.pulled` for
/// that device → the link delivery that carried it → `client.stored` → `cb.received`; the
/// sender's own path ends at `cb.sendResult`. Flow events sit 1 ns inside their slice, so they
/// bind to it (v1 flows bind to the enclosing slice).
public enum TraceExportPerfetto {
    static let devicesPid = 1, serverPid = 2, linksPid = 3, worldPid = 4
    static let serverTid = 2, worldTid = 3
    static func deviceTid(_ d: Int) -> Int { 1000 + d }
    static func linkTid(_ c: ConnectionID) -> Int { 1_000_000 + Int(c.raw) }

    /// A message path: (uid, device) — device -1 is the sender's own path.
    struct PathKey: Hashable { var uid: String; var device: Int }

    /// Pass 1: the sender's local ids, which devices each message reached, and the last step of
    /// each path (so the flow can end with `f`).
    struct Plan {
        var localIds: [[Int64]: String] = [:]     // [device, messageId] → uid
        var senders: [String: Int] = [:]           // uid → sender device
        var recipients: [String: [Int]] = [:]      // uid → devices in first-seen order
        var steps: [PathKey: Int] = [:]
        var last: [PathKey: UInt64] = [:]

        mutating func step(_ k: PathKey, _ record: UInt64) {
            steps[k, default: 0] += 1
            last[k] = record
            if k.device >= 0, !(recipients[k.uid]?.contains(k.device) ?? false) { recipients[k.uid, default: []].append(k.device) }
        }

        /// Every path `uid` has (the sender's and each recipient's).
        func paths(_ uid: String) -> [PathKey] {
            [PathKey(uid: uid, device: -1)] + (recipients[uid] ?? []).map { PathKey(uid: uid, device: $0) }
        }
    }

    /// The path steps a record is (pass 1 and pass 2 agree through this one function).
    /// `sharedUid`: a step on every path of that message (send, accept).
    static func steps(_ e: TraceEntry, names: TraceNames, plan: Plan, lastDeliver: [Int: (event: UInt64?, record: UInt64)])
        -> (shared: String?, paths: [PathKey], deliver: (PathKey, UInt64)?) {
        switch e.event {
        case .callback(let d, .messageInserted(let m)):
            return (plan.localIds[[Int64(d), m.messageId]], [], nil)
        case .serverEvent(.messageAccepted(let m)):
            return (m.messageUId, [], nil)
        case .callback(let d, .sendResult(_, let uid?, _, nil)):
            _ = d
            return (nil, [PathKey(uid: uid, device: -1)], nil)
        case .serverEvent(.fannedOut(let uid, _, let dev, _, _)):
            guard let d = names.deviceIndex[dev] else { return (nil, [], nil) }
            return (nil, [PathKey(uid: uid, device: d)], nil)
        case .serverEvent(.pulled(_, _, let dev, _, let uids, _, _)):
            guard let d = names.deviceIndex[dev] else { return (nil, [], nil) }
            return (nil, uids.map { PathKey(uid: $0, device: d) }, nil)
        case .clientNote(let d, .stored(_, let uid?, _, _, _, true)):
            let k = PathKey(uid: uid, device: d)
            var deliver: (PathKey, UInt64)?
            if let ld = lastDeliver[d], ld.event != nil, ld.event == e.eventIndex { deliver = (k, ld.record) }
            return (nil, [k], deliver)
        case .callback(let d, .received(let m, _, _, _)):
            guard let uid = m.messageUId else { return (nil, [], nil) }
            return (nil, [PathKey(uid: uid, device: d)], nil)
        default:
            return (nil, [], nil)
        }
    }

    /// Writes the JSON. `open` reopens the trace (the export reads it twice).
    public static func run(open: () throws(TraceError) -> TraceEventReader, filter: TraceFilter, to out: TextOutput)
        throws(TraceError) -> (slices: Int, flows: Int) {
        // Pass 1: plan the flows (over the filtered records: a flow only joins slices that exist).
        var plan = Plan()
        do {
            let r = try open()
            var f = TraceFilterState(filter)
            var lastDeliver: [Int: (event: UInt64?, record: UInt64)] = [:]
            while let e = try r.next() {
                if let to = filter.to, e.time > to { break }
                guard try f.matches(e, r.names) else { continue }
                if case .callback(let d, .sendResult(let id, let uid?, _, nil)) = e.event {
                    plan.localIds[[Int64(d), id]] = uid
                    plan.senders[uid] = d
                }
                if case .kernel(.deliver(_, let d, false)) = e.event { lastDeliver[d] = (e.eventIndex, e.index) }
                let s = steps(e, names: r.names, plan: plan, lastDeliver: lastDeliver)
                for k in s.paths { plan.step(k, e.index) }
                if let (k, _) = s.deliver { plan.steps[k, default: 0] += 1 }
            }
        }
        // The sender's insert comes before its sendResult: pass 1 saw the insert without the uid.
        // Count the shared steps now that every path is known.
        do {
            let r = try open()
            var f = TraceFilterState(filter)
            while let e = try r.next() {
                if let to = filter.to, e.time > to { break }
                guard try f.matches(e, r.names) else { continue }
                if let uid = steps(e, names: r.names, plan: plan, lastDeliver: [:]).shared {
                    for k in plan.paths(uid) {
                        plan.steps[k, default: 0] += 1
                        plan.last[k] = max(plan.last[k] ?? 0, e.index)
                    }
                }
            }
        }

        // Pass 2: emit.
        let r = try open()
        var f = TraceFilterState(filter)
        var w = Writer(out: out)
        w.begin()
        var cursor: Int64 = Int64.min  // global display cursor, ns
        var lastDeliver: [Int: (event: UInt64?, record: UInt64)] = [:]
        var deliverSlices: [Int: (tid: Int, pid: Int, ns: Int64)] = [:]  // by device: its last delivery
        var links: [UInt64: (first: Int64, last: Int64, device: Int?)] = [:]
        var started: Set<PathKey> = []
        var slices = 0, flows = 0
        let oneMicro: Int64 = 1_000

        func flow(_ k: PathKey, record: UInt64, pid: Int, tid: Int, ns: Int64) {
            guard (plan.steps[k] ?? 0) >= 2 else { return }
            let ph: String
            if !started.contains(k) {
                started.insert(k)
                ph = "s"
            } else if plan.last[k] == record {
                ph = "f"
            } else {
                ph = "t"
            }
            w.flow(ph: ph, id: flowId(k), pid: pid, tid: tid, ns: ns + 1, uid: k.uid)
            flows += 1
        }

        while let e = try r.next() {
            if let to = filter.to, e.time > to { break }
            guard try f.matches(e, r.names) else { continue }
            let names = r.names
            let (pid, tid) = track(e.event.actor)
            w.declare(pid: pid, tid: tid, actor: e.event.actor, names: names)
            let ns = max(e.time.nanoseconds, cursor)
            cursor = ns + oneMicro
            w.slice(e, pid: pid, tid: tid, ns: ns, names: names, epochMs: r.epochMs)
            slices += 1
            if case .link(let c) = e.event.actor {
                let dev = e.event.devices(names).first
                if let l = links[c.raw] { links[c.raw] = (l.first, ns + oneMicro, l.device ?? dev) } else { links[c.raw] = (ns, ns + oneMicro, dev) }
            }
            if case .kernel(.deliver(_, let d, false)) = e.event {
                lastDeliver[d] = (e.eventIndex, e.index)
                deliverSlices[d] = (tid, pid, ns)
            }
            let s = steps(e, names: names, plan: plan, lastDeliver: lastDeliver)
            if let uid = s.shared { for k in plan.paths(uid) { flow(k, record: e.index, pid: pid, tid: tid, ns: ns) } }
            if let (k, rec) = s.deliver, let ds = deliverSlices[k.device] {
                flow(k, record: rec, pid: ds.pid, tid: ds.tid, ns: ds.ns)
            }
            for k in s.paths { flow(k, record: e.index, pid: pid, tid: tid, ns: ns) }
        }
        // Connection lifetimes: a parent slice around each link's records (starts 1 ns earlier
        // so it is the outer slice).
        for c in links.keys.sorted() {
            let l = links[c]!
            let id = ConnectionID(c)
            let name = "connection \(id)" + (l.device.map { " " + r.names.device($0) } ?? "")
            w.span(name: name, pid: linksPid, tid: linkTid(id), startNs: l.first - 1, endNs: l.last)
        }
        w.end()
        return (slices, flows)
    }

    static func track(_ a: TraceActor) -> (Int, Int) {
        switch a {
        case .device(let d): (devicesPid, deviceTid(d))
        case .server: (serverPid, serverTid)
        case .link(let c): (linksPid, linkTid(c))
        case .world: (worldPid, worldTid)
        }
    }

    /// A stable numeric flow id per path (FNV-1a of uid and device, 52 bits: exact in a JSON double).
    static func flowId(_ k: PathKey) -> UInt64 {
        StableHash.fnv1a(Array(k.uid.utf8) + [0] + Array(String(k.device).utf8)) & 0xF_FFFF_FFFF_FFFF
    }

    /// µs with 3 decimals from ns.
    static func micros(_ ns: Int64) -> String {
        let neg = ns < 0
        let m = ns.magnitude
        var frac = String(m % 1000)
        while frac.count < 3 { frac = "0" + frac }
        return (neg ? "-" : "") + String(m / 1000) + "." + frac
    }

    struct Writer {
        let out: TextOutput
        var first = true
        var declared: Set<Int> = []
        var processes: Set<Int> = []

        mutating func begin() { out.write("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n") }
        mutating func end() {
            out.write("\n],\"otherData\":{\"generator\":\"imsim trace export\"}}\n")
        }

        mutating func event(_ s: String) {
            if !first { out.write(",\n") }
            first = false
            out.write(s)
        }

        mutating func declare(pid: Int, tid: Int, actor: TraceActor, names: TraceNames) {
            if processes.insert(pid).inserted {
                let pname = [devicesPid: "devices", serverPid: "server", linksPid: "links", worldPid: "world"][pid]!
                event("{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":\(pid),\"tid\":\(pid),\"args\":{\"name\":\"\(pname)\"}}")
                event("{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":\(pid),\"tid\":\(pid),\"args\":{\"sort_index\":\(pid)}}")
            }
            guard declared.insert(tid).inserted else { return }
            var s = "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":\(pid),\"tid\":\(tid),\"args\":{\"name\":"
            JSONText.string(actor.name(names), into: &s)
            s += "}}"
            event(s)
            event("{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":\(pid),\"tid\":\(tid),\"args\":{\"sort_index\":\(tid)}}")
        }

        mutating func slice(_ e: TraceEntry, pid: Int, tid: Int, ns: Int64, names: TraceNames, epochMs: Int64) {
            var s = "{\"ph\":\"X\",\"name\":"
            JSONText.string(label(e.event, names: names), into: &s)
            s += ",\"cat\":"
            JSONText.string(String(e.event.kindName.prefix { $0 != "." }), into: &s)
            s += ",\"ts\":\(micros(ns)),\"dur\":1,\"pid\":\(pid),\"tid\":\(tid),\"args\":{\"record\":\(e.index)"
            s += ",\"event\":" + (e.eventIndex.map { String($0) } ?? "null")
            s += ",\"time\":\"\(TraceText.seconds(e.time.nanoseconds, digits: 9))\",\"kind\":"
            JSONText.string(e.event.kindName, into: &s)
            e.event.fields(names).jsonMembers(into: &s, leadingComma: true)
            s += "}}"
            event(s)
        }

        mutating func flow(ph: String, id: UInt64, pid: Int, tid: Int, ns: Int64, uid: String) {
            var s = "{\"ph\":\"\(ph)\",\"name\":\"message\",\"cat\":\"message\",\"id\":\(id),\"ts\":\(micros(ns)),\"pid\":\(pid),\"tid\":\(tid)"
            if ph != "s" { s += ",\"bp\":\"e\"" }
            s += ",\"args\":{\"uid\":"
            JSONText.string(uid, into: &s)
            s += "}}"
            event(s)
        }

        mutating func span(name: String, pid: Int, tid: Int, startNs: Int64, endNs: Int64) {
            var s = "{\"ph\":\"X\",\"name\":"
            JSONText.string(name, into: &s)
            s += ",\"cat\":\"link\",\"ts\":\(micros(startNs)),\"dur\":\(micros(endNs - startNs)),\"pid\":\(pid),\"tid\":\(tid),\"args\":{}}"
            event(s)
        }

        /// A short slice title: the kind plus its most telling field.
        func label(_ e: TraceEvent, names: TraceNames) -> String {
            let k = e.kindName
            switch e {
            case .clientEffect(_, .send(let b, let frames)):
                return "send " + frames.map(\.description).joined(separator: ", ") + " (\(b.count) B)"
            case .serverEffect(.send(_, let b, let frames)):
                return "send " + frames.map(\.description).joined(separator: ", ") + " (\(b.count) B)"
            case .callback(_, .received(let m, _, _, _)): return "received \(m.conversation) \(m.messageUId ?? "-")"
            case .callback(_, .connectionStatus(let s)): return "status \(s)"
            case .serverEvent(.messageAccepted(let m)): return "accepted \(m.messageUId)"
            case .serverEvent(.fannedOut(let u, _, let d, _, let via)): return "fan-out \(u) → \(d) (\(via.rawValue))"
            case .serverEvent(.dropped(let u, _, let user, let why)): return "dropped \(u ?? "-") for \(user ?? "all"): \(why.rawValue)"
            case .clientNote(_, .stored(_, let u, let c, _, _, let new)): return "stored \(c) \(u ?? "-")" + (new ? "" : " (update)")
            case .clientNote(_, .state(let a, let b, _)): return "state \(a) → \(b)"
            case .meta(.violation(let v)): return "VIOLATION \(v.oracle)"
            default: return k
            }
        }
    }
}
