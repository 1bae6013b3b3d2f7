"""Workloads W1-W7 against one running server. Each returns a flat dict of metrics; W8 (server
CPU per request) is measured around every W1-W5 run from /proc/PID/stat (utime+stime, children
included), so that CPU figures do not depend on how fast the load generator is."""

import json
import os
import random
import re
import subprocess

from bench_servers import http_get, http_post

# Sizes per mode. "quick" is the ~2-minute smoke run.
PROFILES = {
    # listen_rounds: W6/W7 (the slowest, and the least noisy) run in the first rounds only;
    # matrix_rounds: the 6 extra dhtgate configurations (W1/W2) likewise.
    "default": dict(w1_n=10000, w2_n=50000, w3_d=5, w4_d=2, w5_d=1.5, w6=[1000, 10000],
                    w7_n=10000, w7_max=19900, w7_idle=3, w7_probes=100, listen_rounds=2, matrix_rounds=1),
    "quick": dict(w1_n=2000, w2_n=10000, w3_d=2, w4_d=2, w5_d=1, w6=[1000],
                  w7_n=2000, w7_max=0, w7_idle=2, w7_probes=40, listen_rounds=1, matrix_rounds=1),
}


def _run(args, timeout):
    try:
        out = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
        return out.returncode, out.stdout, out.stderr
    except subprocess.TimeoutExpired as e:
        return -1, (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or ""), "timeout"


def _with_cpu(server, fn):
    """Runs fn() and adds the server's CPU seconds and RSS around it to its result."""
    c0 = server.cpu()
    res = fn()
    c1 = server.cpu()
    if c0 is not None and c1 is not None and res.get("requests"):
        res["cpu_s"] = c1 - c0
        res["cpu_us"] = (c1 - c0) * 1e6 / res["requests"]
        res["cpu_s_per_100k"] = (c1 - c0) * 1e5 / res["requests"]
    rss = server.rss_kb()
    if rss is not None:
        res["rss_kb"] = rss
    return res


def _num(pattern, text, default=0.0):
    m = re.search(pattern, text)
    return float(m.group(1)) if m else default


def ab(server, n, keepalive, concurrency=20, path="/"):
    args = ["ab", "-q", "-r", "-s", "10", "-c", str(concurrency), "-n", str(n)]
    if keepalive:
        args.append("-k")
    args.append(server.url + path)

    def go():
        rc, out, err = _run(args, timeout=120)
        done = _num(r"Complete requests:\s+(\d+)", out)
        failed = _num(r"Failed requests:\s+(\d+)", out) + _num(r"Non-2xx responses:\s+(\d+)", out)
        return dict(requests=done, errors=failed, rps=_num(r"Requests per second:\s+([\d.]+)", out),
                    ok=rc == 0 and done > 0, **({} if rc == 0 else {"stderr": err[-300:]}))
    return _with_cpu(server, go)


def wrk(server, duration, connections, threads=2, path="/"):
    args = ["wrk", "-t", str(threads), "-c", str(connections), "-d", f"{duration}s", "--timeout", "5s",
            server.url + path]

    def go():
        rc, out, err = _run(args, timeout=duration + 60)
        done = _num(r"(\d+) requests in", out)
        errors = _num(r"Non-2xx or 3xx responses:\s+(\d+)", out)
        m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
        if m:
            errors += sum(int(x) for x in m.groups())
        return dict(requests=done, errors=errors, rps=_num(r"Requests/sec:\s+([\d.]+)", out),
                    ok=rc == 0 and done > 0)
    return _with_cpu(server, go)


def listen_load(binary, server, workload, extra, timeout):
    args = [binary, workload, "--url", server.url] + [str(a) for a in extra]
    if server.pid:
        args += ["--pid", str(server.pid)]
    rc, out, err = _run(args, timeout=timeout)
    for line in reversed(out.splitlines()):
        if line.startswith("{"):
            res = json.loads(line)
            res["exit"] = rc
            return res
    return {"exit": rc, "error": (err or out)[-300:]}


def put_values(server, key, count=10):
    """Stores `count` small values under `key` (W4 set-up); returns how many were accepted."""
    ok = 0
    for i in range(count):
        data = "".join(random.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") for _ in range(16))
        status, _ = http_post(f"{server.url}/key/{key}", json.dumps({"data": data, "id": str(1000 + i), "type": 0}))
        ok += status == 200
    return ok


def w4_get(server, duration):
    key = os.urandom(20).hex()
    stored = put_values(server, key)
    status, body = http_get(f"{server.url}/key/{key}", timeout=10)
    values = sum(1 for line in body.splitlines() if line.startswith("{"))
    res = wrk(server, duration, connections=20, path=f"/key/{key}")
    res.update(stored=stored, values_seen=values, ok=res.get("ok") and status == 200 and values >= 10)
    return res


def w5_put(binary, server, duration, mode):
    # Warm up: the first put on a key waits for the DHT search to find its nodes (up to ~1 s);
    # W5 measures steady-state puts, so that search is done before the clock starts.
    key = os.urandom(20).hex()
    http_post(f"{server.url}/key/{key}", json.dumps({"data": "d2FybXVw", "id": "0", "type": 0}))

    def go():
        r = listen_load(binary, server, "put", ["--mode", mode, "--duration", duration, "--concurrency", 20,
                                                "--key", key], timeout=duration + 40)
        r["ok"] = r.get("exit") == 0
        r["errors"] = sum(v for k, v in r.get("status", {}).items() if k != "200")
        return r
    return _with_cpu(server, go)


def w6_fanout(binary, server, streams):
    r = listen_load(binary, server, "fanout", ["--streams", streams, "--timeout", 30], timeout=120)
    r["ok"] = r.get("exit") == 0
    return r


def w7_idle(binary, server, n, max_streams, idle, probes):
    extra = ["--streams", n, "--idle", idle, "--probes", probes, "--timeout", 150]
    if max_streams:
        extra += ["--max-streams", max_streams]
    r = listen_load(binary, server, "idle", extra, timeout=200)
    r["ok"] = r.get("exit") == 0
    return r
