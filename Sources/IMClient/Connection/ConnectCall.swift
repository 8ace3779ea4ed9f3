/// One `connect(token, timeLimit)` call of the app and what belongs to it across the automatic
/// reconnects it causes. Every active connection state carries it.
struct ConnectCall: Sendable, Hashable {
    var token: String
    /// ≤ 0: retry forever; > 0: give up after that many seconds with 34006 unless connected.
    var timeLimitSeconds: Int32
    /// `connected(userId)` or `connectError(code)` was reported for this call (once per call).
    var outcomeReported = false
    /// Reached CONNECTED at least once: later CONNECTs are automatic reconnects (flag 0x04).
    var everConnected = false
    /// Position in the reconnect schedule of the next delay.
    var backoffIndex = 0
    /// Connection attempts made by this call (first = 1).
    var attempts = 0

    init(token: String, timeLimitSeconds: Int32) {
        self.token = token
        self.timeLimitSeconds = timeLimitSeconds
    }
}
