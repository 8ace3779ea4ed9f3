import SimKernel

/// The draws of one purpose on one link, each from a stream of its own keyed by the instant of
/// the draw (and its rank among the draws of that instant): a write's latency and segmentation
/// do not depend on how many writes the link carried before it. (A sequential stream per link
/// coupled every user to every other: removing a user removed writes from its peers' links and
/// moved each later draw, so a failure that hung on one split or one latency could not lose the
/// users around it.)
struct InstantDraws {
    private let nameHash: UInt64
    private var instant: Int64 = .min
    private var rank: UInt64 = 0

    init(_ key: String) { nameHash = StableHash.fnv1a(key) }

    /// The stream of the next draw at `t`.
    mutating func next(_ streams: RandomStreams, at t: SimTime) -> RandomStream {
        RandomStream(seed: nextSeed(streams, at: t))
    }

    /// The seed of the stream of the next draw at `t` (for `RandomStream.firstChance`).
    mutating func nextSeed(_ streams: RandomStreams, at t: SimTime) -> UInt64 {
        if t.nanoseconds == instant { rank += 1 } else { instant = t.nanoseconds; rank = 0 }
        let index = StableHash.mix(UInt64(bitPattern: instant)) ^ rank
        return streams.streamSeed(nameHash: nameHash, index)
    }
}

/// The random draws of one device's path to the server, one kind per purpose: a latency draw
/// never shifts a segmentation, refusal or reset draw, no device's draws depend on another's,
/// and no draw depends on the link's earlier traffic (`InstantDraws`).
struct LinkStreams {
    var uplink: InstantDraws
    var downlink: InstantDraws
    var connect: InstantDraws
    var segments: InstantDraws
    var refuse: InstantDraws
    var reset: InstantDraws

    init(device: String) {
        uplink = InstantDraws(StreamKey.network(device: device, "latency/up"))
        downlink = InstantDraws(StreamKey.network(device: device, "latency/down"))
        connect = InstantDraws(StreamKey.network(device: device, "connect"))
        segments = InstantDraws(StreamKey.network(device: device, "segments"))
        refuse = InstantDraws(StreamKey.network(device: device, "refuse"))
        reset = InstantDraws(StreamKey.network(device: device, "reset"))
    }
}
