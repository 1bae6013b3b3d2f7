#!/usr/bin/env python3
"""dhtgate benchmark driver (issue 3). Normally started by tools/bench/run.sh, which builds the
binaries and enters a private network namespace first.

Starts every server on loopback (a DHT peer node, the reference `dhtnode --proxyserver`, the pivot
server, dhtgate in its configurations, any --extra-url), then runs interleaved rounds
(A B C A B C ...) of W1-W7, measuring server CPU from /proc, and writes results.md, results.json,
raw.jsonl and chart.png into the output folder."""

import argparse
import atexit
import datetime
import json
import os
import signal
import sys
import time

import bench_report
import bench_servers as srv
import bench_workloads as wl

# (threads, max pipelined, concurrent accepts): the original study's matrix. The first two run
# every workload; the others only W1/W2 (the original ab comparison).
PRIMARY = [dict(threads=1, pipelined=16, accepts=15), dict(threads=2, pipelined=16, accepts=15)]
MATRIX = [dict(threads=t, pipelined=p, accepts=a) for t in (1, 2) for p in (16, 7) for a in (15, 6)
          if not (p == 16 and a == 15)]


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=None, help="interleaved rounds (default 3, --quick 1)")
    p.add_argument("--quick", action="store_true", help="smaller runs, one round, no W7 maximum (~2 min)")
    p.add_argument("--extra-url", action="append", default=[], help="another server to measure (repeatable)")
    p.add_argument("--out", default=None, help="output folder (default results/<timestamp>)")
    p.add_argument("--build-dir", default="build-bench")
    p.add_argument("--dhtgate", default=None, help="dhtgate daemon binary (default BUILD_DIR/dhtgate)")
    p.add_argument("--no-matrix", action="store_true", help="skip the 6 extra dhtgate configurations")
    return p.parse_args()


