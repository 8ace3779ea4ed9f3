// The fixed header byte (wire-protocol §1.1): byte0 = type << 4 | dup << 3 | qos << 1 | retain.

/// Which way a frame travels. PUBLISH and PUBACK have different variable headers each way (§1.4),
/// so every encode/decode call says which one it means.
public enum WireDirection: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    case clientToServer = "c2s"
    case serverToClient = "s2c"

    public var reversed: WireDirection { self == .clientToServer ? .serverToClient : .clientToServer }
    /// `c2s` / `s2c`, as used by `imsim decode --direction` and in frame JSON.
    public var description: String { rawValue }
}

/// Frame type codes (§1.1). 0 and 15 are invalid.
public enum FrameType: UInt8, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    case connect = 1
    case connack = 2
    case publish = 3
    case puback = 4
    case query = 5
    case queryAck = 6
    case queryConfirm = 7
    /// 8–11: the MQTT subscribe family. Decoded (kept raw), never produced by the model.
    case subscribe = 8
    case subAck = 9
    case unsubscribe = 10
    case unsubAck = 11
    case pingReq = 12
    case pingResp = 13
    case disconnect = 14

    /// The spec's name: `CONNECT`, `QUERYACK`, `QUERYCON`, `PINGREQ`…
    public var description: String {
        switch self {
        case .connect: "CONNECT"
        case .connack: "CONNACK"
        case .publish: "PUBLISH"
        case .puback: "PUBACK"
        case .query: "QUERY"
        case .queryAck: "QUERYACK"
        case .queryConfirm: "QUERYCON"
        case .subscribe: "SUBSCRIBE"
        case .subAck: "SUBACK"
        case .unsubscribe: "UNSUBSCRIBE"
        case .unsubAck: "UNSUBACK"
        case .pingReq: "PINGREQ"
        case .pingResp: "PINGRESP"
        case .disconnect: "DISCONNECT"
        }
    }

    /// Parses the spec name (as printed by `description`).
    public init?(name: String) {
        guard let t = Self.allCases.first(where: { $0.description == name }) else { return nil }
        self = t
    }

    /// True for 8–11, which the model decodes but never sends.
    public var isSubscribeFamily: Bool { (8...11).contains(rawValue) }
}

/// MQTT quality of service (the two bits 1–2 of byte0). 3 is malformed for a strict decoder;
/// the official SDKs name it `Qos.DEFAULT` and their decoders accept it (a liberal decode keeps it).
public enum QoS: UInt8, Sendable, Hashable, Codable, CaseIterable, Comparable {
    case atMostOnce = 0
    case atLeastOnce = 1
    case exactlyOnce = 2
    /// 3: `Qos.DEFAULT` in the SDKs. Only a liberal decode produces it.
    case sdkDefault = 3

    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}

/// The three flag fields of byte0. On a server→client PUBLISH, `dup` means "sync echo" (§1.1).
public struct FrameFlags: Sendable, Hashable, Codable {
    public var dup: Bool
    public var qos: QoS
    public var retain: Bool

    public init(dup: Bool = false, qos: QoS = .atMostOnce, retain: Bool = false) {
        self.dup = dup
        self.qos = qos
        self.retain = retain
    }

    /// qos 0, no dup, no retain.
    public static let none = FrameFlags()
    /// qos 1 (at least once): requests that want a reply.
    public static let atLeastOnce = FrameFlags(qos: .atLeastOnce)

    /// byte0 for a frame of `type` with these flags.
    @inlinable public func byte0(_ type: FrameType) -> UInt8 {
        type.rawValue << 4 | (dup ? 0x08 : 0) | qos.rawValue << 1 | (retain ? 0x01 : 0)
    }

    /// Splits byte0 into type and flags; `offset` is where byte0 sits, for the error.
    /// `lenient` accepts QoS 3 (see `QoS.sdkDefault`); strict rejects it.
    @inlinable public static func parse(byte0: UInt8, offset: Int, lenient: Bool = false) throws(WireError) -> (FrameType, FrameFlags) {
        guard let type = FrameType(rawValue: byte0 >> 4) else {
            throw .unknownFrameType(code: byte0 >> 4, offset: offset)
        }
        let q = (byte0 >> 1) & 0x03
        guard q != 3 || lenient, let qos = QoS(rawValue: q) else { throw .invalidQoS(q, offset: offset) }
        return (type, FrameFlags(dup: byte0 & 0x08 != 0, qos: qos, retain: byte0 & 0x01 != 0))
    }
}
