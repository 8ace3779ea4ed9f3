import IMClient
import IMStore
import IMWire
import SimKernel

extension World {
    /// Schedules the first occurrence of every enabled random fault (per device or world-wide).
    func scheduleFaults() {
        for kind in FaultKind.allCases {
            guard let rate = faults[kind], rate.rate.meanInterval != nil else { continue }
            // One occurrence chain per (kind, device id) or (kind, server): enabling another kind
            // or removing a device leaves this chain's schedule as it was.
            if kind.isPerDevice {
                faultStreams[kind] = devices.map { OccurrenceStreams(sim.streams, key: StreamKey.fault(kind, entity: $0.identity.deviceId)) }
                for d in devices.indices where rate.devices?.contains(devices[d].identity.deviceId) ?? true {
                    // Storage faults only hit devices whose store is on a simulated disk.
                    if kind.isStorage, devices[d].disk == nil { continue }
                    scheduleNextFault(kind, device: d)
                }
            } else {
                faultStreams[kind] = [OccurrenceStreams(sim.streams, key: StreamKey.fault(kind, entity: "server"))]
                scheduleNextFault(kind, device: -1)
            }
        }
    }

    func scheduleNextFault(_ kind: FaultKind, device d: Int) {
        guard let mean = faults[kind]?.rate.meanInterval else { return }
        let at = sim.now + faultStreams[kind, default: []][max(d, 0)].arrival.exponential(mean: mean)
        guard at < healAt else { return }
        sim.schedule(.faultStart(kind, device: Int32(d)), to: d >= 0 ? node(d) : serverNode, at: at)
    }

    func faultDuration(_ kind: FaultKind, default range: ClosedRange<SimDuration>) -> SimDuration {
        faultRng.uniform(faults[kind]?.durationRange ?? range)
    }

    func faultStart(_ kind: FaultKind, device d: Int) {
        guard phase == .active else { return }
        defer { scheduleNextFault(kind, device: d) }
        faultRng = faultStreams[kind, default: []][max(d, 0)].nextDetail(sim.streams)
        if sim.now < randomFrom { return }  // the skipped random prefix (`randomFrom`)
        // Device faults only touch started apps (a phone that is off has no network to break).
        if d >= 0, !devices[d].isRunning, kind != .kill, !kind.isStorage { return }
        counters.faultsInjected += 1
        switch kind {
        case .reset:
            guard network.hasConnection(device: d) else { return }
            note(.fault(kind, device: d, started: true, detail: ""))
            network.reset(device: d)
        case .halfOpen:
            guard network.hasConnection(device: d) else { return }
            note(.fault(kind, device: d, started: true, detail: ""))
            network.halfOpen(device: d)
        case .partition:
            let len = faultDuration(kind, default: .seconds(5)...SimDuration.seconds(60))
            network.partition(device: d, until: sim.now + len)
            note(.fault(kind, device: d, started: true, detail: "for \(len)"))
            sim.schedule(.faultEnd(kind, device: Int32(d)), to: node(d), after: len)
        case .serverPartition:
            let len = faultDuration(kind, default: .seconds(2)...SimDuration.seconds(20))
            network.partitionServer(until: sim.now + len)
            note(.fault(kind, device: nil, started: true, detail: "for \(len)"))
            sim.schedule(.faultEnd(kind, device: -1), to: serverNode, after: len)
        case .latencySpike:
            let len = faultDuration(kind, default: .seconds(2)...SimDuration.seconds(20))
            let factor = faults[kind]?.factor ?? 10
            network.spike(device: d, factor: factor, until: sim.now + len)
            note(.fault(kind, device: d, started: true, detail: "×\(factor) for \(len)"))
            sim.schedule(.faultEnd(kind, device: Int32(d)), to: node(d), after: len)
        case .flap:
            let count = faults[kind]?.count ?? 3
            let period = faults[kind]?.period?.duration ?? .seconds(2)
            note(.fault(kind, device: d, started: true, detail: "\(count)× every \(period)"))
            // Down now, up after half a period, down again a period later, … `count` times.
            let half = SimDuration(nanoseconds: period.nanoseconds / 2)
            for i in 0..<count {
                let base = period * Int64(i)
                sim.schedule(.network(device: Int32(d), up: false), to: node(d), after: base)
                sim.schedule(.network(device: Int32(d), up: true), to: node(d), after: base + half)
            }
        case .background:
            guard devices[d].isForeground else { return }
            let len = faultDuration(kind, default: .seconds(10)...SimDuration.minutes(5))
            note(.fault(kind, device: d, started: true, detail: "for \(len)"))
            appBackground(d)
            sim.schedule(.faultEnd(kind, device: Int32(d)), to: node(d), after: len)
        case .kill:
            guard devices[d].isRunning else { return }
            let len = faultDuration(kind, default: .seconds(1)...SimDuration.seconds(30))
            note(.fault(kind, device: d, started: true, detail: "restart after \(len)"))
            appKill(d)
            sim.schedule(.appStart(device: Int32(d)), to: node(d), after: len)
        case .clockStep:
            let range = faults[kind]?.stepRange ?? (.seconds(-60)...SimDuration.seconds(60))
            let by = faultRng.uniform(range)
            devices[d].clock.step(byMs: by.milliseconds)
            note(.clockStep(device: d, byMs: by.milliseconds))
        case .serverCrash:
            let len = faultDuration(kind, default: .seconds(1)...SimDuration.seconds(20))
            note(.fault(kind, device: nil, started: true, detail: "down for \(len)"))
            serverCrash(downFor: len)
        case .powerLoss, .powerLossTorn:
            guard devices[d].disk != nil else { return }
            powerLoss(d, torn: kind == .powerLossTorn, bootAfter: faultDuration(kind, default: .seconds(5)...SimDuration.seconds(60)))
        case .ioError, .diskFull:
            guard devices[d].disk != nil else { return }
            storageErrorWindow(kind, device: d, for: faultDuration(kind, default: .seconds(1)...SimDuration.seconds(30)))
        }
    }

