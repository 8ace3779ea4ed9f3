import SimKernel

/// Random traffic (all draws from the `workload` stream family, one stream per user).
/// Rates are per user (per member for chatrooms); inter-arrival times are exponential.
public struct WorkloadSpec: Codable, Sendable, Equatable {
    /// Private messages to a random contact (users who share a group, or any user).
    public var privateRate: RateValue?
    /// Messages to a random group the user is in.
    public var groupRate: RateValue?
    /// Ordinary (high-priority) chatroom messages per member.
    public var chatroomRate: RateValue?
    /// Low-priority chatroom messages ("likes") per member, of type `likeType`.
    public var likeRate: RateValue?
    public var likeType: String
    /// Like storms: every `every`, for `length`, each member sends likes at `rate`.
    public var bursts: BurstSpec?
    /// Chatroom quit-and-rejoin churn per member.
    public var churnRate: RateValue?
    /// Read receipts / clear unread on a random conversation.
    public var readRate: RateValue?
    /// Probability that a sent message is recalled a little later.
    public var recallProbability: ProbabilityValue
    /// Typing-status (STATUS, never stored) messages in private chats.
    public var typingRate: RateValue?
    /// Fraction of users that generate traffic at all.
    public var activeFraction: ProbabilityValue

    // App behaviours that exercise the SDK's less-travelled paths (Docs/bugs.md says which bug
    // each one can reveal). All off by default.

    /// The user opens a random conversation and pages back through its local history
    /// (`historyPages` pages of 20 (default 3), `historyInterval` apart (default 2 s)).
    public var historyRate: RateValue?
    public var historyPages: Int?
    public var historyInterval: DurationValue?
    /// The app reads its room's attributes (`getChatroomKV`), per member.
    public var kvReadRate: RateValue?
    /// The user sets one of a few attributes of its room, per member.
    public var kvWriteRate: RateValue?
    /// The app joins its room again while in it (re-entering the room screen), per member.
    public var reenterRate: RateValue?
    /// The user disconnects (`disconnect()`) and connects again 2–30 s later.
    public var reconnectRate: RateValue?
    /// Probability that the user taps "resend" on a message that failed, 1–30 s later.
    public var resendProbability: ProbabilityValue?

    public struct BurstSpec: Codable, Sendable, Equatable {
        public var every: DurationValue
        public var length: DurationValue
        public var rate: RateValue
        enum CodingKeys: String, CodingKey { case every, length, rate }
        public init(from decoder: Decoder) throws {
            try decoder.rejectUnknownKeys(allowed: ["every", "length", "rate"])
            let c = try decoder.container(keyedBy: CodingKeys.self)
            every = try c.decode(DurationValue.self, forKey: .every)
            length = try c.decode(DurationValue.self, forKey: .length)
            rate = try c.decode(RateValue.self, forKey: .rate)
        }
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case privateRate, groupRate, chatroomRate, likeRate, likeType, bursts, churnRate, readRate, recallProbability,
             typingRate, activeFraction, historyRate, historyPages, historyInterval, kvReadRate, kvWriteRate, reenterRate,
             reconnectRate, resendProbability
    }

    public init() {
        likeType = "App:Like"
        recallProbability = ProbabilityValue(.never)
        activeFraction = ProbabilityValue(.always)
    }

    public init(from decoder: Decoder) throws {
        try decoder.rejectUnknownKeys(allowed: CodingKeys.allCases.map(\.rawValue))
        let c = try decoder.container(keyedBy: CodingKeys.self)
        privateRate = try c.decodeIfPresent(RateValue.self, forKey: .privateRate)
        groupRate = try c.decodeIfPresent(RateValue.self, forKey: .groupRate)
        chatroomRate = try c.decodeIfPresent(RateValue.self, forKey: .chatroomRate)
        likeRate = try c.decodeIfPresent(RateValue.self, forKey: .likeRate)
        likeType = try c.decodeIfPresent(String.self, forKey: .likeType) ?? "App:Like"
        bursts = try c.decodeIfPresent(BurstSpec.self, forKey: .bursts)
        churnRate = try c.decodeIfPresent(RateValue.self, forKey: .churnRate)
        readRate = try c.decodeIfPresent(RateValue.self, forKey: .readRate)
        recallProbability = try c.decodeIfPresent(ProbabilityValue.self, forKey: .recallProbability) ?? ProbabilityValue(.never)
        typingRate = try c.decodeIfPresent(RateValue.self, forKey: .typingRate)
        activeFraction = try c.decodeIfPresent(ProbabilityValue.self, forKey: .activeFraction) ?? ProbabilityValue(.always)
        historyRate = try c.decodeIfPresent(RateValue.self, forKey: .historyRate)
        historyPages = try c.decodeIfPresent(Int.self, forKey: .historyPages)
        if let p = historyPages, !(1...1000).contains(p) {
            throw DecodingError.dataCorruptedError(forKey: .historyPages, in: c, debugDescription: "must be 1…1000")
        }
        historyInterval = try c.decodeIfPresent(DurationValue.self, forKey: .historyInterval)
        kvReadRate = try c.decodeIfPresent(RateValue.self, forKey: .kvReadRate)
        kvWriteRate = try c.decodeIfPresent(RateValue.self, forKey: .kvWriteRate)
        reenterRate = try c.decodeIfPresent(RateValue.self, forKey: .reenterRate)
        reconnectRate = try c.decodeIfPresent(RateValue.self, forKey: .reconnectRate)
        resendProbability = try c.decodeIfPresent(ProbabilityValue.self, forKey: .resendProbability)
    }
}