class Runner:
    def __init__(self, args):
        self.args = args
        self.profile = wl.PROFILES["quick" if args.quick else "default"]
        self.rounds = args.rounds or (1 if args.quick else 3)
        stamp = datetime.datetime.utcnow().strftime("%Y%m%d-%H%M%S")
        self.out = args.out or os.path.join("results", stamp)
        os.makedirs(os.path.join(self.out, "logs"), exist_ok=True)
        self.logs = os.path.join(self.out, "logs")
        bdir = args.build_dir
        self.pivot_bin = os.path.join(bdir, "tools", "bench", "pivot_server")
        self.load_bin = os.path.join(bdir, "tools", "bench", "listen_load")
        self.dhtgate_bin = args.dhtgate or os.path.join(bdir, "dhtgate")
        self.results = {}  # server name -> metric -> [values per round]
        self.servers = {}  # server name -> note
        self.raw = open(os.path.join(self.out, "raw.jsonl"), "w")
        self.peer_port = None
        self.started = time.monotonic()

    def record(self, server, rnd, workload, res, keys):
        self.raw.write(json.dumps(dict(server=server.name, round=rnd, workload=workload, result=res)) + "\n")
        self.raw.flush()
        metrics = self.results.setdefault(server.name, {})
        for key, value in keys.items():
            if value is not None:
                metrics.setdefault(f"{workload}.{key}", []).append(value)
        status = "ok" if res.get("ok", True) else "PROBLEM"
        print(f"  [{time.monotonic() - self.started:6.0f}s] {server.name:28s} {workload:8s} {status} "
              + " ".join(f"{k}={v:.4g}" for k, v in keys.items() if isinstance(v, (int, float))), flush=True)

    def plans(self):
        """(name, start function, which workloads) in the fixed A B C order of every round."""
        plans = [("reference", lambda tag: srv.start_reference(self.logs, self.peer_port, tag), "full"),
                 ("pivot", lambda tag: srv.start_pivot(self.pivot_bin, self.logs, tag), "root")]
        if os.path.exists(self.dhtgate_bin):
            for cfg in PRIMARY:
                plans.append((srv.dhtgate_name(cfg), self._dhtgate(cfg), "full"))
            if not self.args.no_matrix:
                for cfg in MATRIX:
                    plans.append((srv.dhtgate_name(cfg), self._dhtgate(cfg), "matrix"))
        for url in self.args.extra_url:
            plans.append((url, lambda tag, u=url: srv.external(u), "full"))
        return plans

    def _dhtgate(self, cfg):
        return lambda tag: srv.start_dhtgate(self.dhtgate_bin, self.logs, self.peer_port, cfg, tag)

    def start(self, start_fn, tag):
        server = start_fn(tag)
        if not server.wait_ready():
            print(f"  {server.name}: not ready (see {self.logs}), skipped", flush=True)
            server.stop()
            return None
        self.servers[server.name] = server.note
        return server

    def run(self):
        peer, self.peer_port = srv.start_peer(self.logs)
        time.sleep(0.5)  # let the peer bind its UDP port before the first bootstrap
        for rnd in range(self.rounds):
            print(f"round {rnd + 1}/{self.rounds}", flush=True)
            for name, start_fn, which in self.plans():
                if which == "matrix" and rnd >= self.profile["matrix_rounds"]:
                    continue
                server = self.start(start_fn, f"r{rnd}")
                if server is None:
                    continue
                try:
                    self.block(server, rnd, which)
                finally:
                    server.stop()
                if which == "full" and server.listens and rnd < self.profile["listen_rounds"]:
                    self.idle_block(start_fn, rnd)
        peer.terminate()

    def block(self, server, rnd, which):
        p = self.profile
        r = wl.ab(server, p["w1_n"], keepalive=False)
        self.record(server, rnd, "W1", r, _cpu_keys(r))
        r = wl.ab(server, p["w2_n"], keepalive=True)
        self.record(server, rnd, "W2", r, _cpu_keys(r))
        if which == "matrix":
            return
        r = wl.wrk(server, p["w3_d"], connections=400)
        self.record(server, rnd, "W3", r, _cpu_keys(r))
        if which == "root" or not server.listens:
            return
        r = wl.w4_get(server, p["w4_d"])
        self.record(server, rnd, "W4", r, dict(_cpu_keys(r), values=r.get("values_seen")))
        for mode, tag in (("newid", "W5new"), ("sameid", "W5same"), ("freshkey", "W5fresh")):
            r = wl.w5_put(self.load_bin, server, p["w5_d"], mode)
            keys = _cpu_keys(r)
            ok200 = r.get("status", {}).get("200", 0)
            keys.update(ok200=ok200, ok_rps=ok200 / r["seconds"] if r.get("seconds") else None,
                        p99_ms=r.get("latency_ms", {}).get("p99"))
            self.record(server, rnd, tag, r, keys)
        if rnd >= p["listen_rounds"]:
            return
        for n in p["w6"]:
            r = wl.w6_fanout(self.load_bin, server, n)
            lat = r.get("latency_ms", {})
            self.record(server, rnd, f"W6x{n}", r, dict(
                delivered=r.get("delivered"), p50_ms=lat.get("p50"), p99_ms=lat.get("p99"), max_ms=lat.get("max"),
                cpu_us_per_listener=r.get("cpu_us_per_listener"), open_s=r.get("open_s")))

    def idle_block(self, start_fn, rnd):
        """W7 on a freshly started server, so that RSS growth is not hidden by memory freed earlier."""
        p = self.profile
        server = self.start(start_fn, f"r{rnd}-idle")
        if server is None:
            return
        try:
            max_streams = p["w7_max"] if rnd == 0 else 0
            r = wl.w7_idle(self.load_bin, server, p["w7_n"], max_streams, p["w7_idle"], p["w7_probes"])
            at_n = r.get("get_ms_at_n", {})
            keys = dict(rss_per_stream=r.get("rss_bytes_per_stream"), idle_cpu_pct=r.get("idle_cpu_pct"),
                        get_p50_ms=at_n.get("p50"), get_p99_ms=at_n.get("p99"),
                        errors=r.get("failed", 0) + r.get("refused", 0) + r.get("dropped", 0) + r.get("get_errors_at_n", 0))
            if max_streams:
                at_max = r.get("get_ms_at_max", {})
                keys.update(max_ready=r.get("ready"), max_requested=r.get("max_streams"),
                            max_get_p99_ms=at_max.get("p99"), rss_max_mb=(r.get("rss_max_kb") or 0) / 1024)
            self.record(server, rnd, "W7", r, keys)
        finally:
            server.stop()


def _cpu_keys(r):
    return dict(rps=r.get("rps"), cpu_us=r.get("cpu_us"), cpu_s_per_100k=r.get("cpu_s_per_100k"),
                errors=r.get("errors"), rss_mb=(r["rss_kb"] / 1024) if r.get("rss_kb") else None)


def main():
    args = parse_args()
    runner = Runner(args)
    atexit.register(srv.stop_all)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda *_: sys.exit(130))
    try:
        runner.run()
    finally:
        srv.stop_all()
        runner.raw.close()
    meta = dict(rounds=runner.rounds, quick=args.quick, seconds=round(time.monotonic() - runner.started),
                servers=runner.servers, profile=runner.profile)
    with open(os.path.join(runner.out, "results.json"), "w") as f:
        json.dump(dict(meta=meta, results=runner.results), f, indent=1, sort_keys=True)
    bench_report.write(runner.out, runner.results, meta)
    print(f"results: {runner.out}/results.md", flush=True)


if __name__ == "__main__":
    main()
