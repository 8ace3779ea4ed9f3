/// Why an import failed or what it had to leave out. Errors name the place: the packet number
/// (1-based, in file order), the byte offset in the packet or stream, the HAR entry or field.
public struct ImportError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable, Equatable {
        /// The file cannot be opened or read.
        case io
        /// Not a pcap/pcapng file (bad magic, bad block), or not HAR JSON.
        case badFile
        /// The file ends inside a packet or block.
        case truncatedFile
        /// A link-layer type this importer does not decode (the DLT is named).
        case unknownLinkType
        /// No RMTP traffic was found (the traffic seen is summarised).
        case noIMTraffic
        /// The IM traffic is TLS: it cannot be read.
        case tls
        /// Several devices talk RMTP in the capture and none was chosen (`--device`).
        case ambiguousDevice
        /// A HAR field is missing or has the wrong type.
        case badHAR
        /// An RMTP byte stream does not decode (framing, checksum, body).
        case frameDecode
        /// A WebSocket stream does not follow RFC 6455.
        case webSocket
        /// Writing the capture failed.
        case output
    }

    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { "\(kind.rawValue): \(message)" }
}
