import IMWire
import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// How socket errors become the cores' `TransportCloseReason`.
enum TransportErrors {
    /// A failed connect attempt: refused (nothing listening, unreachable) or timed out.
    static func connectFailure(_ error: Error) -> TransportCloseReason {
        if let e = error as? ChannelError, case .connectTimeout = e { return .timeout }
        if let e = error as? IOError, e.errnoCode == ETIMEDOUT { return .timeout }
        return .refused
    }

    /// An error seen on an established connection before it went inactive.
    static func closeReason(_ error: Error) -> TransportCloseReason? {
        if let e = error as? IOError {
            switch e.errnoCode {
            case ECONNRESET, EPIPE, ECONNABORTED: return .reset
            case ETIMEDOUT: return .timeout
            case ENETDOWN, ENETUNREACH, EHOSTUNREACH: return .networkDown
            default: return .reset
            }
        }
        return nil
    }

    /// Closes after everything written before has reached the socket (the cores' "close after
    /// sending anything queued before it"): an empty write completes after the writes before it.
    static func flushAndClose(_ channel: Channel) {
        channel.writeAndFlush(channel.allocator.buffer(capacity: 0)).whenComplete { _ in
            channel.close(promise: nil)
        }
    }

    /// Closes with an RST (SO_LINGER 0), as a middlebox reset or a killed process does.
    static func reset(_ channel: Channel) {
        guard let provider = channel as? SocketOptionProvider else { channel.close(promise: nil); return }
        provider.setSoLinger(linger(l_onoff: 1, l_linger: 0)).whenComplete { _ in channel.close(promise: nil) }
    }
}
