#!/usr/bin/env bash
# Installs the system libraries IMSim links against, if they are missing:
#   libsqlite3-dev (the real message store) and libzstd-dev (trace compression).
# Pass --with-protoc to also install protobuf-compiler (the wire cross-check test uses it).
# Pass --with-slurm to also install slurm-wlm and munge (Tools/slurm/, Docs/cluster.md).
# Safe to run repeatedly; does nothing when everything is present.
set -euo pipefail

need=()
have_header() { echo "#include <$1>" | cc -E -x c - >/dev/null 2>&1; }
have_header sqlite3.h || need+=(libsqlite3-dev)
have_header zstd.h || need+=(libzstd-dev)
if [ "${1:-}" = "--with-protoc" ] && ! command -v protoc >/dev/null 2>&1; then
  need+=(protobuf-compiler)
fi
for a in "$@"; do
  if [ "$a" = "--with-slurm" ] && ! { command -v slurmctld && command -v munged; } >/dev/null 2>&1; then
    need+=(slurm-wlm munge)
  fi
done
[ ${#need[@]} -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
  echo "setup: missing ${need[*]} and no apt-get here; install them with your package manager" >&2
  exit 1
fi
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
echo "setup: installing ${need[*]}" >&2
$sudo apt-get update -qq >/dev/null || true
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
