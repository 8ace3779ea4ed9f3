#!/usr/bin/env bash
# Installs the system libraries IMSim links against, if they are missing:
#   libsqlite3-dev (the real message store) and libzstd-dev (trace compression).
# Pass --with-protoc to also install protobuf-compiler (the wire cross-check test uses it).
# Pass --with-tshark to also install tshark and the perfetto + protobuf PyPI packages (the
# Wireshark / Perfetto export tests use them; Docs/look.md). Flags may be combined.
# Safe to run repeatedly; does nothing when everything is present.
set -euo pipefail

with_protoc=0
with_tshark=0
for arg in "$@"; do
  case "$arg" in
    --with-protoc) with_protoc=1 ;;
    --with-tshark) with_tshark=1 ;;
    *) echo "setup: unknown option $arg (known: --with-protoc, --with-tshark)" >&2; exit 2 ;;
  esac
done

need=()
have_header() { echo "#include <$1>" | cc -E -x c - >/dev/null 2>&1; }
have_header sqlite3.h || need+=(libsqlite3-dev)
have_header zstd.h || need+=(libzstd-dev)
if [ $with_protoc = 1 ] && ! command -v protoc >/dev/null 2>&1; then
  need+=(protobuf-compiler)
fi
if [ $with_tshark = 1 ] && ! command -v tshark >/dev/null 2>&1; then
  need+=(tshark)
fi

# PyPI side of --with-tshark: the perfetto package's protobuf bindings (Tools/perfetto/check_trace.py).
pip_look() {
  [ $with_tshark = 1 ] || return 0
  python3 -c "from perfetto.protos.perfetto.trace import perfetto_trace_pb2" >/dev/null 2>&1 && return 0
  echo "setup: installing the perfetto and protobuf PyPI packages" >&2
  python3 -m pip install --quiet perfetto protobuf >&2
}
if [ ${#need[@]} -eq 0 ]; then pip_look; exit 0; fi

if ! command -v apt-get >/dev/null 2>&1; then
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
