import NIOCore
import SimKernel

/// The timers of one core on its event loop, on the loop's monotonic clock. Setting a timer
/// replaces the pending one with the same id (the cores' contract); a fired or cancelled timer is
/// forgotten. Loop-confined: every method runs on `loop`.
final class TimerTable<Timer: Hashable> {
    private struct Pending {
        var task: Scheduled<Void>
        var generation: UInt64
    }
    private var pending: [Timer: Pending] = [:]
    private var generation: UInt64 = 0
    let loop: EventLoop

    init(loop: EventLoop) { self.loop = loop }

    var count: Int { pending.count }

    /// Arms `timer` to call `fire` after `after` (replacing a pending one).
    func set(_ timer: Timer, after: SimDuration, fire: @escaping (Timer) -> Void) {
        pending.removeValue(forKey: timer)?.task.cancel()
        generation &+= 1
        let g = generation
        let task = loop.assumeIsolated().scheduleTask(in: .nanoseconds(max(0, after.nanoseconds))) { [weak self] in
            guard let self, let p = self.pending[timer], p.generation == g else { return }
            self.pending.removeValue(forKey: timer)
            fire(timer)
        }
        pending[timer] = Pending(task: task, generation: g)
    }

    func cancel(_ timer: Timer) {
        pending.removeValue(forKey: timer)?.task.cancel()
    }

    func cancelAll() {
        // Order is irrelevant: cancelling decides nothing.
        for (_, p) in pending { p.task.cancel() }
        pending = [:]
    }
}
