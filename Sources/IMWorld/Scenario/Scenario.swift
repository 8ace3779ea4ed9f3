import Foundation
import IMWire
import SimKernel

/// A scenario file (`Docs/scenario-format.md`): who exists, how the network and the cores are
/// configured, what happens when (script), what happens at random (workload, faults, swarm), and
/// when everything heals (liveness). A run is a pure function of (scenario, seed, build).
public struct Scenario: Codable, Sendable, Equatable {
    public var name: String
    public var description: String?
    /// Length of the active phase; the liveness phase follows.
    public var duration: DurationValue
    /// The seed used when the command line gives none.
    public var seed: UInt64?
    /// Server epoch (ms since 1970) at simulated time zero.
    public var epochMs: Int64?
    public var users: [UserSpec]
    public var population: PopulationSpec?
    public var groups: [GroupSpec]
    public var chatrooms: [ChatroomSpec]
    public var network: NetworkConditions
    public var server: ServerSettings
    public var client: ClientSettings
    public var script: [ScriptStep]
    public var workload: WorkloadSpec?
    public var faults: FaultSpec?
    /// TigerBeetle-style swarm testing: each seed enables a random subset of the fault kinds in
    /// `faults.random` with rates scaled between 0 and 2×.
    public var swarm: Bool
    public var liveness: LivenessSpec
    /// Random workload and random-fault occurrences before this time are drawn but not carried
    /// out; each chain keeps its times and details, so what follows runs as before except for
    /// what the skipped occurrences caused (the shrinker's cut of a run's random prefix).
    public var randomFrom: DurationValue?

    public static let defaultEpochMs: Int64 = 1_767_225_600_000   // 2026-01-01T00:00:00Z

    package static let keys = ["name", "description", "duration", "seed", "epochMs", "users", "population", "groups",
                       "chatrooms", "network", "server", "client", "script", "workload", "faults", "swarm", "liveness", "randomFrom"]

    enum CodingKeys: String, CodingKey {
        case name, description, duration, seed, epochMs, users, population, groups, chatrooms, network, server,
             client, script, workload, faults, swarm, liveness, randomFrom
    }

    public init(name: String, duration: SimDuration, users: [UserSpec]) {
        self.name = name
        self.duration = DurationValue(duration)
        self.users = users
        population = nil
        groups = []
        chatrooms = []
        network = NetworkConditions()
        server = ServerSettings()
        client = ClientSettings()
        script = []
        workload = nil
        faults = nil
        swarm = false
        liveness = LivenessSpec()
    }

    public init(from decoder: Decoder) throws {
        try decoder.rejectUnknownKeys(allowed: Self.keys)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        description = try c.decodeIfPresent(String.self, forKey: .description)
        duration = try c.decode(DurationValue.self, forKey: .duration)
        seed = try c.decodeIfPresent(UInt64.self, forKey: .seed)
        epochMs = try c.decodeIfPresent(Int64.self, forKey: .epochMs)
        users = try c.decodeIfPresent([UserSpec].self, forKey: .users) ?? []
        population = try c.decodeIfPresent(PopulationSpec.self, forKey: .population)
        groups = try c.decodeIfPresent([GroupSpec].self, forKey: .groups) ?? []
        chatrooms = try c.decodeIfPresent([ChatroomSpec].self, forKey: .chatrooms) ?? []
        network = try c.decodeIfPresent(NetworkConditions.self, forKey: .network) ?? NetworkConditions()
        server = try c.decodeIfPresent(ServerSettings.self, forKey: .server) ?? ServerSettings()
        client = try c.decodeIfPresent(ClientSettings.self, forKey: .client) ?? ClientSettings()
        script = try c.decodeIfPresent([ScriptStep].self, forKey: .script) ?? []
        workload = try c.decodeIfPresent(WorkloadSpec.self, forKey: .workload)
        faults = try c.decodeIfPresent(FaultSpec.self, forKey: .faults)
        swarm = try c.decodeIfPresent(Bool.self, forKey: .swarm) ?? false
        liveness = try c.decodeIfPresent(LivenessSpec.self, forKey: .liveness) ?? LivenessSpec()
        randomFrom = try c.decodeIfPresent(DurationValue.self, forKey: .randomFrom)
    }
}

// MARK: - People and places

