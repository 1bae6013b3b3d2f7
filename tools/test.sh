#!/usr/bin/env bash
# Builds dhtgate and runs the CppUnit suite (dhtproxytests) through ctest.
#   BUILD_DIR=build-asan CMAKE_ARGS=-DDHTGATE_SANITIZE=ON tools/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-$(nproc)}
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo} -DDHTGATE_WERROR=ON ${CMAKE_ARGS:-}
cmake --build "$BUILD_DIR" -j "$JOBS"
cd "$BUILD_DIR"
ctest --output-on-failure --timeout 1500
