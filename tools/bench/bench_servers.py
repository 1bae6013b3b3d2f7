"""Servers under test: start them on loopback on free ports, read their CPU time and RSS from
/proc, stop them. Every process started here is tracked and killed by stop_all()."""

import ctypes
import json
import os
import signal
import socket
import subprocess
import time
import urllib.request

CLK_TCK = os.sysconf("SC_CLK_TCK")
_started = []  # every Popen we own, stopped by stop_all()


def free_port(kind=socket.SOCK_STREAM):
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def proc_cpu_seconds(pid):
    """utime+stime+cutime+cstime of the process, from /proc/PID/stat, in seconds."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        # fields[0] is field 3 (state); utime..cstime are fields 14..17
        return sum(int(x) for x in fields[11:15]) / CLK_TCK
    except (OSError, IndexError, ValueError):
        return None


def proc_rss_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def http_get(url, timeout=2.0):
    """(status, body) of a GET with Connection: close; (0, '') on a transport error."""
    req = urllib.request.Request(url, headers={"Connection": "close"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        return e.code, ""
    except (OSError, ValueError):
        return 0, ""


def http_post(url, body, timeout=15.0):
    req = urllib.request.Request(url, data=body.encode(), method="POST",
                                 headers={"Content-Type": "application/json", "Connection": "close"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        return e.code, ""
    except (OSError, ValueError):
        return 0, ""


class Server:
    """One server under test. `proc` is None for an external server (--extra-url)."""

    def __init__(self, name, kind, url, proc=None, log=None, listens=True, note=""):
        self.name, self.kind, self.url, self.proc, self.log = name, kind, url, proc, log
        self.listens = listens  # serves the DHT routes (W4-W7)
        self.note = note

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    def cpu(self):
        return proc_cpu_seconds(self.pid) if self.proc else None

    def rss_kb(self):
        return proc_rss_kb(self.pid) if self.proc else None

    def alive(self):
        return self.proc is None or self.proc.poll() is None

    def wait_ready(self, timeout=20.0):
        """Waits until GET / answers 200 with a node_id (the reference answers 503 for ~3 s)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.alive():
                return False
            status, body = http_get(self.url + "/", timeout=1.0)
            if status == 200 and "node_id" in body:
                return True
            time.sleep(0.1)
        return False

    def stop(self):
        if self.proc:
            _stop(self.proc)


def _die_with_parent():
    """In the child: get SIGKILL when the driver dies, even if it is killed without cleanup."""
    try:
        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _spawn(args, log_path):
    log = open(log_path, "ab")
    proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            start_new_session=True, preexec_fn=_die_with_parent)
    log.close()
    _started.append(proc)
    return proc


def _stop(proc, grace=3.0):
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=grace)
    except ProcessLookupError:
        pass


def stop_all():
    for proc in _started:
        try:
            _stop(proc, grace=2.0)
        except Exception:  # best effort on exit
            pass


def start_peer(logdir):
    """A plain DHT node the servers bootstrap from, so puts have somewhere to go (a lone
    reference node answers puts with 502)."""
    port = free_port(socket.SOCK_DGRAM)
    proc = _spawn(["dhtnode", "-s", "-p", str(port)], os.path.join(logdir, "peer.log"))
    return proc, port


def start_reference(logdir, peer_port, tag):
    http_port = free_port()
    udp_port = free_port(socket.SOCK_DGRAM)
    proc = _spawn(["dhtnode", "-s", "-p", str(udp_port), "-b", f"127.0.0.1:{peer_port}",
                   "--proxyserver", str(http_port)], os.path.join(logdir, f"reference-{tag}.log"))
    return Server("reference", "reference", f"http://127.0.0.1:{http_port}", proc,
                  note="dhtnode --proxyserver (OpenDHT 2.4.12, RESTinio)")


def start_pivot(binary, logdir, tag):
    log_path = os.path.join(logdir, f"pivot-{tag}.log")
    proc = _spawn([binary, "--port", "0"], log_path)
    port = None
    deadline = time.monotonic() + 5
    while port is None and time.monotonic() < deadline and proc.poll() is None:
        with open(log_path) as f:
            for line in f:
                if "listening on" in line:
                    port = int(line.rsplit(":", 1)[1])
        time.sleep(0.02)
    return Server("pivot", "pivot", f"http://127.0.0.1:{port}", proc, listens=False,
                  note="pure asio, one thread, same bytes as the reference's GET /")


def dhtgate_help_options(binary):
    """From the daemon's --help (the contract does not fix these): the option naming a bootstrap
    node (or None), and the options that turn informational logging off (or [])."""
    try:
        out = subprocess.run([binary, "--help"], capture_output=True, text=True, timeout=5)
        text = out.stdout + out.stderr
    except (OSError, subprocess.TimeoutExpired):
        return None, []
    boot = next((o for o in ("--bootstrap", "--dht-bootstrap", "--peer") if o in text), None)
    quiet = ["--log-level", "warn"] if "--log-level" in text else []
    return boot, quiet


def start_dhtgate(binary, logdir, peer_port, cfg, tag):
    """cfg: dict(threads, pipelined, accepts)."""
    http_port = free_port()
    args = [binary, "--http-port", str(http_port), "--dht-port", "0",
            "--threads", str(cfg["threads"]), "--max-pipelined", str(cfg["pipelined"]),
            "--concurrent-accepts", str(cfg["accepts"])]
    boot, quiet = dhtgate_help_options(binary)
    if boot:
        args += [boot, f"127.0.0.1:{peer_port}"]
    if quiet:
        args += quiet  # the reference logs nothing without -v either
    name = dhtgate_name(cfg)
    proc = _spawn(args, os.path.join(logdir, f"{name}-{tag}.log"))
    return Server(name, "dhtgate", f"http://127.0.0.1:{http_port}", proc,
                  note=" ".join(os.path.basename(a) if i == 0 else a for i, a in enumerate(args)))


def dhtgate_name(cfg):
    return f"dhtgate-t{cfg['threads']}-p{cfg['pipelined']}-a{cfg['accepts']}"


def external(url):
    url = url.rstrip("/")
    return Server("extra:" + url.split("//", 1)[-1], "extra", url, None, listens=True, note=url)


def dump(obj):
    return json.dumps(obj, sort_keys=True)
