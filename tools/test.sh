#!/usr/bin/env bash
# Builds dhtgate and runs the CppUnit suite (dhtproxytests) through ctest.
#   BUILD_DIR=build-asan CMAKE_ARGS=-DDHTGATE_SANITIZE=ON tools/test.sh
# In a sanitizer build (DHTGATE_SANITIZE=ON in the CMake cache) the ASan/LSan/UBSan runtime options
# below are the defaults; any *SAN_OPTIONS already in the environment win. tests/lsan.supp silences
# leaks that belong to libopendht and its dependencies, which are not instrumented. alloc_dealloc_mismatch
# is off because asio's recycling allocator trips it (a false positive seen in the client tests).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-$(nproc)}
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo} -DDHTGATE_WERROR=ON ${CMAKE_ARGS:-}
cmake --build "$BUILD_DIR" -j "$JOBS"
if grep -q '^DHTGATE_SANITIZE:BOOL=ON$' "$BUILD_DIR/CMakeCache.txt"; then
    export ASAN_OPTIONS=${ASAN_OPTIONS-detect_leaks=1:strict_init_order=1:check_initialization_order=1:alloc_dealloc_mismatch=0}
    export LSAN_OPTIONS=${LSAN_OPTIONS-suppressions=$PWD/tests/lsan.supp:print_suppressions=0}
    export UBSAN_OPTIONS=${UBSAN_OPTIONS-halt_on_error=1:print_stacktrace=1}
    echo "test.sh: sanitizer build; ASAN_OPTIONS=$ASAN_OPTIONS LSAN_OPTIONS=$LSAN_OPTIONS UBSAN_OPTIONS=$UBSAN_OPTIONS"
fi
cd "$BUILD_DIR"
ctest --output-on-failure --timeout 1500
