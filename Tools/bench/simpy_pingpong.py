#!/usr/bin/env python3
"""The `imsim bench kernel` workload in SimPy, the peer baseline.

N nodes play ping-pong with random delays (10 us - 1 ms) to random peers; every message a node
receives re-arms its idle timer (1 - 3 ms), so most timers are cancelled before they fire.
Times are integer nanoseconds, like IMSim. SimPy has no event cancellation, so a cancelled timer
is a flag checked when it fires (lazy cancellation, the cheapest SimPy idiom), and messages are
plain `Timeout` events with callbacks rather than processes (faster than processes), so this is a
generous baseline.

Installs simpy from PyPI when it is missing.
"""
import argparse
import json
import random
import subprocess
import sys
import time

try:
    import simpy
except ImportError:
    subprocess.check_call([sys.executable, "-m", "pip", "install", "--quiet", "simpy"],
                          stdout=sys.stderr)
    import simpy


def run(nodes, events, seed):
    env = simpy.Environment()
    rngs = [random.Random(seed * 1_000_003 + i) for i in range(nodes)]
    timers = [None] * nodes          # current timer token per node
    state = {"dispatched": 0, "pings": 0, "timeouts": 0, "cancelled": 0}

    class Done(Exception):
        pass

    def count():
        state["dispatched"] += 1
        if state["dispatched"] >= events:
            raise Done()

    def rearm(i):
        if timers[i] is not None:
            timers[i][0] = True      # cancelled
            state["cancelled"] += 1
        token = [False]
        timers[i] = token
        d = rngs[i].randint(1_000_000, 3_000_000)
        ev = env.timeout(d)
        ev.callbacks.append(lambda _e, i=i, token=token: on_timeout(i, token))

    def on_timeout(i, token):
        if token[0]:
            return                   # cancelled: not a dispatched event
        count()
        state["timeouts"] += 1
        timers[i] = None
        rearm(i)

    def send_ping(i):
        peer = rngs[i].randrange(nodes - 1)
        if peer >= i:
            peer += 1
        d = rngs[i].randint(10_000, 1_000_000)
        ev = env.timeout(d)
        ev.callbacks.append(lambda _e, peer=peer, src=i: on_ping(peer, src))
        state["pings"] += 1

    def on_ping(i, src):
        count()
        d = rngs[i].randint(10_000, 1_000_000)
        ev = env.timeout(d)
        ev.callbacks.append(lambda _e, dst=src: on_pong(dst))
        rearm(i)

    def on_pong(i):
        count()
        send_ping(i)
        rearm(i)

    for i in range(nodes):
        send_ping(i)
        rearm(i)

    start = time.perf_counter()
    try:
        env.run()
    except Done:
        pass
    secs = time.perf_counter() - start
    return state, secs, env.now


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    state, secs, now = run(a.nodes, a.events, a.seed)
    out = {
        "events": state["dispatched"], "seconds": secs,
        "events_per_s": state["dispatched"] / secs if secs > 0 else 0.0,
        "pings": state["pings"], "timeouts": state["timeouts"], "cancelled": state["cancelled"],
        "sim_time_ns": now, "simpy_version": simpy.__version__,
    }
    if a.json:
        print(json.dumps(out))
    else:
        print(f"SimPy {simpy.__version__}: {out['events']} events in {secs:.3f} s "
              f"= {out['events_per_s']:.0f} events/s")


if __name__ == "__main__":
    main()
