#!/usr/bin/env bash
# Installs the system libraries IMSim links against, if they are missing:
#   libsqlite3-dev (the real message store), libzstd-dev (trace compression) and libpcap-dev
#   (`imsim import pcap` reads packet captures with libpcap).
# Pass --with-protoc to also install protobuf-compiler (the wire cross-check test uses it).
# Pass --with-capture-tools to also install tcpdump and tshark (the import tests record real
# loopback traffic with tcpdump and check TCP reassembly against tshark).
# Flags may be combined.
# Safe to run repeatedly; does nothing when everything is present.
set -euo pipefail

need=()
have_header() { echo "#include <$1>" | cc -E -x c - >/dev/null 2>&1; }
have_header sqlite3.h || need+=(libsqlite3-dev)
have_header zstd.h || need+=(libzstd-dev)
have_header pcap/pcap.h || need+=(libpcap-dev)
for arg in "$@"; do
  case "$arg" in
    --with-protoc) command -v protoc >/dev/null 2>&1 || need+=(protobuf-compiler) ;;
    --with-capture-tools)
      command -v tcpdump >/dev/null 2>&1 || need+=(tcpdump)
      command -v tshark >/dev/null 2>&1 || need+=(tshark) ;;
    *) echo "setup: unknown option $arg (known: --with-protoc, --with-capture-tools)" >&2; exit 2 ;;
  esac
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
