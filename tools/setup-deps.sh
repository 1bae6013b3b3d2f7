#!/usr/bin/env bash
# Installs every Debian package dhtgate needs to build, test and benchmark (run as root).
set -euo pipefail
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
    build-essential cmake pkg-config autoconf automake libtool \
    libopendht-dev librestinio-dev libhttp-parser-dev libasio-dev libfmt-dev \
    libmsgpack-cxx-dev libboost-dev libcppunit-dev libssl-dev libgnutls28-dev \
    libjsoncpp-dev libargon2-dev nettle-dev \
    dhtnode ca-certificates >/dev/null

# --- Benchmark suite (tools/bench/run.sh): load generators and the chart -------------------------
$SUDO apt-get install -y -qq --no-install-recommends wrk apache2-utils gnuplot-nox python3 >/dev/null

# --- Developer checks: tools/check-format.sh (CI reports formatting) -----------------------------
# Not needed to build; the docker build stage skips it with DHTGATE_DEPS_NO_DEVTOOLS=1.
if [ "${DHTGATE_DEPS_NO_DEVTOOLS:-0}" != 1 ]; then
    $SUDO apt-get install -y -qq --no-install-recommends clang-format >/dev/null
fi
