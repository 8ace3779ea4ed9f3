import IMClient
import IMServer
import IMWire
import SimKernel

/// The World's side of the network: it hands the network's kernel events back to it and gives
/// what arrived to the cores (`Network` decides what arrives when).
extension World {
    /// Opens a connection for device `d`; returns its id (the next index).
    @discardableResult
    func openConnection(device d: Int) -> ConnectionID {
        if devices[d].connectedOnce { counters.reconnects += 1 }
        return network.open(device: d)
    }

    func connectArrive(_ c: Int) {
        switch network.synArrived(c, serverListening: server.up) {
        case nil:
            return
        case .refused(let id, let d):
            note(.connectionRefused(id, device: d))
        case .accepted(let id, let d):
            note(.connectionOpened(id, device: d))
            serverInput(.connectionAccepted(id))
            network.synAck(c)
        }
    }

    func connectComplete(_ c: Int) {
        guard let d = network.connectCompleted(c) else { return }
        clientInput(d, .transport(.opened))
    }

    func clientWrite(device d: Int, _ bytes: [UInt8]) {
        if case .lost(let id) = network.submit(device: d, bytes) {
            note(.bytesLost(id, toServer: true, count: bytes.count))
        }
    }

    func serverWrite(_ id: ConnectionID, _ bytes: [UInt8]) {
        if case .lost(let id) = network.submit(server: id, bytes) {
            note(.bytesLost(id, toServer: false, count: bytes.count))
        }
    }

    func deliver(connection c: Int, toServer: Bool) {
        var bytes: [UInt8] = []
        switch network.deliver(connection: c, toServer: toServer, into: &bytes) {
        case nil:
            return
        case .server(let id):
            guard server.up else { return }
            serverInput(.bytes(id, bytes))
            // The core has read them (its decoder keeps only copies): the storage serves a later write.
            clientWriteBuffers.recycle(consume bytes)
        case .device(let d):
            clientInput(d, .transport(.bytes(bytes)))
            serverWriteBuffers.recycle(consume bytes)
        }
    }

    func closeNotice(connection c: Int, toServer: Bool, reason: TransportCloseReason) {
        switch network.closeArrived(c, toServer: toServer, reason: reason) {
        case nil:
            return
        case .toServer(let id):
            if server.up { serverInput(.connectionClosed(id, reason)) }
        case .toDevice(let d, let id, let current):
            if reason == .timeout { note(.connectTimedOut(id, device: d)) }
            if current { clientInput(d, .transport(.closed(reason))) }
        }
    }

    /// The device's interface went away: its socket errors locally at once; the server is not
    /// told (the path is gone), so its side stays half-open until its idle timeout.
    func dropLocalConnection(_ d: Int) {
        guard network.dropLocal(device: d) else { return }
        clientInput(d, .transport(.closed(.networkDown)))
    }
}
