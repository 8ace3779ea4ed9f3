import SimKernel

/// One-way latency distribution of a link direction.
///
/// JSON: `{"fixed": "40ms"}`, `{"uniform": ["20ms", "80ms"]}`,
/// `{"logNormal": {"median": "40ms", "sigma": 0.5, "max": "5s"}}`.
public enum LatencyModel: Hashable, Sendable, Codable, CustomStringConvertible {
    case fixed(SimDuration)
    case uniform(SimDuration, SimDuration)
    /// median · e^(σ·Z), σ in thousandths, capped at `max`.
    case logNormal(median: SimDuration, sigmaMilli: Int64, max: SimDuration)

    public func sample(_ rng: inout RandomStream) -> SimDuration {
        switch self {
        case .fixed(let d):
            return d
        case .uniform(let lo, let hi):
            return rng.uniform(lo...hi)
        case .logNormal(let median, let sigma, let cap):
            let d = rng.logNormal(median: median, sigmaMilli: sigma)
            return d > cap ? cap : d
        }
    }

    /// A representative value (for connect-timeout heuristics and docs).
    public var typical: SimDuration {
        switch self {
        case .fixed(let d): d
        case .uniform(let lo, let hi): SimDuration(nanoseconds: (lo.nanoseconds + hi.nanoseconds) / 2)
        case .logNormal(let m, _, _): m
        }
    }

    public var description: String {
        switch self {
        case .fixed(let d): "fixed \(d)"
        case .uniform(let a, let b): "uniform \(a)…\(b)"
        case .logNormal(let m, let s, let c): "log-normal median \(m) σ=\(Double(s) / 1000) max \(c)"
        }
    }

    private enum Keys: String, CodingKey { case fixed, uniform, logNormal }
    private struct LogNormalSpec: Codable {
        var median: DurationValue
        var sigma: Double
        var max: DurationValue?
        enum CodingKeys: String, CodingKey { case median, sigma, max }
        init(median: DurationValue, sigma: Double, max: DurationValue?) {
            self.median = median
            self.sigma = sigma
            self.max = max
        }
        init(from decoder: Decoder) throws {
            try decoder.rejectUnknownKeys(allowed: ["median", "sigma", "max"])
            let c = try decoder.container(keyedBy: CodingKeys.self)
            median = try c.decode(DurationValue.self, forKey: .median)
            sigma = try c.decode(Double.self, forKey: .sigma)
            max = try c.decodeIfPresent(DurationValue.self, forKey: .max)
        }
    }

    public init(from decoder: Decoder) throws {
        try decoder.rejectUnknownKeys(allowed: ["fixed", "uniform", "logNormal"])
        let c = try decoder.container(keyedBy: Keys.self)
        let present = c.allKeys
        guard present.count == 1, let key = present.first else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                debugDescription: "latency needs exactly one of \"fixed\", \"uniform\", \"logNormal\""))
        }
        switch key {
        case .fixed:
            self = .fixed(try c.decode(DurationValue.self, forKey: .fixed).duration)
        case .uniform:
            let pair = try c.decode([DurationValue].self, forKey: .uniform)
            guard pair.count == 2, pair[0].duration <= pair[1].duration else {
                throw DecodingError.dataCorruptedError(forKey: .uniform, in: c,
                    debugDescription: "uniform needs [low, high] with low ≤ high")
            }
            self = .uniform(pair[0].duration, pair[1].duration)
        case .logNormal:
            let spec = try c.decode(LogNormalSpec.self, forKey: .logNormal)
            guard spec.sigma >= 0, spec.sigma <= 3, spec.sigma.isFinite else {
                throw DecodingError.dataCorruptedError(forKey: .logNormal, in: c,
                    debugDescription: "sigma must be between 0 and 3")
            }
            self = .logNormal(median: spec.median.duration, sigmaMilli: Int64((spec.sigma * 1000).rounded()),
                              max: spec.max?.duration ?? .seconds(10))
        }
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        switch self {
        case .fixed(let d): try c.encode(DurationValue(d), forKey: .fixed)
        case .uniform(let a, let b): try c.encode([DurationValue(a), DurationValue(b)], forKey: .uniform)
        case .logNormal(let m, let s, let cap):
            try c.encode(LogNormalSpec(median: DurationValue(m), sigma: Double(s) / 1000, max: DurationValue(cap)), forKey: .logNormal)
        }
    }
}
