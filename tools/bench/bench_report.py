"""Turns the per-round measurements into results.md (markdown tables: medians, min..max, ratios
to the reference, the issue's targets) and chart.png (gnuplot)."""

import os
import platform
import statistics
import subprocess

REF = "reference"
MAIN = "dhtgate-t1-p16-a15"
POOL = "dhtgate-t2-p16-a15"
PIVOT = "pivot"
CPU_ROWS = [("W1", "W1 GET / ab -c20, no keep-alive"), ("W2", "W2 GET / ab -k -c20"),
            ("W3", "W3 GET / wrk -t2 -c400"), ("W4", "W4 GET /key (10 values) wrk -c20"),
            ("W5new", "W5 put, same key, new id"), ("W5same", "W5 put, same key, same id"),
            ("W5fresh", "W5 put, fresh key each")]


def median(values):
    return statistics.median(values) if values else None


def fmt(x):
    if x is None:
        return "–"
    if x == 0:
        return "0"
    if abs(x) >= 100:
        return f"{x:.0f}"
    if abs(x) >= 10:
        return f"{x:.1f}"
    return f"{x:.3g}"


def cell(values, ref=None):
    """'median (min..max)' plus the ratio to `ref` (a median) when given."""
    if not values:
        return "–"
    m = median(values)
    text = fmt(m) if len(values) == 1 else f"{fmt(m)} ({fmt(min(values))}..{fmt(max(values))})"
    if ref:
        text += f" **×{m / ref:.2f}**"
    return text


def server_order(results):
    known = [REF, PIVOT, MAIN, POOL]
    names = [n for n in known if n in results]
    names += sorted(n for n in results if n not in known and not n.startswith("dhtgate-"))
    return names


def metric(results, server, key):
    return results.get(server, {}).get(key, [])


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def per_workload_table(results, servers, suffix, with_ratio=True):
    rows = []
    for wid, label in CPU_ROWS:
        ref = median(metric(results, REF, f"{wid}.{suffix}")) if with_ratio else None
        row = [label]
        for s in servers:
            vals = metric(results, s, f"{wid}.{suffix}")
            row.append(cell(vals, ref if s != REF else None))
        rows.append(row)
    return table(["workload"] + servers, rows)


def headline_table(results, servers):
    """Server CPU per request beside requests per second, each with its ratio to the reference."""
    cols = [("W1.cpu_us", "W1 CPU us/req"), ("W1.rps", "W1 req/s"), ("W2.cpu_us", "W2 CPU us/req"),
            ("W2.rps", "W2 req/s"), ("W3.cpu_us", "W3 CPU us/req"), ("W3.rps", "W3 req/s"),
            ("W4.cpu_us", "W4 CPU us/req"), ("W4.rps", "W4 req/s"), ("W5new.cpu_us", "W5 CPU us/put"),
            ("W6x10000.cpu_us_per_listener", "W6 CPU us/listener")]
    ref = {k: median(metric(results, REF, k)) for k, _ in cols}
    rows = []
    for s in servers:
        row = [s]
        for k, _ in cols:
            m = median(metric(results, s, k))
            if m is None:
                row.append("–")
            elif s == REF or not ref[k]:
                row.append(fmt(m))
            else:
                row.append(f"{fmt(m)} **×{m / ref[k]:.2f}**")
        rows.append(row)
    return table(["server"] + [label for _, label in cols], rows)


def matrix_table(results):
    names = sorted(n for n in results if n.startswith("dhtgate-"))
    if not names:
        return "dhtgate was not built: no matrix.\n"
    ref = {k: median(metric(results, REF, k)) for k in ("W1.cpu_us", "W1.rps", "W2.cpu_us", "W2.rps")}
    rows = [[n] + [cell(metric(results, n, k), ref[k]) for k in ref] for n in [REF] + names]
    return table(["server", "W1 CPU us/req", "W1 req/s", "W2 CPU us/req", "W2 req/s"], rows)


def keyed_table(results, servers, rows_spec):
    rows = []
    for key, label in rows_spec:
        if not any(metric(results, s, key) for s in servers):
            continue
        rows.append([label] + [cell(metric(results, s, key)) for s in servers])
    return table(["metric"] + servers, rows)


