import IMClient
import IMCapture
import IMWire

/// What an importer saw of one client connection, in time order (ms of the capture's clock).
public enum ObservedEvent: Sendable {
    /// The client started opening the connection (TCP SYN, WebSocket created).
    case connect(t: Int64)
    /// The connection is open (SYN-ACK; WebSocket upgrade answered).
    case opened(t: Int64)
    /// The server refused the connection (RST to the SYN).
    case refused(t: Int64)
    /// Bytes the client wrote: a stream chunk (stream framing) or one message (message framing).
    case out(t: Int64, bytes: [UInt8])
    /// Bytes the client received, as they arrived.
    case `in`(t: Int64, bytes: [UInt8])
    /// The client closed (FIN or RST first from the client).
    case clientClosed(t: Int64)
    /// The server closed or reset the connection.
    case serverClosed(t: Int64, reset: Bool)

    public var t: Int64 {
        switch self {
        case .connect(let t), .opened(let t), .refused(let t), .out(let t, _), .in(let t, _), .clientClosed(let t),
             .serverClosed(let t, _): t
        }
    }
}

/// One connection of the imported client.
public struct ObservedConnection: Sendable {
    /// Where it was found (`tcp stream 2, 127.0.0.1:51000 → 127.0.0.1:9100`, `HAR entry 3, ws://…`).
    public var label: String
    public var events: [ObservedEvent]
    /// CONNECT's fields, or the WebSocket URL's, when present.
    public var clientId: String?
    public var token: String?
    public var appKey: String?
    /// CONNECT's keepAlive (s): the SDK's heartbeat interval.
    public var keepAlive: UInt16?
    /// CONNACK's userId.
    public var userId: String?

    public init(label: String, events: [ObservedEvent] = []) {
        self.label = label
        self.events = events
    }
}

/// Everything an importer hands to `CaptureBuilder`: the chosen client's connections and what
/// the file said about its identity.
public struct ObservedTraffic: Sendable {
    public var framing: CaptureFraming
    public var obfuscated: Bool
    public var connections: [ObservedConnection]
    /// `pcap` or `har` (the capture header's `imported`).
    public var origin: String
    /// Description of the file for the header's `source`.
    public var source: String
    /// Notes for the import report (what the file lacked, holes, skipped traffic).
    public var notes: [String] = []

    public init(framing: CaptureFraming, obfuscated: Bool, connections: [ObservedConnection], origin: String, source: String) {
        self.framing = framing
        self.obfuscated = obfuscated
        self.connections = connections
        self.origin = origin
        self.source = source
    }
}

/// Identity fields the user gives when the traffic does not carry them.
public struct IdentityOverrides: Sendable {
    public var deviceId: String?
    public var userId: String?
    public var platform: Platform?
    public var token: String?
    public var appKey: String?
    public init(deviceId: String? = nil, userId: String? = nil, platform: Platform? = nil, token: String? = nil, appKey: String? = nil) {
        self.deviceId = deviceId
        self.userId = userId
        self.platform = platform
        self.token = token
        self.appKey = appKey
    }
}
