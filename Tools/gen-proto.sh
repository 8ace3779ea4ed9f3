#!/usr/bin/env bash
# Regenerates Sources/IMWire/Proto/rmtp.pb.swift from rmtp.proto. The build never runs this:
# the generated file is committed, so CI needs neither protoc nor the plugin.
#
# Needs: protoc (apt-get install protobuf-compiler) and protoc-gen-swift from swift-protobuf
# 1.39.0 (the runtime version in Package.swift). Build the plugin once (~10 min):
#   git clone --branch 1.39.0 https://github.com/apple/swift-protobuf /tmp/swift-protobuf
#   (cd /tmp/swift-protobuf && swift build -c release --product protoc-gen-swift)
# or point PROTOC_GEN_SWIFT at an existing binary.
set -euo pipefail
cd "$(dirname "$0")/.."
plugin="${PROTOC_GEN_SWIFT:-/tmp/swift-protobuf/.build/release/protoc-gen-swift}"
command -v protoc >/dev/null || { echo "gen-proto: protoc not found (apt-get install protobuf-compiler)" >&2; exit 1; }
[ -x "$plugin" ] || { echo "gen-proto: $plugin missing; see the comment at the top of this script" >&2; exit 1; }
protoc --plugin=protoc-gen-swift="$plugin" \
  --swift_out=Visibility=Public:Sources/IMWire/Proto \
  --proto_path=Sources/IMWire/Proto \
  Sources/IMWire/Proto/rmtp.proto
echo "gen-proto: wrote Sources/IMWire/Proto/rmtp.pb.swift ($(protoc --version), $("$plugin" --version 2>&1 | head -1))"
