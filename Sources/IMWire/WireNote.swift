/// Something a liberal decode accepted that a strict one rejects (wire-protocol: "be as liberal
/// as the official decoders"). `imsim decode` prints these; `--strict` turns them into errors.
public enum WireNote: Sendable, Hashable, CustomStringConvertible {
    /// A fixed-layout frame (PINGRESP, DISCONNECT, PUBACK, CONNACK…) had extra bytes; ignored.
    case trailingBytesIgnored(count: Int, offset: Int)
    /// The QoS bits are 3 (`Qos.DEFAULT` in the official SDKs); kept as `QoS.sdkDefault`.
    case qos3(offset: Int)

    public var offset: Int {
        switch self {
        case .trailingBytesIgnored(_, let o), .qos3(let o): o
        }
    }

    public var description: String {
        switch self {
        case let .trailingBytesIgnored(count, offset):
            "note: \(count) extra byte\(count == 1 ? "" : "s") at byte \(offset) ignored (as the official decoders do; --strict rejects)"
        case let .qos3(offset):
            "note: QoS 3 (the SDKs' Qos.DEFAULT) at byte \(offset) accepted (--strict rejects)"
        }
    }
}
