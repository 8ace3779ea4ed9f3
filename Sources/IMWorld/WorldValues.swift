// The value types a trace or report names (FaultKind, WorkloadKind, LifecycleChange, RunPhase,
// Violation) live in IMWorldValues, so a trace reader need not link the simulator; re-exported
// here so `import IMWorld` still gives them.
@_exported import IMWorldValues
