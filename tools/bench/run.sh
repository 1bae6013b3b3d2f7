#!/usr/bin/env bash
# dhtgate benchmark suite (issue 3): one command from a fresh clone.
#
#   tools/bench/run.sh [--rounds N] [--quick] [--extra-url URL]... [--out DIR] [--no-matrix] [--no-netns]
#                        [--dhtgate PATH]
#
# Builds what it needs (CMake Release in build-bench/: pivot_server, listen_load and, when
# tools/dhtgate.cpp exists, the dhtgate daemon, target dhtgate_daemon), then runs tools/bench/bench.py: every server on
# 127.0.0.1 on free ports, interleaved rounds of W1-W7, results in results/<timestamp>/
# (results.md, results.json, raw.jsonl, chart.png, logs/). Default: 3 rounds, under 10 minutes;
# --quick: 1 smaller round, about 2 minutes.
#
# When possible the run happens in a private network namespace (unshare --net, loopback only):
# the reference dhtnode binds its sockets to all interfaces and cannot be told otherwise, and the
# namespace's own port range and TIME_WAIT reuse keep W1's 10,000 short connections from
# exhausting ports. --extra-url or --no-netns runs in the host namespace instead.
set -euo pipefail
cd "$(dirname "$0")/../.."

netns=1
for a in "$@"; do
    case "$a" in
        --extra-url|--extra-url=*|--no-netns) netns=0 ;;
        -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    esac
done
args=()
for a in "$@"; do [ "$a" = "--no-netns" ] || args+=("$a"); done

if [ "${DHTGATE_BENCH_IN_NETNS:-0}" != 1 ]; then
    # Tools: install what is missing (root only), as tools/setup-deps.sh does.
    missing=()
    command -v ab >/dev/null || missing+=(apache2-utils)
    command -v wrk >/dev/null || missing+=(wrk)
    command -v gnuplot >/dev/null || missing+=(gnuplot-nox)
    command -v dhtnode >/dev/null || missing+=(dhtnode)
    if [ ${#missing[@]} -gt 0 ]; then
        if [ "$(id -u)" -eq 0 ]; then
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
        else
            echo "run.sh: missing ${missing[*]} (apt-get install them, or run tools/setup-deps.sh)" >&2
            exit 1
        fi
    fi
    targets=(pivot_server listen_load)
    # tools/dhtgate.cpp builds as target dhtgate_daemon, binary build-bench/dhtgate (the library
    # target is called dhtgate).
    [ -f tools/dhtgate.cpp ] && targets+=(dhtgate_daemon)
    echo "building ${targets[*]} (Release, build-bench/)"
    cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DDHTGATE_TESTS=OFF >/dev/null
    cmake --build build-bench -j 2 --target "${targets[@]}" >/dev/null

    if [ "$netns" = 1 ] && unshare --net --map-root-user true 2>/dev/null; then
        uflags=(--net)
        [ "$(id -u)" -eq 0 ] || uflags+=(--map-root-user)
        exec unshare "${uflags[@]}" env DHTGATE_BENCH_IN_NETNS=1 "$0" "${args[@]}"
    fi
    [ "$netns" = 1 ] && echo "run.sh: no network namespace available, running on the host's loopback" >&2
else
    ip link set lo up
    sysctl -qw net.ipv4.ip_local_port_range="15000 64000" net.ipv4.tcp_tw_reuse=1 \
        net.core.somaxconn=4096 2>/dev/null || true
fi

ulimit -n "$(ulimit -Hn)"
cd tools/bench/../.. && exec python3 tools/bench/bench.py "${args[@]}"
