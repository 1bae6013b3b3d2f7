#!/usr/bin/env bash
# Builds dhtgate and starts the daemon on its embedded default: a standalone DHT node and HTTP on
# 127.0.0.1:8080. Extra arguments are passed to dhtgate (see `build/dhtgate --help`).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo} >/dev/null
cmake --build "$BUILD_DIR" -j "$(nproc)" --target dhtgate_daemon
exec "$BUILD_DIR/dhtgate" "$@"
