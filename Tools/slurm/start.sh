#!/usr/bin/env bash
# Starts a throwaway Slurm cluster on this machine, without systemd (root; see Docs/cluster.md):
#   Tools/slurm/start.sh              munged, slurmctld and one slurmd (node imsim-n0 on 127.0.0.1)
#   Tools/slurm/start.sh --nodes 3    slurmd nodes imsim-n1..3, each in its own network namespace
#                                     (veth pair on a private bridge imsim-br, 10.231.7.0/24 made
#                                     here; the controller is 10.231.7.1), each in its own PID
#                                     namespace so kill-node.sh can make one disappear.
# State, logs and pids go to $IMSIM_SLURM_STATE (default /tmp/imsim-slurm); afterwards
#   export SLURM_CONF=$IMSIM_SLURM_STATE/slurm.conf   (sbatch, squeue, imsim sweep submit)
# Stop with Tools/slurm/stop.sh. No traffic leaves loopback and these namespaces.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
S=${IMSIM_SLURM_STATE:-/tmp/imsim-slurm}
nodes=0
while [ $# -gt 0 ]; do
  case "$1" in
    --nodes) nodes=$2; shift 2 ;;
    --state) S=$2; shift 2 ;;
    *) echo "usage: start.sh [--nodes 2|3] [--state DIR]" >&2; exit 2 ;;
  esac
done
for t in munged slurmctld slurmd sinfo; do
  command -v $t >/dev/null || { echo "start.sh: $t not found (Tools/setup.sh --with-slurm)" >&2; exit 2; }
done
[ "$(id -u)" -eq 0 ] || { echo "start.sh: run as root (test daemons run as root here)" >&2; exit 2; }
mkdir -p "$S"
export SLURM_CONF=$S/slurm.conf

# munge: the key the Debian package made, a daemon unless one answers already.
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
  mkdir -p /etc/munge /run/munge /var/lib/munge /var/log/munge
  if [ ! -s /etc/munge/munge.key ]; then
    dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
  fi
  chmod 0400 /etc/munge/munge.key; chmod 0700 /etc/munge
  munged --force
  touch "$S/munged.ours"
  for _ in $(seq 50); do munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.1; done
fi

if [ "$nodes" -eq 0 ]; then
  "$here/slurm-conf.sh" "$S" >/dev/null
  mkdir -p "$S/spool/imsim-n0"
  slurmctld -c
  slurmd -N imsim-n0
  names=(imsim-n0)
else
  [ "$nodes" -ge 1 ] && [ "$nodes" -le 8 ] || { echo "start.sh: --nodes 1..8" >&2; exit 2; }
  ip link show imsim-br >/dev/null 2>&1 || {
    ip link add imsim-br type bridge
    ip addr add 10.231.7.1/24 dev imsim-br
    ip link set imsim-br up
  }
  specs=(); names=()
  for i in $(seq 1 "$nodes"); do
    n=imsim-n$i; addr=10.231.7.$((10 + i))
    specs+=("$n=$addr"); names+=("$n")
    ip netns list | grep -qw "$n" || {
      ip netns add "$n"
      ip link add "imsim-v$i" type veth peer name "imsim-p$i"
      ip link set "imsim-p$i" netns "$n"
      ip link set "imsim-v$i" master imsim-br up
      ip netns exec "$n" ip addr add "$addr/24" dev "imsim-p$i"
      ip netns exec "$n" ip link set "imsim-p$i" up
      ip netns exec "$n" ip link set lo up
    }
  done
  IMSIM_SLURM_CTL_ADDR=10.231.7.1 IMSIM_SLURM_CPUS=${IMSIM_SLURM_CPUS:-1} "$here/slurm-conf.sh" "$S" "${specs[@]}" >/dev/null
  slurmctld -c
  for i in $(seq 1 "$nodes"); do
    n=imsim-n$i
    mkdir -p "$S/spool/$n"
    # Its own network and PID namespace: killing the namespace's first process is a lost node.
    # nsenter, not `ip netns exec`: that mounts a fresh /sys, and slurmd 22.05 inspects
    # /sys/fs/cgroup on start even with proctrack/linuxproc and task/none (it uses no cgroup).
    setsid nsenter --net=/run/netns/"$n" unshare --pid --fork --mount-proc \
      slurmd -D -N "$n" >"$S/log/$n.console" 2>&1 &
    echo $! > "$S/node-$n.pid"
  done
fi
printf '%s\n' "${names[@]}" > "$S/nodes"
# Ready when every node is idle.
for _ in $(seq 60); do
  idle=$(sinfo -h -N -o '%N %t' 2>/dev/null | awk '$2=="idle"' | wc -l)
  [ "$idle" -ge "${#names[@]}" ] && { echo "slurm up: ${names[*]} (SLURM_CONF=$SLURM_CONF)"; exit 0; }
  sleep 0.5
done
echo "start.sh: nodes not idle after 30 s:" >&2
sinfo -N >&2 || true
tail -n 5 "$S"/log/*.log >&2 || true
exit 1
