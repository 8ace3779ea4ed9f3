import IMClient
import IMServer
import IMWire
import SimKernel

extension World {
    /// Until when the path between device `d` and the server is black-holed (device or server
    /// partition), or nil.
    func partitionEnd(_ d: Int) -> SimTime? {
        let end = max(devices[d].partitionedUntil, server.partitionedUntil)
        return end > sim.now ? end : nil
    }

    func latency(_ d: Int, toServer: Bool) -> SimDuration {
        let model = toServer ? devices[d].conditions.uplink : devices[d].conditions.downlink
        var rng = toServer ? devices[d].link.uplink.next(sim.streams, at: sim.now) : devices[d].link.downlink.next(sim.streams, at: sim.now)
        var l = model.sample(&rng)
        if devices[d].spikeUntil > sim.now { l = l * devices[d].latencyFactor }
        return l
    }

    // MARK: - Connecting

    /// Opens a connection for device `d`; returns its id (the next index).
    @discardableResult
    func openConnection(device d: Int) -> ConnectionID {
        if devices[d].connection != nil { clientClose(device: d) }
        let index = connections.count
        let id = ConnectionID(UInt64(index))
        connections.append(SimConnection(id: id, device: d))
        devices[d].connection = UInt32(index)
        stats.connectionsOpened += 1
        if devices[d].connectedOnce { stats.reconnects += 1 }
        let c32 = UInt32(index)
        guard devices[d].networkUp else {
            sim.schedule(.closeNotice(connection: c32, toServer: false, reason: .networkDown), to: node(d), after: .zero)
            return id
        }
        // SYN: handshake setup + one-way latency; a black-holed path loses SYNs until it heals
        // (TCP retries), and the attempt times out if that takes too long.
        var connectRng = devices[d].link.connect.next(sim.streams, at: sim.now)
        let setup = devices[d].conditions.connectSetup.sample(&connectRng)
        var arrive = sim.now + setup + latency(d, toServer: true)
        if let end = partitionEnd(d), end > arrive { arrive = end + latency(d, toServer: true) }
        if arrive - sim.now > tcpConnectTimeout {
            connections[index].connectTimeout = sim.schedule(
                .closeNotice(connection: c32, toServer: false, reason: .timeout), to: node(d), after: tcpConnectTimeout)
        } else {
            sim.schedule(.connectArrive(connection: c32), to: serverNode, at: arrive)
        }
        return id
    }

    func connectArrive(_ c: Int) {
        let d = connections[c].device
        guard connections[c].clientAttached, connections[c].phase == .connecting else { return }
        let c32 = UInt32(c)
        var refuseRng = devices[d].link.refuse.next(sim.streams, at: sim.now)
        if !server.up || refuseRng.chance(devices[d].conditions.refuseProbability.ratio) {
            connections[c].phase = .closed
            stats.connectionsRefused += 1
            note(.connectionRefused(connections[c].id, device: d))
            sim.schedule(.closeNotice(connection: c32, toServer: false, reason: .refused), to: node(d),
                         after: latency(d, toServer: false))
            return
        }
        connections[c].phase = .established
        connections[c].serverAttached = true
        note(.connectionOpened(connections[c].id, device: d))
        serverInput(.connectionAccepted(connections[c].id))
        sim.schedule(.connectComplete(connection: c32), to: node(d), after: latency(d, toServer: false))
    }

    func connectComplete(_ c: Int) {
        let d = connections[c].device
        guard connections[c].clientAttached, connections[c].phase == .established,
              devices[d].connection == UInt32(c), !connections[c].blackholed else { return }
        clientInput(d, .transport(.opened))
    }

    // MARK: - Bytes

    func clientWrite(device d: Int, _ bytes: [UInt8]) {
        guard let c32 = devices[d].connection else { return }
        let c = Int(c32)
        guard connections[c].phase == .established, !connections[c].blackholed else {
            stats.bytesLost += bytes.count
            note(.bytesLost(connections[c].id, toServer: true, count: bytes.count))
            return
        }
        stats.bytesToServer += bytes.count
        let lat = latency(d, toServer: true)
        var segments = devices[d].link.segments.next(sim.streams, at: sim.now)
        let split = segments.chance(devices[d].conditions.splitProbability.ratio)
        let bw = devices[d].conditions.bandwidthBytesPerSecond
        if connections[c].up.write(bytes, now: sim.now, latency: lat, bandwidth: bw, split: split, rng: &segments) {
            scheduleDelivery(c, toServer: true)
        }
    }

    func serverWrite(_ id: ConnectionID, _ bytes: [UInt8]) {
        let c = Int(id.raw)
        guard c < connections.count, connections[c].serverAttached else { return }
        let d = connections[c].device
        guard !connections[c].blackholed, connections[c].phase == .established else {
            stats.bytesLost += bytes.count
            note(.bytesLost(id, toServer: false, count: bytes.count))
            return
        }
        stats.bytesToDevices += bytes.count
        let lat = latency(d, toServer: false)
        var segments = devices[d].link.segments.next(sim.streams, at: sim.now)
        let split = segments.chance(devices[d].conditions.splitProbability.ratio)
        let bw = devices[d].conditions.bandwidthBytesPerSecond
        if connections[c].down.write(bytes, now: sim.now, latency: lat, bandwidth: bw, split: split, rng: &segments) {
            scheduleDelivery(c, toServer: false)
        }
    }

