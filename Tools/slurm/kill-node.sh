#!/usr/bin/env bash
# Makes one node of a start.sh --nodes cluster disappear: kills its PID namespace (slurmd, its
# slurmstepd and the tasks running there), as a machine that loses power.
set -euo pipefail
S=${IMSIM_SLURM_STATE:-/tmp/imsim-slurm}
n=${1:?usage: kill-node.sh NODE (e.g. imsim-n2)}
pid=$(cat "$S/node-$n.pid")
# The namespace's init is unshare's child; SIGKILL to it ends every process in the namespace.
init=$(pgrep -P "$pid" | head -1 || true)
[ -n "$init" ] && kill -KILL "$init"
kill -KILL "$pid" 2>/dev/null || true
echo "killed node $n"