def targets(results):
    """The issue's targets, each a ratio within this run."""
    if MAIN not in results:
        return "dhtgate not measured: targets not evaluated.\n"

    def m(server, key):
        return median(metric(results, server, key))

    def ratio(key, other=REF):
        a, b = m(MAIN, key), m(other, key)
        return a / b if a is not None and b else None

    checks = [
        ("W2 CPU/request vs reference", ratio("W2.cpu_us"), "<= 0.5", lambda v: v <= 0.5),
        ("W2 CPU/request vs pivot", ratio("W2.cpu_us", PIVOT), "<= 1.6", lambda v: v <= 1.6),
        ("W2 requests/s vs reference", ratio("W2.rps"), ">= 1.8", lambda v: v >= 1.8),
        ("W4 CPU/request vs reference", ratio("W4.cpu_us"), "<= 0.4", lambda v: v <= 0.4),
        ("W5 (new id) CPU/request vs reference", ratio("W5new.cpu_us"), "<= 0.5", lambda v: v <= 0.5),
        ("W6 CPU/listener (10,000) vs reference", ratio("W6x10000.cpu_us_per_listener"), "<= 0.25", lambda v: v <= 0.25),
        ("W6 p99 delivery, 10,000 listeners (ms)", m(MAIN, "W6x10000.p99_ms"), "< 100", lambda v: v < 100),
        ("W7 RSS per idle stream (bytes)", m(MAIN, "W7.rss_per_stream"), "<= 4096", lambda v: v <= 4096),
        ("W7 idle CPU, 10,000 streams (% of a core)", m(MAIN, "W7.idle_cpu_pct"), "< 1", lambda v: v < 1),
        ("W7 streams held without error", m(MAIN, "W7.max_ready"), "= requested",
         lambda v: v >= (m(MAIN, "W7.max_requested") or 0) and not m(MAIN, "W7.errors")),
        ("one thread vs pool: W2 CPU/request t1/t2", ratio("W2.cpu_us", POOL), "< 1", lambda v: v < 1),
    ]
    rows = []
    for label, value, target, ok in checks:
        verdict = "–" if value is None else ("met" if ok(value) else "**not met**")
        rows.append([label, fmt(value), target, verdict])
    return table([f"target ({MAIN})", "measured", "target", "verdict"], rows)


def machine():
    def sh(cmd):
        try:
            return subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=5).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            return "?"
    model = sh("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2").strip()
    mhz = sh("grep -m1 'cpu MHz' /proc/cpuinfo | cut -d: -f2").strip()
    mem = sh("free -m | awk '/Mem:/ {print $2}'")
    return (f"{model}, {sh('nproc')} cores (cpu MHz {mhz}), {mem} MiB RAM, Linux {platform.release()}, "
            f"open-file limit {sh('ulimit -Hn')}; ab: {sh('ab -V | head -1')}; {sh('wrk -v 2>&1 | head -1')}")


