import IMClient
import IMStore
import IMWire
import IMWorld
import SimKernel

/// Records one simulated device as its SDK would have logged it: a `WorldObserver` that feeds
/// a `CaptureRecorder` (what `imsim run SCENARIO --capture DEVICE=FILE` uses).
///
/// The header is written when the device's app first starts (its `ClientCore`, config and
/// store options exist then); a device that never starts gets a header built from the scenario.
public final class WorldCaptureObserver: WorldObserver {
    public let deviceId: String
    public let source: String?
    public let options: CaptureRecorder.Options
    /// Write a `snapshot` record of the device's store when the capture is finished.
    public var snapshotAtEnd = true
    private let sink: any CaptureSink
    public private(set) var recorder: CaptureRecorder?
    private weak var world: World?
    private var device = -1
    private var lastLocalMs: Int64 = 0

    /// The SDK name written in headers of simulated captures (the build does not change the
    /// client's behaviour, so debug and release captures are the same).
    /// Marks a capture recorded under the world's virtual time (replay judges its timers exactly).
    public static let sdkNamePrefix = "imsim-client "
    public static let sdkName = sdkNamePrefix + IMSimVersion.string

    public init(deviceId: String, sink: any CaptureSink, options: CaptureRecorder.Options = .init(), source: String? = nil) {
        self.deviceId = deviceId
        self.sink = sink
        self.options = options
        self.source = source
    }

    public convenience init(deviceId: String, path: String, options: CaptureRecorder.Options = .init(),
                            source: String? = nil) throws(CaptureError) {
        self.init(deviceId: deviceId, sink: try CaptureFileSink(path: path), options: options, source: source)
    }

    /// Attaches to `world`; fails if the scenario has no such device.
    public func attach(to world: World) throws(CaptureError) {
        guard let d = world.deviceIndex(deviceId) else {
            sink.abandon()
            let known = (0..<world.deviceCount).map { world.deviceId($0) }
            throw CaptureError(.unsupported, line: 0, "no device \"\(deviceId)\" in the scenario (devices: \(known.prefix(20).joined(separator: ", "))\(known.count > 20 ? ", …" : ""))")
        }
        device = d
        self.world = world
        world.addObserver(self)
    }

    /// Ends the capture (snapshot, end of file, rename into place).
    public func finish() throws(CaptureError) {
        guard let world else { sink.abandon(); return }
        let r = startIfNeeded(world, localMs: world.localMs(ofDevice: device))
        if snapshotAtEnd { r.recordSnapshot(of: world.store(ofDevice: device), at: max(lastLocalMs, world.localMs(ofDevice: device))) }
        try r.finish()
    }

    public func abandon() {
        if let recorder { recorder.abandon() } else { sink.abandon() }
    }

    @discardableResult
    private func startIfNeeded(_ world: World, localMs: Int64) -> CaptureRecorder {
        if let recorder { return recorder }
        let identity: DeviceIdentity
        if let core = world.clientCore(ofDevice: device) {
            identity = core.identity
        } else {
            identity = DeviceIdentity(userId: world.userId(ofDevice: device), deviceId: deviceId, platform: platformFromScenario(world))
        }
        let config = world.clientCore(ofDevice: device)?.config ?? world.clientConfig
        let header = CaptureHeader(identity: identity, config: config, storeOptions: world.store(ofDevice: device).options,
                                   startMs: localMs, sdk: Self.sdkName, app: "imsim world (\(world.scenario.name))",
                                   source: source)
        let r = CaptureRecorder(header: header, sink: sink, options: options)
        recorder = r
        return r
    }

    private func platformFromScenario(_ world: World) -> Platform {
        for u in world.scenario.users { for d in u.devices where d.id == deviceId { return d.platform } }
        for p in Platform.allCases where deviceId.hasSuffix("-" + p.rawValue) { return p }
        return .mobile
    }

    // MARK: - Observer

    public func world(_ world: World, device d: Int, input: ClientInput, localMs: Int64) {
        guard d == device else { return }
        lastLocalMs = localMs
        startIfNeeded(world, localMs: localMs).record(input: input, at: localMs)
    }

    public func world(_ world: World, device d: Int, applied effects: AppliedClientEffects) {
        guard d == device else { return }
        startIfNeeded(world, localMs: lastLocalMs).record(effects: effects.effects, at: lastLocalMs)
    }

    public func world(_ world: World, note: WorldNote) {
        switch note {
        case .lifecycle(let d, .started) where d == device:
            lastLocalMs = world.localMs(ofDevice: d)
            startIfNeeded(world, localMs: lastLocalMs).recordAppStart(at: lastLocalMs)
        case .lifecycle(let d, .killed) where d == device:
            lastLocalMs = world.localMs(ofDevice: d)
            startIfNeeded(world, localMs: lastLocalMs).recordAppKill(at: lastLocalMs)
        case .clockStep(let d, let by) where d == device:
            lastLocalMs = world.localMs(ofDevice: d)
            startIfNeeded(world, localMs: lastLocalMs).recordClockStep(byMs: by, at: lastLocalMs)
        default:
            break
        }
    }
}
