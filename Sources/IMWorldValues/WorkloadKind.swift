// The world's value types that outlive a run: scenarios, traces, reports and the CLI name them,
// so they live apart from the simulator (a trace reader links this module, not IMWorld). Each
// type owns its stable encoding (its raw value), which the trace records write.

public enum WorkloadKind: UInt8, Sendable, CaseIterable {
    case privateMessage, groupMessage, chatroomMessage, like, churn, read, typing, burstStart, burstLike, recall, rejoin
    // App behaviours (appended: trace records keep the raw values above).
    case history, historyPage, kvRead, kvWrite, reenter, reconnect, reconnectBack, resend
}
