#!/usr/bin/env bash
# CI: sweeps through a real Slurm on this machine (Docs/cluster.md). Needs root (daemons, network
# namespaces). Usage: Tools/slurm/ci-test.sh [IMSIM]   (default .build/release/imsim)
#  1. one node: `imsim sweep submit --engine slurm` of 200 quickstart seeds with B4 on, 4 shards,
#     throttle 2; the dependent merge job's result must be byte-identical to a local sweep's.
#  2. three nodes in their own network namespaces: 600 seeds in 6 shards; one node is killed while
#     its task runs. Its shard must come back: requeued by Slurm and finished elsewhere, or named
#     missing by merge (then rerun here and merged) — never silently dropped.
# Skips (exit 0, with the reason) only where Slurm cannot be installed or run here.
set -uo pipefail
cd "$(dirname "$0")/../.."
imsim=$(realpath "${1:-.build/release/imsim}")
here=$(pwd)/Tools/slurm
export IMSIM_SLURM_STATE=/tmp/imsim-slurm-ci
export SLURM_CONF=$IMSIM_SLURM_STATE/slurm.conf
W=/tmp/imsim-slurm-ci-work
t0=$(date +%s)
say() { echo "[slurm-ci $(( $(date +%s) - t0 ))s] $*"; }
die() { say "FAIL: $*"; for f in "$IMSIM_SLURM_STATE"/log/*.log; do echo "--- $f"; tail -15 "$f"; done; "$here/stop.sh" >/dev/null; exit 1; }

if [ "$(id -u)" -ne 0 ]; then say "SKIP: needs root (Slurm daemons, network namespaces)"; exit 0; fi
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
  ./Tools/setup.sh --with-slurm || { say "SKIP: slurm-wlm and munge cannot be installed here (apt-get failed)"; exit 0; }
fi
command -v slurmctld >/dev/null || { say "SKIP: slurm-wlm not installable here"; exit 0; }
[ -x "$imsim" ] || die "no imsim at $imsim"
trap '"$here/stop.sh" >/dev/null 2>&1' EXIT
"$here/stop.sh" >/dev/null 2>&1
rm -rf "$W"; mkdir -p "$W"

# Waits for DIR/merge.rc (the dependent merge job) for at most $2 seconds.
wait_merge() {
  local dir=$1 limit=$2 n=0
  while [ ! -s "$dir/merge.rc" ]; do
    sleep 1; n=$((n + 1))
    [ $((n % 10)) -eq 0 ] && say "$("$imsim" sweep status "$dir" | head -1)"
    [ $n -ge "$limit" ] && { squeue; die "merge job of $dir not done after ${limit}s"; }
  done
}

say "local reference sweeps"
"$imsim" sweep quickstart --seeds 1..200 --bugs B4 --jobs 2 --out "$W/local200" > "$W/local200.txt"; rc=$?
[ $rc -eq 1 ] || die "local sweep of 1..200 with B4: expected failures (exit 1), got $rc"
tail -3 "$W/local200.txt"

say "one node"
"$here/start.sh" || die "slurm did not start"
"$imsim" sweep submit quickstart --seeds 1..200 --shards 4 --throttle 2 --bugs B4 --out "$W/one" --engine slurm || die "submit failed"
wait_merge "$W/one" 120
cat "$W/one/merge.txt"
[ "$(cat "$W/one/merge.rc")" = 1 ] || die "merge exit $(cat "$W/one/merge.rc"), expected 1 (failures)"
cmp "$W/one/merged.jsonl" "$W/local200/results.jsonl" || die "merged results differ from the local sweep"
say "one node: merged failures and digests identical to the local sweep ($(grep -c '"outcome":"fail"' "$W/one/merged.jsonl") failures)"
"$imsim" sweep status "$W/one"
"$here/stop.sh"

say "three nodes in network namespaces, one killed mid-array"
if ! { ip netns add imsim-probe && ip netns del imsim-probe; } 2>/dev/null; then
  say "SKIP multi-node part: this machine cannot create network namespaces (ip netns add failed; needs CAP_NET_ADMIN)"
  "$here/stop.sh"; say "slurm CI passed (one node only)"; exit 0
fi
# Whole runs (swarm, B1: a few failures) so a shard of 100 seeds runs long enough to be killed.
multi=(quickstart --seeds 1..${IMSIM_SLURM_CI_SEEDS:-600} --swarm --bugs B1)
"$imsim" sweep "${multi[@]}" --jobs 2 --out "$W/local600" > "$W/local600.txt"; rc=$?
[ $rc -le 1 ] || die "local sweep of 1..600: exit $rc"
"$here/start.sh" --nodes 3 || die "multi-node slurm did not start"
sub=$("$imsim" sweep submit "${multi[@]}" --shards 6 --out "$W/multi" --engine slurm); echo "$sub"
arr=$(echo "$sub" | awk '/^array job/ {print $3}' | tr -d :)
[ -n "$arr" ] || die "submit failed"
victim=""
for _ in $(seq 600); do
  victim=$(squeue -h -r -t RUNNING -o '%N %K' | awk '$1=="imsim-n2" {print $2; exit}')
  # Killed once its shard has recorded a few seeds, so the requeued task has something to resume.
  part=$(printf '%s/shard-%04d-of-0006.jsonl.partial' "$W/multi" "${victim:-0}")
  if [ -n "$victim" ] && [ -f "$part" ] && [ "$(wc -l < "$part")" -ge 4 ]; then break; fi
  victim=""
  sleep 0.1
done
[ -n "$victim" ] || die "no task of imsim-n2 got going"
"$here/kill-node.sh" imsim-n2
say "killed imsim-n2 while it ran shard $victim ($(($(wc -l < "$part") - 1)) seeds recorded)"
# Slurm marks the node down after SlurmdTimeout and requeues its task, eligible 2 minutes later;
# CI does not wait for that: it makes the requeued task eligible now.
for _ in $(seq 60); do
  st=$(squeue -h -r -j "${arr}_$victim" -o '%T %r' 2>/dev/null)
  case "$st" in PENDING*) break ;; esac
  sleep 1
done
say "shard $victim after the node loss: ${st:-not in the queue}"
case "$st" in PENDING*) scontrol update JobId="${arr}_$victim" StartTime=now ;; esac
wait_merge "$W/multi" 200
cat "$W/multi/merge.txt"
sinfo -N
rc=$(cat "$W/multi/merge.rc")
if [ "$rc" = 2 ]; then
  grep -q "missing shard" "$W/multi/merge.txt" || die "merge exit 2 without naming the missing shards"
  missing=$("$imsim" sweep merge "$W/multi" 2>&1 >/dev/null | sed -n 's/.*missing shard(s) \(.*\) of 6.*/\1/p' | sed 's/ (partial)//g; s/,//g')
  say "merge named missing shard(s): $missing — rerunning them here"
  for i in $missing; do "$imsim" sweep quickstart --seeds 1..600 --bugs B4 --shard "$i/6" --jobs 2 --out "$W/multi" >/dev/null; done
  "$imsim" sweep merge "$W/multi" > /dev/null; rc=$?
else
  say "the lost shard was requeued and finished on another node: $(grep -ah "^imsim shard\|^sweep: resuming" "$W/multi/slurm/task-${arr}_$victim.out" | tr '\n' ' ')"
fi
[ "$rc" = 1 ] || die "merge exit $rc, expected 1"
cmp "$W/multi/merged.jsonl" "$W/local600/results.jsonl" || die "multi-node merged results differ from the local sweep"
used=$(grep -h "^imsim shard" "$W"/multi/slurm/task-*.out | awk '{print $5}' | sort | uniq -c | tr -s ' ' | tr '\n' ';')
say "multi-node: merged results identical to the local sweep; tasks per node: $used"
[ "$(grep -h "^imsim shard" "$W"/multi/slurm/task-*.out | awk '{print $5}' | sort -u | wc -l)" -ge 2 ] || die "the tasks did not spread over nodes"
"$here/stop.sh"
say "slurm CI passed"
