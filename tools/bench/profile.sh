#!/usr/bin/env bash
# Profiles one server under a short load with valgrind's callgrind (perf is usually unavailable in
# containers) and prints the top functions by inclusive and self cost.
#
#   tools/bench/profile.sh dhtgate|reference w2|w4|w5|w6 [OUTDIR] [-- extra dhtgate options]
#
# Counters are zeroed just before the load and dumped just after it (callgrind_control -z / -d),
# so start-up is not counted. The server runs about 50 times slower under valgrind: loads are small.
set -euo pipefail
cd "$(dirname "$0")/../.."
server=${1:?dhtgate or reference}; load=${2:?w2, w4, w5 or w6}; out=${3:-results/profile-$server-$load}
shift $(( $# >= 3 ? 3 : $# )); [ "${1:-}" = "--" ] && shift
mkdir -p "$out"
B=build-bench
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT INT TERM

free_port() { python3 -c 'import socket,sys; s=socket.socket(socket.AF_INET, int(sys.argv[1])); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' "$1"; }
peer=$(free_port 2); dhtnode -s -p "$peer" >"$out/peer.log" 2>&1 & pids+=($!)
http=$(free_port 1)
vg=(valgrind --tool=callgrind --callgrind-out-file="$out/callgrind.out" --dump-instr=no)
case "$server" in
    dhtgate) boot=$("$B/dhtgate" --help 2>&1 | grep -o -- '--bootstrap\|--dht-bootstrap\|--peer' | head -1 || true)
             "${vg[@]}" "$B/dhtgate" --http-port "$http" --dht-port 0 --threads 1 ${boot:+$boot 127.0.0.1:$peer} "$@" \
                 >"$out/server.log" 2>&1 & pids+=($!) ;;
    reference) "${vg[@]}" dhtnode -s -p "$(free_port 2)" -b "127.0.0.1:$peer" --proxyserver "$http" \
                 >"$out/server.log" 2>&1 & pids+=($!) ;;
    *) echo "unknown server $server" >&2; exit 2 ;;
esac
vpid=${pids[-1]}
url=http://127.0.0.1:$http
for _ in $(seq 1 300); do
    curl -sf "$url/" 2>/dev/null | grep -q node_id && break
    sleep 0.2
done
key=$(python3 -c 'import os; print(os.urandom(20).hex())')
if [ "$load" = w4 ]; then
    for i in $(seq 10 19); do   # 10 valid values (standard base64 of "value-NN")
        curl -s -XPOST -d "{\"data\":\"$(printf 'value-%02d' "$i" | base64)\",\"id\":\"$((1000 + i))\",\"type\":0}" "$url/key/$key" >/dev/null
    done
    echo "values stored: $(curl -s "$url/key/$key" | grep -c '^{')"
fi
callgrind_control -z "$vpid" >/dev/null 2>&1   # zero the start-up costs
case "$load" in
    w2) ab -q -k -c20 -n 3000 "$url/" | grep -E "Complete|Failed" ;;
    w4) wrk -t1 -c10 -d5s "$url/key/$key" | grep -E "requests in|Non-2xx" ;;
    w5) "$B/tools/bench/listen_load" put --url "$url" --mode newid --duration 5 --concurrency 10 ;;
    w6) "$B/tools/bench/listen_load" fanout --url "$url" --streams 1000 --timeout 60 ;;
esac
callgrind_control -d "$vpid" >/dev/null 2>&1
sleep 1
kill "$vpid" 2>/dev/null || true
wait "$vpid" 2>/dev/null || true
f="$out/callgrind.out.1"   # the dump of the load phase (callgrind.out itself: after it, until exit)
callgrind_annotate --inclusive=yes "$f" 2>/dev/null | head -80 > "$out/inclusive.txt" || true
# Costs still on the stack when the counters were zeroed show up as 100% "self" on thread entry
# points: drop those lines.
callgrind_annotate --threshold=100 "$f" 2>/dev/null | grep -v '(100.0%)' | head -60 > "$out/self.txt" || true
echo "== self cost (top)"; sed -n '/file:function/,$p' "$out/self.txt" | cut -c1-200 || true
echo "== profiles in $out (kcachegrind/callgrind_annotate $f)"
