import IMWire
import SimKernel

/// The names of a run's random streams (Docs/world.md, "Random streams"). Every random choice
/// comes from a stream named by component, kind and entity and derived from the run seed by a
/// stable hash of the name. Entities are named by their scenario ids, never by array index, so
/// removing a user or a device, or enabling another fault kind, leaves every other stream alone.
/// New kinds (fault kinds, workload kinds) get their own names automatically.
enum StreamKey {
    static func workload(user: String, _ kind: WorkloadKind) -> String { "workload/" + user + "/" + kind.streamName }
    static func workloadChance(user: String, _ what: String) -> String { "workload/\(user)/\(what)" }
    /// The user's recall / resend decisions about one message, indexed by a hash of the message
    /// (conversation, type, content, the instant it was written): a message keeps its decisions
    /// whatever else the user sent before it.
    static func messageDecisions(user: String) -> String { "workload/\(user)/message" }
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

/// One user's workload streams.
struct UserStreams {
    /// Per `WorkloadKind.rawValue`.
    var kinds: [OccurrenceStreams]
    /// Name hash of the per-message decision streams (`StreamKey.messageDecisions`).
    let messageHash: UInt64

    init(_ streams: RandomStreams, user: String) {
        kinds = WorkloadKind.allCases.map { OccurrenceStreams(streams, key: StreamKey.workload(user: user, $0)) }
        messageHash = StableHash.fnv1a(StreamKey.messageDecisions(user: user))
    }

    /// The decision stream of one message: keyed by what the message is and when it was written,
    /// not by how many results came before (a per-user stream drawn at every send result made
    /// the recall of message n depend on every earlier send: removing a workload kind or an early
    /// send moved every later recall and resend, so such failures could not be shrunk).
    func messageDecisions(_ streams: RandomStreams, conversation: ConversationKey, objectName: String, content: String,
                          at t: SimTime) -> RandomStream {
        var h = StableHash.fnv1a(conversation.description)
        h = StableHash.combine(h, StableHash.fnv1a(objectName))
        h = StableHash.combine(h, StableHash.fnv1a(content))
        h = StableHash.combine(h, UInt64(bitPattern: t.nanoseconds))
        return RandomStream(seed: streams.streamSeed(nameHash: messageHash, h))
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

extension WorkloadKind {
    /// The case name, as `"\(kind)"` prints it (the stream names use it), without the runtime's
    /// reflection: that cost ~7k instructions per name, 19 names per user at every world build
    /// (a third of mixed-1k's set-up). `StreamDisciplineTests.workloadStreamNamesAreTheCaseNames`.
    var streamName: String {
        switch self {
        case .privateMessage: "privateMessage"
        case .groupMessage: "groupMessage"
        case .chatroomMessage: "chatroomMessage"
        case .like: "like"
        case .churn: "churn"
        case .read: "read"
        case .typing: "typing"
        case .burstStart: "burstStart"
        case .burstLike: "burstLike"
        case .recall: "recall"
        case .rejoin: "rejoin"
        case .history: "history"
        case .historyPage: "historyPage"
        case .kvRead: "kvRead"
        case .kvWrite: "kvWrite"
        case .reenter: "reenter"
        case .reconnect: "reconnect"
        case .reconnectBack: "reconnectBack"
        case .resend: "resend"
        }
    }
}
