import IMClient

/// Where a runtime client records its production capture: every input the client core is fed,
/// with the device-local time it was fed at, and every effect list it returned. The runtime calls
/// it on the client's event loop, in order; `finish()` when the client stops.
public protocol ClientCaptureSink: AnyObject {
    func input(_ input: ClientInput, localMs: Int64)
    func effects(_ effects: [ClientEffect], localMs: Int64)
    func finish() throws
}

/// Makes the capture sink of a starting client (on its event loop): identity, the SDK
/// configuration and the device-local start time.
public typealias ClientCaptureFactory = @Sendable (_ identity: DeviceIdentity, _ config: ClientConfig, _ startMs: Int64) throws -> any ClientCaptureSink