    /// The device loses power: the app dies, everything not synced is lost (torn: partly), the
    /// store is reopened (SQLite recovers) and the app starts again after `len` if it ran.
    /// A device without a simulated disk is left alone.
    func powerLoss(_ d: Int, torn: Bool, bootAfter len: SimDuration, script: Bool = false) {
        guard let disk = devices[d].disk else { return }
        let wasRunning = devices[d].isRunning
        appKill(d)
        devices[d].store.crash()
        let lost = disk.losePower(torn: torn)
        note(.fault(torn ? .powerLossTorn : .powerLoss, device: d, started: true,
                    detail: "\(lost) unsynced sectors; boot after \(len)" + (script ? " (script)" : "")))
        reopenStore(d)
        if wasRunning { sim.schedule(.appStart(device: Int32(d)), to: node(d), after: len) }
    }

    /// Every write of the device's store fails (`ioError`: SQLITE_IOERR_WRITE) or every write
    /// growing a file fails (`diskFull`: SQLITE_FULL) for `len`.
    func storageErrorWindow(_ kind: FaultKind, device d: Int, for len: SimDuration, script: Bool = false) {
        guard let disk = devices[d].disk else { return }
        if kind == .ioError { disk.faults.writeError = true } else { disk.faults.full = true }
        note(.fault(kind, device: d, started: true, detail: "for \(len)" + (script ? " (script)" : "")))
        sim.schedule(.faultEnd(kind, device: Int32(d)), to: node(d), after: len)
    }

    /// Opens the device's store again after a kill or power loss (SQLite recovers the WAL). If
    /// that fails (an I/O error window), the store stays closed: the app's next start tries
    /// again and its core reports `dbOpened(33002)`.
    func reopenStore(_ d: Int) {
        guard let disk = devices[d].disk else { return }
        devices[d].store.crash()
        do {
            devices[d].store = try IMStore(location: .device(disk), options: devices[d].store.options)
        } catch {
            note(.fault(.ioError, device: d, started: true, detail: "store open failed: \(error)"))
        }
    }

    /// The heal ends a device's I/O error and full-disk windows (the rest of a window would
    /// otherwise run into the liveness phase, and the run could end on a disk still failing).
    func healStorage(_ d: Int) {
        guard let disk = devices[d].disk else { return }
        if disk.faults.writeError { faultEnd(.ioError, device: d) }
        if disk.faults.full { faultEnd(.diskFull, device: d) }
    }

    func faultEnd(_ kind: FaultKind, device d: Int) {
        switch kind {
        case .partition, .serverPartition:
            note(.fault(kind, device: d >= 0 ? d : nil, started: false, detail: ""))
        case .latencySpike:
            network.spikeEnded(device: d)
            note(.fault(kind, device: d, started: false, detail: ""))
        case .background:
            appForeground(d)
            note(.fault(kind, device: d, started: false, detail: ""))
        case .ioError, .diskFull:
            guard let disk = devices[d].disk else { return }
            let on = kind == .ioError ? disk.faults.writeError : disk.faults.full
            // A window the heal already ended.
            guard on || phase == .active else { return }
            if kind == .ioError { disk.faults.writeError = false } else { disk.faults.full = false }
            note(.fault(kind, device: d, started: false, detail: ""))
        default:
            break
        }
    }
}
