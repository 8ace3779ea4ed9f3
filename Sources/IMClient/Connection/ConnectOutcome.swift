import IMWire

/// Error codes the client reports that IMWire's `IMErrorCode` does not name (RongCloud's values).
public enum ClientErrorCode {
    /// A send or request while the client has no connection (RongCloud `RC_NET_UNAVAILABLE`).
    public static let notConnected: Int32 = 30002
    /// CONNACK 1: unacceptable protocol version.
    public static let protocolVersion: Int32 = 31001
    /// CONNACK 2: identifier rejected.
    public static let identifierRejected: Int32 = 31002
    /// CONNACK 5: not authorised (wrong app key).
    public static let notAuthorized: Int32 = 31005
    /// CONNACK 6: redirect (the SDK goes back to navigation; here: retry).
    public static let redirect: Int32 = 31006
    /// A CONNACK status the SDK does not know (IMSim's code, outside every RongCloud range: the
    /// old `30000 + n` collided with 30001–30015). Temporary: the SDK keeps retrying.
    public static let unknownConnackStatus: Int32 = 39001
}

/// How a failed connection attempt or a lost connection ends, as the SDK classifies it
/// (im-semantics §5).
struct ConnectFailure: Sendable, Hashable, CustomStringConvertible {
    /// The code reported to the app (connectError / notes).
    var code: Int32
    /// Fatal: the SDK never retries; the connect call ends with this code.
    var fatal: Bool
    /// Connection status reported for a fatal stop.
    var status: ConnectionStatus
    /// Readable reason for notes.
    var reason: String

    var description: String { "\(code) (\(reason))" }

    static func temporary(_ code: Int32, _ reason: String) -> ConnectFailure {
        ConnectFailure(code: code, fatal: false, status: .connecting, reason: reason)
    }

    static func fatal(_ code: Int32, _ status: ConnectionStatus, _ reason: String) -> ConnectFailure {
        ConnectFailure(code: code, fatal: true, status: status, reason: reason)
    }

    /// CONNACK status byte → outcome. Wire n → 31000 + n for 1…9, 10 → 31020 (token expired),
    /// 23 (IMSim: another device online, reconnect refused) → 31023. Fatal: 31004, 31008, 31009,
    /// 31020, 31023 (spec) and 31001, 31002, 31005 (retrying cannot fix a protocol version,
    /// identifier or app key); temporary: 31003 server unavailable, 31006 redirect, and any other
/// status → 39001 (`ClientErrorCode.unknownConnackStatus`; the status is in the reason).
    static func connack(_ statusCode: UInt8) -> ConnectFailure {
        switch statusCode {
        case ConnackStatus.badProtocolVersion.rawValue:
            .fatal(ClientErrorCode.protocolVersion, .unconnected, "CONNACK 1 bad protocol version")
        case ConnackStatus.identifierRejected.rawValue:
            .fatal(ClientErrorCode.identifierRejected, .unconnected, "CONNACK 2 identifier rejected")
        case ConnackStatus.serverUnavailable.rawValue:
            .temporary(IMErrorCode.serverUnavailable.rawValue, "CONNACK 3 server unavailable")
        case ConnackStatus.tokenIncorrect.rawValue:
            .fatal(IMErrorCode.tokenIncorrect.rawValue, .tokenIncorrect, "CONNACK 4 token incorrect")
        case ConnackStatus.notAuthorized.rawValue:
            .fatal(ClientErrorCode.notAuthorized, .unconnected, "CONNACK 5 not authorized")
        case ConnackStatus.redirect.rawValue:
            .temporary(ClientErrorCode.redirect, "CONNACK 6 redirect")
        case ConnackStatus.appBlocked.rawValue:
            .fatal(IMErrorCode.appBlocked.rawValue, .unconnected, "CONNACK 8 app blocked")
        case ConnackStatus.userBlocked.rawValue:
            .fatal(IMErrorCode.userBlocked.rawValue, .disconnException, "CONNACK 9 user blocked")
        case ConnackStatus.tokenExpired.rawValue:
            .fatal(IMErrorCode.tokenExpired.rawValue, .tokenIncorrect, "CONNACK 10 token expired")
        case Frame.Connack.otherDeviceLoggedInStatusCode:
            .fatal(IMErrorCode.otherDeviceLoggedIn.rawValue, .kickedOfflineByOtherClient,
                   "CONNACK \(statusCode) other device logged in (reconnect refused)")
        default:
            .temporary(ClientErrorCode.unknownConnackStatus, "CONNACK \(statusCode) unknown status")
        }
    }

    /// A transport close → temporary outcome: refused → 32061, everything else → 30011.
    static func transportClosed(_ reason: TransportCloseReason) -> ConnectFailure {
        switch reason {
        case .refused: .temporary(IMErrorCode.connectionRefused.rawValue, "transport refused")
        default: .temporary(IMErrorCode.socketClosed.rawValue, "transport \(reason.rawValue)")
        }
    }

    static let connackTimeout = ConnectFailure.temporary(IMErrorCode.connectAckTimeout.rawValue, "no CONNACK in time")
    static let pingTimeout = ConnectFailure.temporary(IMErrorCode.pingTimeout.rawValue, "no PINGRESP in time")
    static let timeLimit = ConnectFailure.fatal(IMErrorCode.connectTimeLimit.rawValue, .timeout, "connect time limit reached")
    static let kicked = ConnectFailure.fatal(IMErrorCode.kicked.rawValue, .kickedOfflineByOtherClient,
                                             "DISCONNECT 1 kicked by another device")
    static let blocked = ConnectFailure.fatal(IMErrorCode.userBlocked.rawValue, .disconnException, "DISCONNECT 2 blocked")

    static func protocolError(_ what: String) -> ConnectFailure {
        .temporary(IMErrorCode.socketClosed.rawValue, "protocol error: \(what)")
    }
}
