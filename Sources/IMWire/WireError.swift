/// Every way RMTP input (frames, protobuf bodies, JSON content) or a codec call can be wrong.
///
/// Decoding never crashes and never hangs on bad input: it answers with one of these, naming the
/// place. Offsets are byte offsets:
/// - frame errors: from the first byte of the frame (message framing), or from the first byte the
///   `StreamDecoder` was ever fed (stream framing — for a single frame this is the same thing);
/// - `.protobuf`: within the protobuf body; `.badContent` / `.badJSON`: within the JSON text.
public enum WireError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A field needs `needed` bytes from `offset` (counted from the frame start), only `had` exist.
    case truncated(field: String, needed: Int, had: Int, offset: Int)
    /// Stream framing: the checksum byte is not `byte0 XOR` every remaining-length byte.
    case badChecksum(expected: UInt8, found: UInt8, offset: Int)
    /// Stream framing: the remaining length needs a fifth byte (or, encoding, exceeds 268,435,455).
    case lengthOverflow(offset: Int)
    /// Stream framing: the remaining length has a redundant trailing `0x00` group (not canonical).
    case nonMinimalLength(offset: Int)
    /// Stream framing: the frame (all headers + payload) would be larger than the decoder's limit.
    /// Raised from the header alone — the claimed size is never allocated.
    case frameTooLarge(size: Int, limit: Int, offset: Int)
    /// `byte0 >> 4` is 0 or 15.
    case unknownFrameType(code: UInt8, offset: Int)
    /// The two QoS bits are 3.
    case invalidQoS(UInt8, offset: Int)
    /// CONNECT flags with reserved bits set (see `Frame.Connect`).
    case invalidConnectFlags(UInt8, offset: Int)
    /// A string field is not valid UTF-8.
    case badUTF8(field: String, offset: Int)
    /// Encoding: a string field is longer than its u16 length prefix can say (65,535 bytes).
    case stringTooLong(field: String, length: Int)
    /// A frame with a fixed layout has bytes left after its last field.
    case trailingBytes(count: Int, offset: Int)
    /// A protobuf body failed to decode or encode; `field` is the field path when it is known.
    case protobuf(message: String, field: String?, reason: String, offset: Int)
    /// JSON message content is not what its type's codec expects.
    case badContent(objectName: String, field: String?, reason: String, offset: Int)
    /// Text that should be JSON is not (content, `imsim encode` input).
    case badJSON(reason: String, offset: Int)
    /// A frame description (`FrameJSON`) is missing a field or has a wrong one.
    case badFrameDescription(field: String, reason: String)
    /// Serialized content over the 128 KiB body limit → `IMErrorCode.messageTooLarge` (30016).
    case messageTooLarge(size: Int, limit: Int)
    /// A custom message type used before it was registered → `IMErrorCode.unregisteredMessageType` (34021).
    case unregisteredMessageType(objectName: String)
    /// Registering a type in the reserved `RC:` namespace, or an empty name → 33003.
    case reservedObjectName(objectName: String)

    /// The byte offset the error names, when it names one.
    public var offset: Int? {
        switch self {
        case .truncated(_, _, _, let o), .badChecksum(_, _, let o), .lengthOverflow(let o),
             .nonMinimalLength(let o), .frameTooLarge(_, _, let o), .unknownFrameType(_, let o),
             .invalidQoS(_, let o), .invalidConnectFlags(_, let o), .badUTF8(_, let o),
             .trailingBytes(_, let o), .protobuf(_, _, _, let o), .badContent(_, _, _, let o),
             .badJSON(_, let o):
            o
        case .stringTooLong, .badFrameDescription, .messageTooLarge, .unregisteredMessageType,
             .reservedObjectName:
            nil
        }
    }

    /// The error code the app sees, for errors that surface through the SDK API.
    public var imErrorCode: IMErrorCode? {
        switch self {
        case .messageTooLarge: .messageTooLarge
        case .unregisteredMessageType: .unregisteredMessageType
        case .reservedObjectName: .invalidParameter
        default: nil
        }
    }

    /// A short stable name of the case (used for fuzz statistics and logs).
    public var kind: String {
        switch self {
        case .truncated: "truncated"
        case .badChecksum: "badChecksum"
        case .lengthOverflow: "lengthOverflow"
        case .nonMinimalLength: "nonMinimalLength"
        case .frameTooLarge: "frameTooLarge"
        case .unknownFrameType: "unknownFrameType"
        case .invalidQoS: "invalidQoS"
        case .invalidConnectFlags: "invalidConnectFlags"
        case .badUTF8: "badUTF8"
        case .stringTooLong: "stringTooLong"
        case .trailingBytes: "trailingBytes"
        case .protobuf: "protobuf"
        case .badContent: "badContent"
        case .badJSON: "badJSON"
        case .badFrameDescription: "badFrameDescription"
        case .messageTooLarge: "messageTooLarge"
        case .unregisteredMessageType: "unregisteredMessageType"
        case .reservedObjectName: "reservedObjectName"
        }
    }

    public var description: String {
        switch self {
        case let .truncated(field, needed, had, offset):
            "truncated \(field) at byte \(offset): needs \(needed) bytes, input has \(had)"
        case let .badChecksum(expected, found, offset):
            "bad checksum at byte \(offset): expected 0x\(Self.hex(expected)), found 0x\(Self.hex(found))"
        case let .lengthOverflow(offset):
            "remaining length too long at byte \(offset): more than 4 bytes (max 268,435,455)"
        case let .nonMinimalLength(offset):
            "remaining length not minimally encoded at byte \(offset)"
        case let .frameTooLarge(size, limit, offset):
            "frame too large at byte \(offset): \(size) bytes, limit \(limit)"
        case let .unknownFrameType(code, offset):
            "unknown frame type \(code) at byte \(offset)"
        case let .invalidQoS(qos, offset):
            "invalid QoS \(qos) at byte \(offset)"
        case let .invalidConnectFlags(flags, offset):
            "invalid CONNECT flags 0x\(Self.hex(flags)) at byte \(offset): reserved bits set"
        case let .badUTF8(field, offset):
            "invalid UTF-8 in \(field) at byte \(offset)"
        case let .stringTooLong(field, length):
            "\(field) is \(length) bytes; a u16-prefixed string holds at most 65,535"
        case let .trailingBytes(count, offset):
            "\(count) unexpected trailing byte\(count == 1 ? "" : "s") at byte \(offset)"
        case let .protobuf(message, field, reason, offset):
            "protobuf \(message)\(field.map { ".\($0)" } ?? ""): \(reason) at body byte \(offset)"
        case let .badContent(objectName, field, reason, offset):
            "\(objectName) content\(field.map { " field \"\($0)\"" } ?? ""): \(reason) at byte \(offset)"
        case let .badJSON(reason, offset):
            "invalid JSON at byte \(offset): \(reason)"
        case let .badFrameDescription(field, reason):
            "frame description field \"\(field)\": \(reason)"
        case let .messageTooLarge(size, limit):
            "message content is \(size) bytes, limit \(limit) (error \(IMErrorCode.messageTooLarge.rawValue))"
        case let .unregisteredMessageType(objectName):
            "message type \(objectName) is not registered (error \(IMErrorCode.unregisteredMessageType.rawValue))"
        case let .reservedObjectName(objectName):
            "cannot register \"\(objectName)\": custom types need a non-empty name outside the reserved RC: namespace"
        }
    }

    static func hex(_ b: UInt8) -> String { Hex.encode(CollectionOfOne(b)) }
}
