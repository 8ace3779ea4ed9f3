#!/usr/bin/env python3
"""Checks an `imsim trace export --format perfetto` file with the perfetto package's protobuf
bindings (pip install perfetto protobuf), independently of the Swift encoder:

  * it parses as a perfetto.protos Trace; every packet has a timestamp and a sequence id;
  * every track an event uses is described (TrackDescriptor) and has a name; the names include
    "server" and, with --devices, "device <id> (...)" for each id;
  * slices (TYPE_SLICE_BEGIN / TYPE_SLICE_END) nest on each track and every slice ends;
  * counters carry a value and sit on counter tracks;
  * flows: every flow id starts at a "send …" (or, for a server-originated message, "accepted …")
    instant, ends with exactly one terminating "stored …" instant, and all its events carry the
    same message uid; with --expect-stores N, at least N flows.

Usage: check_trace.py FILE.perfetto-trace [--devices a,b] [--expect-stores N] [--json]
Exit 0 when every check passes, 1 with the failures listed, 2 when the file cannot be read.
"""
import argparse
import json
import sys

try:
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
except ImportError as e:  # the caller (a test, CI) reports this as "not installed"
    print(f"check_trace: the perfetto package is missing ({e}); pip install perfetto protobuf", file=sys.stderr)
    sys.exit(2)

TE = pb.TrackEvent


def load(path):
    t = pb.Trace()
    with open(path, "rb") as fh:
        t.ParseFromString(fh.read())
    return t


def check(trace, devices=(), expect_stores=0):
    failures = []
    names, parents, counters = {}, {}, set()
    events = []  # (packet index, timestamp, TrackEvent)
    for i, p in enumerate(trace.packet):
        if not p.HasField("timestamp"):
            failures.append(f"packet {i}: no timestamp")
        if not p.HasField("trusted_packet_sequence_id"):
            failures.append(f"packet {i}: no trusted_packet_sequence_id")
        if p.HasField("track_descriptor"):
            d = p.track_descriptor
            if d.uuid in names:
                failures.append(f"packet {i}: track {d.uuid} described twice")
            names[d.uuid] = d.name
            if d.HasField("parent_uuid"):
                parents[d.uuid] = d.parent_uuid
            if d.HasField("counter"):
                counters.add(d.uuid)
        elif p.HasField("track_event"):
            events.append((i, p.timestamp, p.track_event))
    for uuid, name in names.items():
        if not name:
            failures.append(f"track {uuid}: no name")
    for uuid, parent in parents.items():
        if parent not in names:
            failures.append(f"track {names[uuid]!r}: parent {parent} not described")
    if "server" not in names.values():
        failures.append("no track named 'server'")
    for d in devices:
        if not any(n.startswith(f"device {d} ") or n == f"device {d}" for n in names.values()):
            failures.append(f"no track for device {d}")

    depth = {}
    flows = {}  # id -> [(packet, name, uid, terminating)]
    last_ts = {}
    slices = 0
    for i, ts, e in events:
        if e.track_uuid not in names:
            failures.append(f"packet {i}: event on undescribed track {e.track_uuid}")
            continue
        if ts < last_ts.get(e.track_uuid, 0):
            failures.append(f"packet {i}: time goes backwards on {names[e.track_uuid]!r}")
        last_ts[e.track_uuid] = ts
        uid = next((a.string_value for a in e.debug_annotations if a.name == "uid"), None)
        if e.type == TE.TYPE_SLICE_BEGIN:
            depth[e.track_uuid] = depth.get(e.track_uuid, 0) + 1
            slices += 1
        elif e.type == TE.TYPE_SLICE_END:
            if depth.get(e.track_uuid, 0) == 0:
                failures.append(f"packet {i}: slice end without a begin on {names[e.track_uuid]!r}")
            else:
                depth[e.track_uuid] -= 1
        elif e.type == TE.TYPE_COUNTER:
            if e.track_uuid not in counters:
                failures.append(f"packet {i}: counter value on non-counter track {names[e.track_uuid]!r}")
            if not e.HasField("counter_value") and not e.HasField("double_counter_value"):
                failures.append(f"packet {i}: counter event without a value")
        elif e.type == TE.TYPE_INSTANT:
            if not e.name:
                failures.append(f"packet {i}: instant without a name")
        for fid in e.flow_ids:
            flows.setdefault(fid, []).append((i, e.name, uid, False))
        for fid in e.terminating_flow_ids:
            flows.setdefault(fid, []).append((i, e.name, uid, True))
    for uuid, d in sorted(depth.items()):
        if d:
            failures.append(f"{d} slice(s) never end on {names[uuid]!r}")

    complete = 0
    for fid, steps in flows.items():
        first, last = steps[0], steps[-1]
        uids = {s[2] for s in steps if s[2] is not None}
        if len(uids) != 1:
            failures.append(f"flow {fid:#x}: steps name {len(uids)} message uids {sorted(uids)[:3]}")
            continue
        (uid,) = uids
        if not (first[1].startswith("send") or first[1].startswith("accepted")):
            failures.append(f"flow {fid:#x} ({uid}): starts at {first[1]!r}, not at the send")
        if not last[3] or not last[1].startswith("stored"):
            failures.append(f"flow {fid:#x} ({uid}): ends at {last[1]!r}, not at a store")
        if sum(1 for s in steps if s[3]) != 1:
            failures.append(f"flow {fid:#x} ({uid}): {sum(1 for s in steps if s[3])} terminating steps")
        if len(steps) < 2:
            failures.append(f"flow {fid:#x} ({uid}): a single step")
        complete += 1
    if complete < expect_stores:
        failures.append(f"{complete} flows, expected at least {expect_stores}")
    summary = {"packets": len(trace.packet), "tracks": len(names), "events": len(events), "slices": slices,
               "flows": len(flows), "trackNames": sorted(set(names.values()))}
    return failures, summary


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("file")
    ap.add_argument("--devices", default="", help="comma-separated device ids that must have a track")
    ap.add_argument("--expect-stores", type=int, default=0, help="least number of complete message flows")
    ap.add_argument("--json", action="store_true", help="print the summary as JSON")
    a = ap.parse_args()
    try:
        trace = load(a.file)
    except Exception as e:  # noqa: BLE001 - any parse failure is a clear exit 2
        print(f"check_trace: {a.file}: cannot parse as a Perfetto trace: {e}", file=sys.stderr)
        return 2
    failures, summary = check(trace, [d for d in a.devices.split(",") if d], a.expect_stores)
    print(json.dumps(summary) if a.json else
          f"{a.file}: {summary['packets']} packets, {summary['tracks']} tracks, {summary['slices']} slices, {summary['flows']} flows")
    for f in failures[:50]:
        print("FAIL", f)
    if len(failures) > 50:
        print(f"FAIL … {len(failures) - 50} more")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
