/// Where a connection's inbox sync stands (wire-protocol §4), as `ClientNote.syncState` reports
/// it. `name` is its one stable text (`offline`, `linkCheck`, `pulling#<page>`, `idle`,
/// `inSync`): trace records store it and `init(name:)` reads it back.
public enum SyncState: Sendable, Hashable, CustomStringConvertible {
    /// No session.
    case offline
    /// Connected; the web SDK's PINGREQ before the first pull is outstanding.
    case linkCheck
    /// A pull is running; `page` 1 is the first of this sync run.
    case pulling(page: Int)
    /// Connected, no pull running, not (yet) in sync.
    case idle
    /// The last pull ended with `finished` and no newer notify is queued.
    case inSync

    public var name: String {
        switch self {
        case .offline: "offline"
        case .linkCheck: "linkCheck"
        case .pulling(let page): "pulling#\(page)"
        case .idle: "idle"
        case .inSync: "inSync"
        }
    }

    public var description: String { name }

    public var isPulling: Bool { if case .pulling = self { true } else { false } }

    /// Reads `name` back; nil for any other text.
    public init?(name: String) {
        switch name {
        case "offline": self = .offline
        case "linkCheck": self = .linkCheck
        case "idle": self = .idle
        case "inSync": self = .inSync
        default:
            guard name.hasPrefix("pulling#"), let page = Int(name.dropFirst(8)), page >= 0 else { return nil }
            self = .pulling(page: page)
        }
    }
}