    func scheduleDelivery(_ c: Int, toServer: Bool) {
        let pipe = toServer ? connections[c].up : connections[c].down
        guard let at = pipe.headArrival else { return }
        let target = toServer ? serverNode : node(connections[c].device)
        let id = sim.schedule(.deliver(connection: UInt32(c), toServer: toServer), to: target, at: max(at, sim.now))
        if toServer { connections[c].up.scheduled = id } else { connections[c].down.scheduled = id }
    }

    func deliver(connection c: Int, toServer: Bool) {
        let d = connections[c].device
        if let end = partitionEnd(d) {
            // The path is black-holed: TCP keeps retransmitting; everything arrives after the heal.
            if toServer { connections[c].up.holdUntil(end) } else { connections[c].down.holdUntil(end) }
            scheduleDelivery(c, toServer: toServer)
            return
        }
        let bytes = toServer ? connections[c].up.takeDue(now: sim.now) : connections[c].down.takeDue(now: sim.now)
        scheduleDelivery(c, toServer: toServer)
        guard !bytes.isEmpty, !connections[c].blackholed else { return }
        // Content, not only the event: two runs that deliver different bytes differ in digest.
        sim.foldIntoDigest(StableHash.fnv1a(bytes))
        sim.foldIntoDigest(UInt64(c) << 1 | (toServer ? 1 : 0))
        if toServer {
            guard connections[c].serverAttached, server.up else { return }
            serverInput(.bytes(connections[c].id, bytes))
        } else {
            guard connections[c].clientAttached, devices[d].connection == UInt32(c) else { return }
            clientInput(d, .transport(.bytes(bytes)))
        }
    }

    // MARK: - Closing

    /// The client closes its connection: FIN follows the bytes already sent.
    func clientClose(device d: Int) {
        guard let c32 = devices[d].connection else { return }
        let c = Int(c32)
        devices[d].connection = nil
        connections[c].clientAttached = false
        if let t = connections[c].connectTimeout { sim.cancel(t) }
        if connections[c].serverAttached && !connections[c].blackholed {
            let at = max(sim.now + latency(d, toServer: true), connections[c].up.lastArrival)
            sim.schedule(.closeNotice(connection: c32, toServer: true, reason: .closedByPeer), to: serverNode, at: at)
        } else if !connections[c].serverAttached {
            connections[c].phase = .closed
        }
    }

    /// The server closes a connection: FIN follows the bytes already queued.
    func serverClose(_ id: ConnectionID) {
        let c = Int(id.raw)
        guard c < connections.count, connections[c].serverAttached else { return }
        connections[c].serverAttached = false
        let d = connections[c].device
        if connections[c].clientAttached && !connections[c].blackholed {
            let at = max(sim.now + latency(d, toServer: false), connections[c].down.lastArrival)
            sim.schedule(.closeNotice(connection: UInt32(c), toServer: false, reason: .closedByPeer), to: node(d), at: at)
        } else if !connections[c].clientAttached {
            connections[c].phase = .closed
        }
    }

    func closeNotice(connection c: Int, toServer: Bool, reason: TransportCloseReason) {
        if toServer {
            guard connections[c].serverAttached else { return }
            connections[c].serverAttached = false
            if !connections[c].clientAttached { connections[c].phase = .closed }
            if server.up { serverInput(.connectionClosed(connections[c].id, reason)) }
        } else {
            let d = connections[c].device
            guard connections[c].clientAttached else { return }
            connections[c].clientAttached = false
            if !connections[c].serverAttached { connections[c].phase = .closed }
            if reason == .timeout { note(.connectTimedOut(connections[c].id, device: d)) }
            guard devices[d].connection == UInt32(c) else { return }
            devices[d].connection = nil
            clientInput(d, .transport(.closed(reason)))
        }
    }

    /// Reset: in-flight bytes are lost and each side learns at its own time.
    func resetConnection(device d: Int) {
        guard let c32 = devices[d].connection else { return }
        let c = Int(c32)
        guard connections[c].phase == .established else { return }
        connections[c].up.clear()
        connections[c].down.clear()
        connections[c].phase = .closed
        let downLatency = latency(d, toServer: false)
        var resetRng = devices[d].link.reset.next(sim.streams, at: sim.now)
        let toClient = SimDuration(nanoseconds: resetRng.uniform(0...downLatency.nanoseconds))
        sim.schedule(.closeNotice(connection: c32, toServer: false, reason: .reset), to: node(d), after: toClient)
        if connections[c].serverAttached {
            sim.schedule(.closeNotice(connection: c32, toServer: true, reason: .reset), to: serverNode,
                         after: latency(d, toServer: true))
        }
    }

    /// Half-open: the path silently drops everything from now on; nobody is told.
    func halfOpenConnection(device d: Int) {
        guard let c32 = devices[d].connection else { return }
        let c = Int(c32)
        guard connections[c].phase == .established else { return }
        connections[c].blackholed = true
        connections[c].up.clear()
        connections[c].down.clear()
    }
}