def chart(out, results, servers):
    data = os.path.join(out, "chart.dat")
    shown = [s for s in servers if s in (REF, PIVOT, MAIN, POOL) or not s.startswith("dhtgate-")][:6]
    with open(data, "w") as f:
        f.write("workload " + " ".join(f'"{s}"' for s in shown) + "\n")
        for wid, _ in CPU_ROWS[:5]:
            f.write(wid + " " + " ".join(fmt_plain(median(metric(results, s, f"{wid}.cpu_us"))) for s in shown) + "\n")
        f.write("\n\n")
        f.write("workload " + " ".join(f'"{s}"' for s in shown) + "\n")
        for wid, _ in CPU_ROWS[:5]:
            f.write(wid + " " + " ".join(fmt_plain(median(metric(results, s, f"{wid}.rps"))) for s in shown) + "\n")
    plots = ", ".join(f"'{data}' index IDX using {i + 2}:xtic(1) title columnhead({i + 2})" for i in range(len(shown)))
    script = f"""
set terminal pngcairo size 900,640 font ",9"
set output '{os.path.join(out, "chart.png")}'
set multiplot layout 2,1
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set key outside right top
set grid ytics
set logscale y
set ylabel "server CPU us / request (log)"
set title "dhtgate benchmark: server CPU per request (lower is better)"
plot {plots.replace('IDX', '0')}
set ylabel "requests / s (log)"
set yrange [10:*]
set title "requests per second (higher is better; the load generator shares the 2 cores)"
plot {plots.replace('IDX', '1')}
unset multiplot
"""
    try:
        subprocess.run(["gnuplot"], input=script, text=True, capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        pass


def fmt_plain(x):
    return "NaN" if x is None else f"{x:.4g}"


def write(out, results, meta):
    servers = server_order(results)
    notes = "\n".join(f"- **{n}**: {meta['servers'].get(n, '')}" for n in servers)
    md = [f"# dhtgate benchmark results\n",
          f"{meta['rounds']} interleaved round(s){' (quick)' if meta['quick'] else ''}, {meta['seconds']} s. "
          f"Cells: median (min..max) over rounds; **×r** = ratio to the reference's median in this run.\n",
          f"Machine: {machine()}\n",
          f"Load average (1/5/15 min) at start: {meta.get('loadavg_start', '?')}, at end: {meta.get('loadavg_end', '?')} "
          "(other processes on the machine inflate every figure; ratios within the run are the robust part).\n", "Servers:\n", notes + "\n",
          "## Headline: server CPU per request and requests per second (medians, ×ratio to the reference)\n",
          headline_table(results, servers),
          "\n## Server CPU time per request (µs), from /proc/PID/stat utime+stime\n",
          per_workload_table(results, servers, "cpu_us"),
          "\n## Requests per second (client-side, the load generator shares the machine; W5: all answers, "
          "see below for the 200s)\n",
          per_workload_table(results, servers, "rps"),
          "\n## W8: server CPU seconds per 100,000 requests\n",
          per_workload_table(results, servers, "cpu_s_per_100k", with_ratio=False),
          "\n## Errors (failed / non-2xx / socket errors) and RSS after each run (MB)\n",
          keyed_table(results, servers, [(f"{w}.errors", f"{w} errors") for w, _ in CPU_ROWS]
                      + [(f"{w}.rss_mb", f"{w} RSS MB") for w in ("W2", "W3", "W5fresh")]
                      + [("W4.values", "W4 values in one get")]
                      + [(f"{w}.ok_rps", f"{w} puts answered 200 per s") for w in ("W5new", "W5same", "W5fresh")]
                      + [(f"{w}.p99_ms", f"{w} put latency p99 ms") for w in ("W5new", "W5same", "W5fresh")]),
          "\n## W6: listen fan-out (one put, N streams on its key)\n",
          keyed_table(results, servers, [(f"W6x{n}.{k}", f"N={n} {label}") for n in (1000, 10000) for k, label in (
              ("delivered", "delivered"), ("p50_ms", "p50 ms"), ("p99_ms", "p99 ms"), ("max_ms", "max ms"),
              ("cpu_us_per_listener", "server CPU us per listener"), ("open_s", "open all streams, s"))]),
          "\n## W7: idle listen streams (fresh server)\n",
          keyed_table(results, servers, [
              ("W7.rss_per_stream", "RSS bytes per stream at 10,000"), ("W7.idle_cpu_pct", "idle CPU % of a core"),
              ("W7.get_p50_ms", "GET / p50 ms meanwhile"), ("W7.get_p99_ms", "GET / p99 ms meanwhile"),
              ("W7.errors", "errors"), ("W7.max_requested", "streams asked (max)"),
              ("W7.max_ready", "streams held (max)"), ("W7.max_get_p99_ms", "GET / p99 ms at max"),
              ("W7.rss_max_mb", "RSS MB at max")]),
          "\n## dhtgate configurations (threads, max pipelined, concurrent accepts): W1/W2\n",
          matrix_table(results),
          "\n## Targets of issue 3\n", targets(results),
          "\n![chart](chart.png)\n"]
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write("\n".join(md))
    chart(out, results, servers)
