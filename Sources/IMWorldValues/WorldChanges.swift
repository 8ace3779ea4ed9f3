// The world's value types that outlive a run: scenarios, traces, reports and the CLI name them,
// so they live apart from the simulator (a trace reader links this module, not IMWorld). Each
// type owns its stable encoding (its raw value), which the trace records write.

/// A device app's lifecycle step (trace `world.lifecycle`).
public enum LifecycleChange: String, Sendable {
    case started, foreground, background, killed
}

/// The run's phase (trace `world.phase`).
public enum RunPhase: String, Sendable {
    case active
    /// Faults healed; waiting for convergence.
    case liveness
    case finished
}
