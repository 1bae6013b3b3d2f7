#!/usr/bin/env bash
# Builds dhtgate with autotools, out of tree, the way CI does (see docs/build.md).
#
#   tools/ci-autotools.sh              autogen + configure + build the library and every tools/*.cpp program
#   tools/ci-autotools.sh --check      ... and also build and run the tests (make check)
#   tools/ci-autotools.sh --asan       configure with --enable-asan (combine with --check)
#
# Environment: BUILD_DIR (default build-autotools), JOBS (default nproc), CONFIGURE_ARGS (extra configure
# arguments), TEST_TIMEOUT (seconds for make check, default 1500).
#
# Why CI runs the default (no --check): the CI budget is 90 minutes on 2 cores for everything, and the
# CMake job already builds and runs the whole suite. What only this script can catch is an autotools
# problem: configure checks, a source missing from the generated lists, flags, linking of the library
# and of the programs (dhtgate, dhtgate-cli, ...). Building the programs covers that; compiling the test
# sources a second time and rerunning the suite would double the longest CI step for little. Run --check
# locally or in the Jenkins "autotools" stage.
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=$PWD
BUILD_DIR=${BUILD_DIR:-build-autotools}
JOBS=${JOBS:-$(nproc)}
TEST_TIMEOUT=${TEST_TIMEOUT:-1500}
check=no
configure_args=(--enable-werror)
for arg in "$@"; do
    case $arg in
    --check) check=yes ;;
    --asan) configure_args+=(--enable-asan) ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "ci-autotools.sh: unknown argument $arg (see --help)" >&2; exit 2 ;;
    esac
done
# Under sanitizers GCC warns falsely (see CMakeLists.txt): no -Werror there, like the CMake build.
[[ " ${configure_args[*]} " == *" --enable-asan "* ]] && configure_args=(--enable-asan)

step() { echo "== ci-autotools: $* ($(date -u +%H:%M:%S))"; }

# autoreconf only when its inputs changed (it makes every existing build tree reconfigure); the source
# lists are refreshed by make itself.
if [ ! -x configure ] || [ ! -f sources.am ] ||
   [ -n "$(find configure.ac Makefile.am m4/dhtgate_*.m4 CMakeLists.txt -newer configure 2>/dev/null)" ]; then
    step "autogen"
    ./autogen.sh >/dev/null
fi
mkdir -p "$BUILD_DIR"
cd "$BUILD_DIR"
step "configure ${configure_args[*]} ${CONFIGURE_ARGS:-}"
# shellcheck disable=SC2086
if ! "$SRC/configure" "${configure_args[@]}" ${CONFIGURE_ARGS:-} >configure.out 2>&1; then
    cat configure.out; tail -n 80 config.log; exit 1
fi
tail -n 8 configure.out
step "build the library and the programs"
make -j"$JOBS"
if [ "$check" = yes ]; then
    step "build and run the tests"
    if ! timeout "$TEST_TIMEOUT" make -j"$JOBS" check; then
        cat dhtproxytests.log 2>/dev/null | tail -n 200 || true
        exit 1
    fi
    tail -n 3 dhtproxytests.log
fi
step "done"
