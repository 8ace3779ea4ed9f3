import IMClient
import IMCapture
import IMStore
import SimKernel

/// Where a runtime client records its production capture: every input the client core is fed,
/// with the device-local time it was fed at, and every effect list it returned
/// (Docs/capture-format.md §5, "rules for a real driver"). Called on the client's event loop, in
/// order.
public protocol ClientCaptureSink: AnyObject {
    /// The app process started (a `ClientCore` was created over the store).
    func appStarted(localMs: Int64)
    func input(_ input: ClientInput, localMs: Int64)
    func effects(_ effects: [ClientEffect], localMs: Int64)
    /// The client stops: a last picture of the store, then the end of the capture.
    func finish(store: IMStore, localMs: Int64) throws
    /// The capture is given up (the client failed to start).
    func abandon()
}

/// What a capture factory is told about the client being started.
public struct ClientCaptureContext {
    public var identity: DeviceIdentity
    public var config: ClientConfig
    public var storeOptions: IMStore.Options
    /// The device-local ms at which the capture starts.
    public var startMs: Int64
    /// The database was created by this start (replay's fresh store matches it).
    public var freshStore: Bool
}

/// Makes the capture sink of a starting client (called on its event loop).
public typealias ClientCaptureFactory = @Sendable (ClientCaptureContext) throws -> any ClientCaptureSink

/// The production capture of a runtime client, written by IMReplay's `CaptureRecorder`.
public final class RecorderCaptureSink: ClientCaptureSink {
    public let recorder: CaptureRecorder

    public init(recorder: CaptureRecorder) { self.recorder = recorder }

    /// The header the runtime writes: SDK `imsim-runtime <version>`, the client's identity,
    /// config (bug switches, knobs) and store switches.
    public static func header(_ c: ClientCaptureContext, source: String?) -> CaptureHeader {
        CaptureHeader(identity: c.identity, config: c.config, storeOptions: c.storeOptions, startMs: c.startMs,
                      sdk: "imsim-runtime \(IMSimVersion.string)", app: "imsim client (SwiftNIO, TCP)",
                      freshStore: c.freshStore, source: source)
    }

    /// A factory writing `path` (`.zst` compresses; `PATH.partial` until the client stops).
    public static func file(_ path: String, source: String? = nil) -> ClientCaptureFactory {
        { context in
            RecorderCaptureSink(recorder: try CaptureRecorder(header: header(context, source: source), path: path))
        }
    }

    public func appStarted(localMs: Int64) { recorder.recordAppStart(at: localMs) }
    public func input(_ input: ClientInput, localMs: Int64) { recorder.record(input: input, at: localMs) }
    public func effects(_ effects: [ClientEffect], localMs: Int64) { recorder.record(effects: effects, at: localMs) }

    public func finish(store: IMStore, localMs: Int64) throws {
        recorder.recordSnapshot(of: store, at: localMs)
        try recorder.finish()
    }

    public func abandon() { recorder.abandon() }
}
