#!/usr/bin/env python3
"""Renders one message's flow from an `imsim trace export --format perfetto` file as a small
timeline PNG (matplotlib + the perfetto package's protobuf bindings), for when no Perfetto UI is
at hand (ui.perfetto.dev needs the network).

  python3 Tools/perfetto/timeline.py run.perfetto-trace --out Docs/images/message-flow.png [--uid UID]

Without --uid it picks the first message that was stored on the most devices. Rows are the
tracks the message crossed (sender, server, each receiver); dots are the flow's steps (send,
accepted, fan-out / pull, stored), arrows join the steps of each (message, device) flow, and the
grey bars behind are the devices' connection-state slices around it.
"""
import argparse
import sys

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

TE = pb.TrackEvent


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("file")
    ap.add_argument("--out", required=True)
    ap.add_argument("--uid", help="messageUId to draw (default: the most widely stored message)")
    a = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("timeline: matplotlib is missing (pip install matplotlib)", file=sys.stderr)
        return 2

    t = pb.Trace()
    with open(a.file, "rb") as fh:
        t.ParseFromString(fh.read())
    names, parent = {}, {}
    events = []
    for p in t.packet:
        if p.HasField("track_descriptor"):
            names[p.track_descriptor.uuid] = p.track_descriptor.name
            if p.track_descriptor.HasField("parent_uuid"):
                parent[p.track_descriptor.uuid] = p.track_descriptor.parent_uuid
        elif p.HasField("track_event"):
            events.append((p.timestamp, p.track_event))

    def uid_of(e):
        return next((x.string_value for x in e.debug_annotations if x.name == "uid"), None)

    flows = {}
    for ts, e in events:
        for fid in list(e.flow_ids) + list(e.terminating_flow_ids):
            flows.setdefault(fid, []).append((ts, e))
    by_uid = {}
    for fid, steps in flows.items():
        u = uid_of(steps[0][1])
        if u:
            by_uid.setdefault(u, []).append(fid)
    if not by_uid:
        print("timeline: the trace has no message flows", file=sys.stderr)
        return 1
    uid = a.uid or max(sorted(by_uid), key=lambda u: len(by_uid[u]))
    if uid not in by_uid:
        print(f"timeline: no flow for message {uid}", file=sys.stderr)
        return 1

    steps = sorted({(ts, e.track_uuid, e.name) for fid in by_uid[uid] for ts, e in flows[fid]})
    t0 = steps[0][0]
    t1 = steps[-1][0]
    span = max(t1 - t0, 1)
    rows = []
    for _, track, _ in steps:
        if track not in rows:
            rows.append(track)
    y = {track: len(rows) - 1 - i for i, track in enumerate(rows)}

    fig, ax = plt.subplots(figsize=(9, 1.2 + 0.75 * len(rows)), dpi=110)
    # Connection-state slices of the devices involved, as grey bars behind.
    open_at = {}
    for ts, e in events:
        dev = parent.get(e.track_uuid)
        if dev not in y or not names.get(e.track_uuid, "").endswith(" connection"):
            continue
        if e.type == TE.TYPE_SLICE_BEGIN:
            open_at[e.track_uuid] = (ts, e.name)
        elif e.type == TE.TYPE_SLICE_END and e.track_uuid in open_at:
            s, n = open_at.pop(e.track_uuid)
            lo, hi = max(s, t0 - span // 4), min(ts, t1 + span // 4)
            if lo < hi:
                ax.barh(y[dev], (hi - lo) / 1e6, left=(lo - t0) / 1e6, height=0.5, color="#e8e8e8", zorder=0)
                ax.text((lo - t0) / 1e6, y[dev] + 0.28, n, fontsize=7, color="#888888")
    for fid in by_uid[uid]:
        pts = sorted({(ts, e.track_uuid) for ts, e in flows[fid]})
        for (ta, ra), (tb, rb) in zip(pts, pts[1:]):
            ax.annotate("", xy=((tb - t0) / 1e6, y[rb]), xytext=((ta - t0) / 1e6, y[ra]),
                        arrowprops=dict(arrowstyle="->", color="#3b6fb6", lw=1.0, alpha=0.7), zorder=1)
    # One dot per (time, track); steps at the same instant share a label ("accepted + fan-out").
    labels = {}
    for ts, track, name in steps:
        words = labels.setdefault((ts, track), [])
        if name.split(" ")[0] not in words:
            words.append(name.split(" ")[0])
    for (ts, track), words in sorted(labels.items()):
        x = (ts - t0) / 1e6
        ax.plot([x], [y[track]], "o", color="#d1495b" if words[0] == "stored" else "#00798c", zorder=2)
        ax.text(x, y[track] - 0.3, " + ".join(words), fontsize=7, ha="center", va="top")
    ax.set_yticks([y[r] for r in rows])
    ax.set_yticklabels([names.get(r, str(r)) for r in rows], fontsize=8)
    ax.set_ylim(-0.8, len(rows) - 0.2)
    ax.set_xlim(-span / 4e6, span * 1.25 / 1e6)
    ax.set_xlabel(f"ms after the send (virtual time {t0 / 1e9:.3f} s)")
    ax.set_title(f"message {uid}: send → server → every store", fontsize=10)
    ax.grid(axis="x", color="#f0f0f0")
    fig.tight_layout()
    fig.savefig(a.out)
    print(f"wrote {a.out}: message {uid}, {len(by_uid[uid])} flows, {len(steps)} steps")
    return 0


if __name__ == "__main__":
    sys.exit(main())