public struct UserSpec: Codable, Sendable, Equatable {
    public var id: String
    public var devices: [DeviceSpec]
    /// Token state on the server: valid (default), expired (31020) or revoked (31004).
    public var token: TokenState
    /// Banned users cannot connect (31009).
    public var banned: Bool

    public enum TokenState: String, Codable, Sendable { case valid, expired, revoked }

    public init(id: String, devices: [DeviceSpec]? = nil) {
        self.id = id
        self.devices = devices ?? [DeviceSpec(id: "\(id)-phone")]
        token = .valid
        banned = false
    }

    enum CodingKeys: String, CodingKey { case id, devices, token, banned }

    public init(from decoder: Decoder) throws {
        try decoder.rejectUnknownKeys(allowed: ["id", "devices", "token", "banned"])
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        devices = try c.decodeIfPresent([DeviceSpec].self, forKey: .devices) ?? [DeviceSpec(id: "\(id)-phone")]
        token = try c.decodeIfPresent(TokenState.self, forKey: .token) ?? .valid
        banned = try c.decodeIfPresent(Bool.self, forKey: .banned) ?? false
    }
}

public struct DeviceSpec: Codable, Sendable, Equatable {
    public var id: String
    public var platform: Platform
    /// Device wall clock relative to the server's (e.g. `"-3s"`; negative = behind).
    public var clockOffset: String?
    /// Clock drift in parts per million.
    public var clockDriftPpm: Int64
    /// Overrides of the scenario's network conditions for this device.
    public var network: NetworkConditions?
    /// The app starts and calls connect at the beginning of the run (default true).
    public var autoConnect: Bool
    /// When the app starts (default: a few seconds of random jitter at the start).
    public var startAt: DurationValue?

    public init(id: String, platform: Platform = .mobile) {
        self.id = id
        self.platform = platform
        clockOffset = nil
        clockDriftPpm = 0
        network = nil
        autoConnect = true
        startAt = nil
    }

    enum CodingKeys: String, CodingKey { case id, platform, clockOffset, clockDriftPpm, network, autoConnect, startAt }

    public init(from decoder: Decoder) throws {
        try decoder.rejectUnknownKeys(allowed: ["id", "platform", "clockOffset", "clockDriftPpm", "network", "autoConnect", "startAt"])
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        platform = try c.decodeIfPresent(Platform.self, forKey: .platform) ?? .mobile
        clockOffset = try c.decodeIfPresent(String.self, forKey: .clockOffset)
        if let o = clockOffset, (try? SimDuration(parsing: o)) == nil {
            throw DecodingError.dataCorruptedError(forKey: .clockOffset, in: c, debugDescription: "invalid duration \"\(o)\" (e.g. \"-3s\", \"250ms\")")
        }
        clockDriftPpm = try c.decodeIfPresent(Int64.self, forKey: .clockDriftPpm) ?? 0
        if abs(clockDriftPpm) >= 100_000 {
            throw DecodingError.dataCorruptedError(forKey: .clockDriftPpm, in: c, debugDescription: "drift must be below 100000 ppm (10%)")
        }
        network = try c.decodeIfPresent(NetworkConditions.self, forKey: .network)
        autoConnect = try c.decodeIfPresent(Bool.self, forKey: .autoConnect) ?? true
        startAt = try c.decodeIfPresent(DurationValue.self, forKey: .startAt)
    }

    public var clockOffsetMs: Int64 {
        guard let o = clockOffset, let d = try? SimDuration(parsing: o) else { return 0 }
        return d.nanoseconds / 1_000_000
    }
}

public struct GroupSpec: Codable, Sendable, Equatable {
    public var id: String
    public var members: [String]
    /// Members muted in this group (22408).
    public var muted: [String]

    public init(id: String, members: [String]) {
        self.id = id
        self.members = members
        muted = []
    }

    enum CodingKeys: String, CodingKey { case id, members, muted }
    public init(from decoder: Decoder) throws {
        try decoder.rejectUnknownKeys(allowed: ["id", "members", "muted"])
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        members = try c.decode([String].self, forKey: .members)
        muted = try c.decodeIfPresent([String].self, forKey: .muted) ?? []
    }
}

public struct ChatroomSpec: Codable, Sendable, Equatable {
    public var id: String
    /// Users whose devices join the room when they first connect.
    public var members: [String]
    /// History count on join (-1 none, 0 default 10, ≤ 50).
    public var joinCount: Int32
    /// Users never kicked for being offline and never dropped by the quota.
    public var whitelist: [String]
    /// Exempt from auto-destroy.
    public var keepAlive: Bool

