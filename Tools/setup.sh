#!/usr/bin/env bash
# Installs what IMSim builds and tests with, if it is missing. Safe to run repeatedly; does
# nothing when everything is present. Flags may be combined.
#
# Always (the build needs them):
#   SQLite 3.50.4   the real message store, built with the project: its amalgamation is fetched
#                   from PyPI (the sqlean.py sdist carries it) into Sources/CSQLite, checked
#                   against pinned SHA-256 sums (Docs/store.md "Which SQLite")
#   libzstd-dev     trace compression
#   libpcap-dev     `imsim import pcap` reads packet captures with libpcap
# Optional:
#   --with-protoc         protobuf-compiler (the wire cross-check test)
#   --with-tshark         tshark, and the perfetto + protobuf PyPI packages (Wireshark / Perfetto
#                         export tests; Docs/look.md)
#   --with-capture-tools  tcpdump and tshark (import tests record loopback traffic and check TCP
#                         reassembly against tshark; Docs/guide-reproduce-a-bug.md)
#   --with-slurm          slurm-wlm and munge (Tools/slurm/, Docs/cluster.md)
#   --all                 every optional flag (what .ci/run uses)
set -euo pipefail

usage="known: --with-protoc, --with-tshark, --with-capture-tools, --with-slurm, --all"
with_protoc=0 with_tshark=0 with_capture=0 with_slurm=0
for arg in "$@"; do
  case "$arg" in
    --with-protoc) with_protoc=1 ;;
    --with-tshark) with_tshark=1 ;;
    --with-capture-tools) with_capture=1 ;;
    --with-slurm) with_slurm=1 ;;
    --all) with_protoc=1 with_tshark=1 with_capture=1 with_slurm=1 ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "setup: unknown option $arg ($usage)" >&2; exit 2 ;;
  esac
done

# SQLite: the official 3.50.4 amalgamation (SQLITE_SOURCE_ID 2025-07-30 19:33:53 4d8adfb3…) as
# the sqlean.py 3.50.4.5 sdist ships it, less the lines sqlean appends after its end marker.
sqlite_dir="$(cd "$(dirname "$0")/.." && pwd)/Sources/CSQLite"
sqlite_sdist="sqlean.py==3.50.4.5"
sqlite_sdist_sha=9764b565e7ab430ab6e9e43cb2816199c2b39926dffc93c212a52f0019278459
sqlite_c_sha=e3f5d6901e7492af4a1fc8c4d745cae84c264942524c3fbfc02b82a5ca8818c8
sqlite_h_sha=abd1514e0351f79393d1be882830afdb40a8099e8257f311f0bfdf8486f11bea
sha_ok() { [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]; }
fetch_sqlite() {
  sha_ok "$sqlite_dir/sqlite3.c" $sqlite_c_sha && sha_ok "$sqlite_dir/include/sqlite3.h" $sqlite_h_sha && return 0
  local tmp; tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' RETURN
  echo "setup: fetching SQLite 3.50.4 ($sqlite_sdist from PyPI)" >&2
  python3 -m pip download --quiet --no-deps --no-binary :all: --dest "$tmp" "$sqlite_sdist" >&2 \
    || { echo "setup: could not download $sqlite_sdist from PyPI" >&2; return 1; }
  local sdist="$tmp/sqlean_py-3.50.4.5.tar.gz"
  sha_ok "$sdist" $sqlite_sdist_sha || { echo "setup: $sdist: SHA-256 differs from the pinned one" >&2; return 1; }
  tar -xzf "$sdist" -C "$tmp" sqlean_py-3.50.4.5/sqlite/sqlite3.c sqlean_py-3.50.4.5/sqlite/sqlite3.h
  awk '{ print } /^\/\*+ End of sqlite3\.c \*+\/$/ { exit }' "$tmp/sqlean_py-3.50.4.5/sqlite/sqlite3.c" > "$tmp/sqlite3.c"
  sha_ok "$tmp/sqlite3.c" $sqlite_c_sha && sha_ok "$tmp/sqlean_py-3.50.4.5/sqlite/sqlite3.h" $sqlite_h_sha \
    || { echo "setup: the extracted SQLite sources differ from the pinned SHA-256 sums" >&2; return 1; }
  mkdir -p "$sqlite_dir/include"
  # Moved into place last: an interrupted setup leaves no half-written source.
  mv "$tmp/sqlean_py-3.50.4.5/sqlite/sqlite3.h" "$sqlite_dir/include/sqlite3.h"
  mv "$tmp/sqlite3.c" "$sqlite_dir/sqlite3.c"
}
fetch_sqlite

need=()
have_header() { echo "#include <$1>" | cc -E -x c - >/dev/null 2>&1; }
have() { command -v "$1" >/dev/null 2>&1; }
have_header zstd.h || need+=(libzstd-dev)
have_header pcap/pcap.h || need+=(libpcap-dev)
[ $with_protoc = 1 ] && ! have protoc && need+=(protobuf-compiler)
{ [ $with_tshark = 1 ] || [ $with_capture = 1 ]; } && ! have tshark && need+=(tshark)
[ $with_capture = 1 ] && ! have tcpdump && need+=(tcpdump)
[ $with_slurm = 1 ] && ! { have slurmctld && have munged; } && need+=(slurm-wlm munge)

# PyPI side of --with-tshark: the perfetto package's protobuf bindings (Tools/perfetto/check_trace.py).
pip_look() {
  [ $with_tshark = 1 ] || return 0
  python3 -c "from perfetto.protos.perfetto.trace import perfetto_trace_pb2" >/dev/null 2>&1 && return 0
  echo "setup: installing the perfetto and protobuf PyPI packages" >&2
  python3 -m pip install --quiet perfetto protobuf >&2
}
if [ ${#need[@]} -eq 0 ]; then pip_look; exit 0; fi

if ! have apt-get; then
  echo "setup: missing ${need[*]} and no apt-get here; install them with your package manager" >&2
  exit 1
fi
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
echo "setup: installing ${need[*]}" >&2
$sudo apt-get update -qq >/dev/null || true
# tshark's package asks whether non-root users may capture: answer no, without a prompt.
if [[ " ${need[*]} " == *" tshark "* ]]; then
  echo "wireshark-common wireshark-common/install-setuid boolean false" | $sudo debconf-set-selections 2>/dev/null || true
fi
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
pip_look
