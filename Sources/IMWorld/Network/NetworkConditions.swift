import SimKernel

/// How a device's access network behaves (scenario `network` section; per-device overrides).
public struct NetworkConditions: Hashable, Sendable, Codable {
    /// One-way latency device → server.
    public var uplink: LatencyModel
    /// One-way latency server → device.
    public var downlink: LatencyModel
    /// Bytes per second each way; nil = unlimited (no queueing delay).
    public var bandwidthBytesPerSecond: Int64?
    /// Probability that a write is delivered in several segments (exercises stream decoding).
    public var splitProbability: ProbabilityValue
    /// TCP handshake time on top of one round trip.
    public var connectSetup: LatencyModel
    /// Probability that a connection attempt is refused even though the server is up.
    public var refuseProbability: ProbabilityValue

    public init(
        uplink: LatencyModel = .logNormal(median: .milliseconds(40), sigmaMilli: 400, max: .seconds(3)),
        downlink: LatencyModel = .logNormal(median: .milliseconds(40), sigmaMilli: 400, max: .seconds(3)),
        bandwidthBytesPerSecond: Int64? = 1_000_000,
        splitProbability: ProbabilityValue = ProbabilityValue(0.1),
        connectSetup: LatencyModel = .uniform(.milliseconds(5), .milliseconds(50)),
        refuseProbability: ProbabilityValue = ProbabilityValue(0)
    ) {
        self.uplink = uplink
        self.downlink = downlink
        self.bandwidthBytesPerSecond = bandwidthBytesPerSecond
        self.splitProbability = splitProbability
        self.connectSetup = connectSetup
        self.refuseProbability = refuseProbability
    }

    private enum CodingKeys: String, CodingKey {
        case latency, uplink, downlink, bandwidthBytesPerSecond, splitProbability, connectSetup, refuseProbability
    }

    public init(from decoder: Decoder) throws {
        let d = NetworkConditions()
        try decoder.rejectUnknownKeys(allowed: ["latency", "uplink", "downlink", "bandwidthBytesPerSecond", "splitProbability",
                                                "connectSetup", "refuseProbability"])
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let both = try c.decodeIfPresent(LatencyModel.self, forKey: .latency)
        uplink = try c.decodeIfPresent(LatencyModel.self, forKey: .uplink) ?? both ?? d.uplink
        downlink = try c.decodeIfPresent(LatencyModel.self, forKey: .downlink) ?? both ?? d.downlink
        if c.contains(.bandwidthBytesPerSecond), try c.decodeNil(forKey: .bandwidthBytesPerSecond) {
            bandwidthBytesPerSecond = nil
        } else {
            bandwidthBytesPerSecond = try c.decodeIfPresent(Int64.self, forKey: .bandwidthBytesPerSecond) ?? d.bandwidthBytesPerSecond
        }
        if let b = bandwidthBytesPerSecond, b <= 0 {
            throw DecodingError.dataCorruptedError(forKey: .bandwidthBytesPerSecond, in: c, debugDescription: "must be positive (or null for unlimited)")
        }
        splitProbability = try c.decodeIfPresent(ProbabilityValue.self, forKey: .splitProbability) ?? d.splitProbability
        connectSetup = try c.decodeIfPresent(LatencyModel.self, forKey: .connectSetup) ?? d.connectSetup
        refuseProbability = try c.decodeIfPresent(ProbabilityValue.self, forKey: .refuseProbability) ?? d.refuseProbability
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(uplink, forKey: .uplink)
        try c.encode(downlink, forKey: .downlink)
        try c.encode(bandwidthBytesPerSecond, forKey: .bandwidthBytesPerSecond)
        try c.encode(splitProbability, forKey: .splitProbability)
        try c.encode(connectSetup, forKey: .connectSetup)
        try c.encode(refuseProbability, forKey: .refuseProbability)
    }
}
