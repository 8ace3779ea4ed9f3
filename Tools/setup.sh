#!/usr/bin/env bash
# Installs what IMSim builds and tests with, if it is missing. Safe to run repeatedly; does
# nothing when everything is present. Flags may be combined.
#
# Always (the build links them):
#   libsqlite3-dev  the real message store
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
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "setup: unknown option $arg ($usage)" >&2; exit 2 ;;
  esac
done

need=()
have_header() { echo "#include <$1>" | cc -E -x c - >/dev/null 2>&1; }
have() { command -v "$1" >/dev/null 2>&1; }
have_header sqlite3.h || need+=(libsqlite3-dev)
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
