import SimKernel

/// The names of a run's random streams (Docs/world.md, "Random streams"). Every random choice
/// comes from a stream named by component, kind and entity and derived from the run seed by a
/// stable hash of the name. Entities are named by their scenario ids, never by array index, so
/// removing a user or a device, or enabling another fault kind, leaves every other stream alone.
/// New kinds (fault kinds, workload kinds) get their own names automatically.
enum StreamKey {
    static func workload(user: String, _ kind: WorkloadKind) -> String { "workload/\(user)/\(kind)" }
    static func workloadChance(user: String, _ what: String) -> String { "workload/\(user)/\(what)" }
    /// A random fault of `kind` on one device (`entity` = device id) or world-wide (`server`).
    static func fault(_ kind: FaultKind, entity: String) -> String { "faults/\(kind.rawValue)/\(entity)" }
    static func swarm(_ kind: FaultKind) -> String { "swarm/\(kind.rawValue)" }
    /// The path between one device and the server.
    static func network(device: String, _ purpose: String) -> String { "network/\(device)/\(purpose)" }
    static func start(device: String) -> String { "start/\(device)" }
    /// The seed of one device's simulated disk (torn writes, I/O error draws inside the VFS).
    static func storage(device: String) -> String { "storage/\(device)" }
    static func active(user: String) -> String { "population/active/\(user)" }
}

/// A chain of occurrences (one workload kind of one user, one fault kind on one device): the
/// gaps come from `arrival`, one draw per occurrence whatever the occurrence then does; each
/// occurrence's details (peer, content, duration, …) come from a fresh stream of its own, so a
/// detail skipped (the device was offline) or added never moves the times or later details.
struct OccurrenceStreams {
    var arrival: RandomStream
    private let detailHash: UInt64
    private(set) var occurrences: UInt64 = 0

    init(_ streams: RandomStreams, key: String) {
        arrival = streams.stream(key + "/arrival")
        detailHash = StableHash.fnv1a(key + "/detail")
    }

    /// The detail stream of the next occurrence.
    mutating func nextDetail(_ streams: RandomStreams) -> RandomStream {
        occurrences += 1
        return RandomStream(seed: streams.streamSeed(nameHash: detailHash, occurrences))
    }
}

/// The random streams of one device's path to the server, one per purpose: a latency draw never
/// shifts a segmentation, refusal or reset draw, and no device's draws depend on another's.
struct LinkStreams {
    var uplink: RandomStream
    var downlink: RandomStream
    var connect: RandomStream
    var segments: RandomStream
    var refuse: RandomStream
    var reset: RandomStream

    init(_ streams: RandomStreams, device: String) {
        uplink = streams.stream(StreamKey.network(device: device, "latency/up"))
        downlink = streams.stream(StreamKey.network(device: device, "latency/down"))
        connect = streams.stream(StreamKey.network(device: device, "connect"))
        segments = streams.stream(StreamKey.network(device: device, "segments"))
        refuse = streams.stream(StreamKey.network(device: device, "refuse"))
        reset = streams.stream(StreamKey.network(device: device, "reset"))
    }
}

/// One user's workload streams.
struct UserStreams {
    /// Per `WorkloadKind.rawValue`.
    var kinds: [OccurrenceStreams]
    /// The "recall it" / "tap resend" decisions after a send result.
    var recall: RandomStream
    var resend: RandomStream

    init(_ streams: RandomStreams, user: String) {
        kinds = WorkloadKind.allCases.map { OccurrenceStreams(streams, key: StreamKey.workload(user: user, $0)) }
        recall = streams.stream(StreamKey.workloadChance(user: user, "recallChance"))
        resend = streams.stream(StreamKey.workloadChance(user: user, "resendChance"))
    }
}

/// Rendezvous (highest-random-weight) choice: the element whose hash mixed with one drawn word
/// is smallest. Removing an element changes the choice only where that element was chosen, so
/// removing a user leaves every other user's picks among the rest as they were.
func rendezvousPick(_ ids: [String], hashes: [UInt64], _ rng: inout RandomStream) -> String? {
    guard !ids.isEmpty else { return nil }
    let w = rng.next()
    var best = 0
    var bestScore = UInt64.max
    for i in hashes.indices {
        let score = StableHash.mix(w ^ hashes[i])
        if score < bestScore { bestScore = score; best = i }
    }
    return ids[best]
}