    public init(id: String, members: [String]) {
        self.id = id
        self.members = members
        joinCount = 10
        whitelist = []
        keepAlive = true
    }

    enum CodingKeys: String, CodingKey { case id, members, joinCount, whitelist, keepAlive }
    public init(from decoder: Decoder) throws {
        try decoder.rejectUnknownKeys(allowed: ["id", "members", "joinCount", "whitelist", "keepAlive"])
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        members = try c.decodeIfPresent([String].self, forKey: .members) ?? []
        joinCount = try c.decodeIfPresent(Int32.self, forKey: .joinCount) ?? 10
        whitelist = try c.decodeIfPresent([String].self, forKey: .whitelist) ?? []
        keepAlive = try c.decodeIfPresent(Bool.self, forKey: .keepAlive) ?? true
    }
}

/// Generated users for large scenarios: `u0001 … uNNNN`, each with one device, randomly
/// grouped (drawn from the `population` stream, so the same seed builds the same world).
public struct PopulationSpec: Codable, Sendable, Equatable {
    public var users: Int
    public var idPrefix: String
    /// Fractions of devices per platform, e.g. `{"mobile": 0.8, "desktop": 0.15, "web": 0.05}`.
    public var platforms: [String: Double]
    /// Fraction of users with a second device (multi-device sync).
    public var secondDeviceFraction: Double
    public var groups: Int
    public var groupSize: Int
    /// Generated chatrooms, each joined by `chatroomMembers` random users.
    public var chatrooms: Int
    public var chatroomMembers: Int

    enum CodingKeys: String, CodingKey { case users, idPrefix, platforms, secondDeviceFraction, groups, groupSize, chatrooms, chatroomMembers }
    public init(from decoder: Decoder) throws {
        try decoder.rejectUnknownKeys(allowed: CodingKeys.allNames)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        users = try c.decode(Int.self, forKey: .users)
        guard (1...100_000).contains(users) else {
            throw DecodingError.dataCorruptedError(forKey: .users, in: c, debugDescription: "must be between 1 and 100000")
        }
        idPrefix = try c.decodeIfPresent(String.self, forKey: .idPrefix) ?? "u"
        platforms = try c.decodeIfPresent([String: Double].self, forKey: .platforms) ?? ["mobile": 1]
        for key in platforms.keys.sorted() where Platform(rawValue: key) == nil {
            throw ScenarioError(path: ScenarioError.path(c.codingPath + [CodingKeys.platforms, AnyKey(stringValue: key)]),
                                message: "unknown platform (mobile, ios, android, desktop, web)")
        }
        secondDeviceFraction = try c.decodeIfPresent(Double.self, forKey: .secondDeviceFraction) ?? 0
        groups = try c.decodeIfPresent(Int.self, forKey: .groups) ?? 0
        groupSize = try c.decodeIfPresent(Int.self, forKey: .groupSize) ?? 8
        chatrooms = try c.decodeIfPresent(Int.self, forKey: .chatrooms) ?? 0
        chatroomMembers = try c.decodeIfPresent(Int.self, forKey: .chatroomMembers) ?? 0
    }
}

extension CaseIterable where Self: RawRepresentable, RawValue == String {
    static var allNames: [String] { allCases.map(\.rawValue) }
}
extension PopulationSpec.CodingKeys: CaseIterable {}

// MARK: - Liveness

public struct LivenessSpec: Codable, Sendable, Equatable {
    /// When faults stop and every device comes to the foreground with network (default: at the
    /// end of `duration`).
    public var healAt: DurationValue?
    /// How long after the heal every device must have converged.
    public var deadline: DurationValue

    public init() {
        healAt = nil
        deadline = DurationValue(.minutes(3))
    }

    enum CodingKeys: String, CodingKey { case healAt, deadline }
    public init(from decoder: Decoder) throws {
        try decoder.rejectUnknownKeys(allowed: ["healAt", "deadline"])
        let c = try decoder.container(keyedBy: CodingKeys.self)
        healAt = try c.decodeIfPresent(DurationValue.self, forKey: .healAt)
        deadline = try c.decodeIfPresent(DurationValue.self, forKey: .deadline) ?? DurationValue(.minutes(3))
    }
}