/// Random faults (the `faults` stream family). Scripted faults are script actions.
public struct FaultSpec: Codable, Sendable, Equatable {
    public var random: [FaultKind: FaultRate]

    public init(random: [FaultKind: FaultRate] = [:]) { self.random = random }

    /// Kinds in a fixed order (never iterate the dictionary itself).
    public var enabledKinds: [FaultKind] { FaultKind.allCases.filter { random[$0] != nil } }

    enum CodingKeys: String, CodingKey { case random }

    public init(from decoder: Decoder) throws {
        try decoder.rejectUnknownKeys(allowed: ["random"])
        let c = try decoder.container(keyedBy: CodingKeys.self)
        random = [:]
        if c.contains(.random) {
            let r = try c.nestedContainer(keyedBy: AnyKey.self, forKey: .random)
            let rDecoder = try c.superDecoder(forKey: .random)
            try rDecoder.rejectUnknownKeys(allowed: FaultKind.allCases.map(\.rawValue))
            for key in r.allKeys.sorted(by: { $0.stringValue < $1.stringValue }) {
                let kind = FaultKind(rawValue: key.stringValue)!
                random[kind] = try r.decode(FaultRate.self, forKey: key)
            }
        }
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        var r = c.nestedContainer(keyedBy: AnyKey.self, forKey: .random)
        for kind in enabledKinds { try r.encode(random[kind]!, forKey: AnyKey(stringValue: kind.rawValue)) }
    }
}

public struct FaultRate: Codable, Sendable, Equatable {
    public var rate: RateValue
    /// `[min, max]` of a fault's length (partitions, spikes, background, kill downtime, crash downtime).
    public var duration: [DurationValue]?
    public var factor: Int64?
    public var count: Int?
    public var period: DurationValue?
    /// `[min, max]` of a clock step (may be negative).
    public var by: [String]?
    /// Per-device kinds: only these devices get the fault (default: every device). Each device's
    /// chain is its own stream, so narrowing the list leaves the others' schedules as they were.
    public var devices: [String]?

    public init(rate: RateValue, duration: ClosedRange<SimDuration>? = nil) {
        self.rate = rate
        self.duration = duration.map { [DurationValue($0.lowerBound), DurationValue($0.upperBound)] }
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case rate, duration, factor, count, period, by, devices }

    public init(from decoder: Decoder) throws {
        try decoder.rejectUnknownKeys(allowed: CodingKeys.allCases.map(\.rawValue))
        let c = try decoder.container(keyedBy: CodingKeys.self)
        rate = try c.decode(RateValue.self, forKey: .rate)
        duration = try c.decodeIfPresent([DurationValue].self, forKey: .duration)
        if let d = duration, d.count != 2 || d[0].duration > d[1].duration {
            throw DecodingError.dataCorruptedError(forKey: .duration, in: c, debugDescription: "expected [min, max] with min ≤ max")
        }
        factor = try c.decodeIfPresent(Int64.self, forKey: .factor)
        count = try c.decodeIfPresent(Int.self, forKey: .count)
        period = try c.decodeIfPresent(DurationValue.self, forKey: .period)
        by = try c.decodeIfPresent([String].self, forKey: .by)
        devices = try c.decodeIfPresent([String].self, forKey: .devices)
        if let b = by {
            guard b.count == 2, let lo = try? SimDuration(parsing: b[0]), let hi = try? SimDuration(parsing: b[1]), lo <= hi else {
                throw DecodingError.dataCorruptedError(forKey: .by, in: c, debugDescription: "expected [min, max] durations, e.g. [\"-60s\", \"60s\"]")
            }
        }
    }

    public var durationRange: ClosedRange<SimDuration>? {
        guard let d = duration else { return nil }
        return d[0].duration...d[1].duration
    }

    public var stepRange: ClosedRange<SimDuration> {
        guard let b = by, let lo = try? SimDuration(parsing: b[0]), let hi = try? SimDuration(parsing: b[1]) else {
            return .seconds(-60)...SimDuration.seconds(60)
        }
        return lo...hi
    }
}
