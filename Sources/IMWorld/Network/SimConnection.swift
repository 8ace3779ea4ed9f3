import IMWire
import SimKernel

/// One simulated TCP connection between a device and the server.
///
/// Each side is attached until it closes or learns of the close; bytes are only delivered to an
/// attached side. A reset clears what is in flight and tells each side at its own time. A
/// black-holed (half-open) path silently drops everything, including FIN and RST, so neither side
/// learns anything: only heartbeats (client) or the idle timeout (server) reveal it.
struct SimConnection {
    enum Phase: Equatable {
        /// SYN in flight.
        case connecting
        /// The server accepted; the client may not know yet.
        case established
        /// Refused, timed out, reset or closed by both sides.
        case closed
    }

    let id: ConnectionID
    let device: Int
    var phase: Phase = .connecting
    /// The client core still considers this its connection.
    var clientAttached = true
    /// The server core has been told about it and has not been told it closed.
    var serverAttached = false
    /// Half-open: the path drops everything silently.
    var blackholed = false
    var up = Pipe()
    var down = Pipe()
    /// The kernel event that will tell the client the attempt failed (TCP connect timeout).
    var connectTimeout: EventID?

    init(id: ConnectionID, device: Int) {
        self.id = id
        self.device = device
    }

    var index: UInt32 { UInt32(id.raw) }
}
