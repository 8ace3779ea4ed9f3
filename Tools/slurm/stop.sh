#!/usr/bin/env bash
# Stops what start.sh started (only that: pids from its state directory) and removes its
# namespaces and bridge.
set -uo pipefail
S=${IMSIM_SLURM_STATE:-/tmp/imsim-slurm}
export SLURM_CONF=$S/slurm.conf
[ -f "$SLURM_CONF" ] && scancel --quiet --user=root 2>/dev/null
for f in "$S"/node-*.pid; do
  [ -f "$f" ] || continue
  pid=$(cat "$f"); init=$(pgrep -P "$pid" | head -1)
  [ -n "$init" ] && kill -KILL "$init" 2>/dev/null
  kill -KILL "$pid" 2>/dev/null
  rm -f "$f"
done
for f in "$S"/slurmd-*.pid "$S"/slurmctld.pid; do
  [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null
  rm -f "$f"
done
if [ -f "$S/munged.ours" ]; then
  pid=$(cat /run/munge/munged.pid 2>/dev/null) && kill "$pid" 2>/dev/null
  rm -f "$S/munged.ours"
fi
for n in $(ip netns list 2>/dev/null | awk '{print $1}' | grep '^imsim-n'); do ip netns del "$n"; done
ip link show imsim-br >/dev/null 2>&1 && ip link del imsim-br
echo "slurm stopped"
exit 0
