// The stable kinds of the world's events and notes, declared once here, below both the world
// (IMWorld folds `WorldEventKind` into the run digest) and the trace format (which writes them
// as record kinds without linking the simulator). Traces on disk name them: never renumber.

/// The kind of a kernel event of a simulated world (`WorldEvent.kind`, folded into the run
/// digest) and of its trace record: 1–19, and 32.
public enum WorldEventKind: UInt16, CaseIterable, Sendable {
    case appStart = 1, script, deliverUp, deliverDown, connectArrive, connectComplete, closeUp, closeDown, clientTimer,
         serverTimer, workload, faultStart, faultEnd, serverRestart, heal, convergenceCheck, end, networkUp, networkDown
    /// Trace only: a room-wide workload event (a like burst; no user). The digest folds it as
    /// `workload`.
    case roomWorkload = 32
}

/// The trace record kind of a world note (`WorldNote`): 176–187.
public enum WorldNoteKind: UInt16, CaseIterable, Sendable {
    case connectionOpened = 176, connectionRefused, connectTimedOut, bytesLost, fault, lifecycle, network, clockStep,
         serverDown, serverUp, phase, script
}
