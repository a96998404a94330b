"""Throughput, latency, integrity and memory of guardian-proxy (1 and N evaluation workers) against a bare mitmdump.

    .venv/bin/python scripts/bench_proxy.py                 # 10,000 requests per workload, 50 connections
    .venv/bin/python scripts/bench_proxy.py --quick         # 1,000 requests per workload, 15 s cap each
    .venv/bin/python scripts/bench_proxy.py --workers 0,1,2 # threads mode, 1 and 2 worker processes
    .venv/bin/python scripts/bench_proxy.py --latency       # sequential medians of 200 (docs/benchmarks.md)
    .venv/bin/python scripts/bench_proxy.py --quick --workers 1 --baseline /tmp/base   # before/after, same rounds

It starts the benchmark upstream (scripts/bench_upstream.py, which verifies every request it gets),
a bare `mitmdump` (with scripts/redirect_upstream.py) and one `guardian-proxy run --workers K` per value
of --workers (kinds "guardian-w1", "guardian-w2", …; K = 0 is evaluation in the proxy process's threads;
default "1,N", N = one per core), all redirected to that upstream, and drives each with the same
concurrent httpx load over loopback (bounded by --requests and --max-seconds per workload): bodyless
GETs, JSON POSTs carrying personal data, and a mixed browsing profile (see scripts/bench_cases.py).
The proxies take turns in --rounds slices of each workload (order alternating) so that all see the
same background load on a shared machine; a guardian kind's throughput ratio is the median of its
per-round ratios to bare. Per proxy and workload it reports requests/s, p50/p99 latency, errors, CPU
ms per request and RSS of the proxy's whole process tree (the mitmproxy process and its evaluation
workers, per process too); sequential medians (interleaved the same way); for guardian-proxy the
outcome counts and the head-of-line effect of slow requests (--hol-slow ~90 KB free-text POSTs in
flight, fired again in waves until --hol-min-probes probes or --hol-seconds): p50, p99 and max of
small personal POSTs and bodyless GETs meanwhile.

Each workload starts with one slice per proxy that is not counted (its connections open, its caches see the
workload). The client keeps keep-alive connections per host, as a browser does (`--shared-pool`: one pool of
--concurrency connections over all hosts, which closes a connection to one host to open one to another, 0.3-0.95
new connections a request as the proxy's timing bunches the answers). The proxy-bound ratio (`proxy_bound`: the
throughput ratio to bare if the proxies, not the client, were the limit) is read from CPU per request: bare x
min(1/main, P/total), guardian's mitmproxy process on one core and its tree on P = min(cores, 1 + workers) cores;
it is computed round by round from that round's bare and guardian CPU (the same background load), and reported
as the median of the rounds with their min and max, and `pooled` over the whole workload. With --baseline each
kind's ratio is divided by its baseline's round by round (`vs_base`; bare's CPU cancels): an A/A run, the
baseline being this commit, shows the spread a change has to exceed.

`--baseline DIR` (a checkout of another commit, e.g. `git worktree add /tmp/base HEAD`) adds each guardian kind again
as `KIND@base`, run from DIR's code (PYTHONPATH=DIR), in the same interleaved rounds: a change's before and after see
the same background load, which a shared machine varies more than the change itself.

The last stdout line is JSON: {"bare": {...}, "guardian": {KIND: {...}}, "workers": {KIND: K},
"ratio": {KIND: {"bodyless_throughput", "personal_throughput", "mixed_throughput"}}, "targets":
{"personal_ratio>=0.60", "mixed_ratio>=0.75", "hol_personal_p99<=100ms"} (true / false / null when not
measured, for the largest worker count), "targets_measured": {"kind", "workers", "personal_ratio",
"mixed_ratio", "hol_personal_p99_ms"}, "integrity_mismatches": n, "errors": n}; a guardian kind has
"proxy_bound": {WORKLOAD: {"median", "min", "max", "n", "rounds", "pooled"}}, "proxy_bound_ratio": {WORKLOAD:
median} and with --baseline "vs_base": {WORKLOAD: {"median", "min", "max", "n", "rounds"}}. Integrity mismatches:
a body that arrived changed through bare mitmdump; a rewrite that is not valid, changed shape or kept
a planted value; a denied request that reached the upstream; a response that came back corrupted or
for another request.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import httpx

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import bench_cases  # noqa: E402

VENV_BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pctl(xs: list[float], q: float) -> float | None:
    if not xs:
        return None
    xs = sorted(xs)
    return round(xs[min(len(xs) - 1, int(q * len(xs)))], 2)


def _stat_fields(pid: int) -> list[str]:
    """The fields of /proc/<pid>/stat after the command name (field 3, the state, is index 0)."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def descendants(root: int) -> list[int]:
    """`root` and every live process below it (children, their children, …), from the ppid of /proc/*/stat."""
    kids: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                kids.setdefault(int(_stat_fields(int(d.name))[1]), []).append(int(d.name))
            except (OSError, IndexError, ValueError):  # it exited meanwhile
                pass
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo += kids.get(pid, [])
    return sorted(out)


class Proc:
    """A child process with the /proc readings the benchmark needs (Linux), summed over its process tree: the
    process and every descendant (guardian-proxy's evaluation workers, multiprocessing's resource tracker).
    Per-process names: "main" (the process itself), "worker-1", "worker-2", … (multiprocessing spawn children,
    by pid), else the command name."""

    def __init__(self, args: list[str], out: Path, env: dict | None = None):
        self.out = out
        self.p = subprocess.Popen(args, stdout=out.open("wb"), stderr=subprocess.STDOUT,
                                  env=dict(os.environ, **(env or {})))

    def _role(self, pid: int) -> str:
        if pid == self.p.pid:
            return "main"
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            return "gone"
        if "multiprocessing.spawn" in cmd or "spawn_main" in cmd:
            return "worker"
        if "resource_tracker" in cmd:
            return "resource_tracker"
        try:
            return Path(f"/proc/{pid}/comm").read_text().strip() or "other"
        except OSError:
            return "gone"

    def processes(self) -> list[tuple[str, int]]:
        """(name, pid) of the tree: main first, then the workers numbered by pid, then the rest."""
        roles = [(self._role(pid), pid) for pid in descendants(self.p.pid)]
        workers = [pid for r, pid in roles if r == "worker"]
        named = [("main", self.p.pid)] + [(f"worker-{i}", pid) for i, pid in enumerate(workers, 1)]
        seen = Counter()
        for r, pid in roles:
            if r not in ("main", "worker", "gone"):
                seen[r] += 1
                named.append((r if seen[r] == 1 else f"{r}-{seen[r]}", pid))
        return named

    @staticmethod
    def _status(pid: int, field: str) -> float:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
        except OSError:
            pass
        return 0.0

    def _by_process(self, field: str) -> dict[str, float]:
        return {name: round(self._status(pid, field), 1) for name, pid in self.processes()}

    def rss_by_process(self) -> dict[str, float]:
        """VmRSS per process (MB)."""
        return self._by_process("VmRSS")

    def peak_by_process(self) -> dict[str, float]:
        """VmHWM per process (MB): each process's own peak resident set."""
        return self._by_process("VmHWM")

    def rss_mb(self) -> float:
        """VmRSS summed over the tree (shared pages count once per process)."""
        return round(sum(self.rss_by_process().values()), 1)

    def peak_mb(self) -> float:
        """VmHWM summed over the tree: every process's own peak (an upper bound of the tree's peak at once)."""
        return round(sum(self.peak_by_process().values()), 1)

    def pss_mb(self) -> float | None:
        """Proportional set size summed over the tree (shared pages split between the processes sharing them)."""
        total = 0.0
        for _, pid in self.processes():
            try:
                for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                    if line.startswith("Pss:"):
                        total += int(line.split()[1]) / 1024
                        break
            except OSError:
                return None
        return round(total, 1)

    def cpu_by_role(self) -> dict[str, float]:
        """CPU seconds (user + system, with those of reaped children so a replaced worker's time stays counted)
        of the tree: {"main", "workers", "other"}."""
        out = {"main": 0.0, "workers": 0.0, "other": 0.0}
        tck = os.sysconf("SC_CLK_TCK")
        for name, pid in self.processes():
            try:
                f = _stat_fields(pid)
            except OSError:
                continue
            role = "main" if name == "main" else "workers" if name.startswith("worker-") else "other"
            out[role] += sum(int(x) for x in f[11:15]) / tck
        return out

    def cpu_s(self) -> float:
        """CPU seconds of the whole tree."""
        return sum(self.cpu_by_role().values())

    def wait_ready(self, port: int, marker: str | None, timeout: float = 300) -> None:
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.p.poll() is not None:
                raise RuntimeError(f"{self.out.name} exited:\n{self.out.read_text()[-3000:]}")
            if marker is None or marker in self.out.read_text(errors="replace"):
                try:
                    with socket.create_connection(("127.0.0.1", port), timeout=1):
                        return
                except OSError:
                    pass
            time.sleep(0.2)
        raise RuntimeError(f"{self.out.name} not ready in {timeout}s")

    def stop(self) -> None:
        if self.p.poll() is None:
            self.p.terminate()
            try:
                self.p.wait(15)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait(5)


def start_upstream(tmp: Path) -> tuple[Proc, int]:
    pf = tmp / "upstream.port"
    up = Proc([sys.executable, str(HERE / "bench_upstream.py"), "--port-file", str(pf)], tmp / "upstream.out")
    for _ in range(100):
        if pf.exists() and pf.read_text():
            return up, int(pf.read_text())
        time.sleep(0.1)
    raise RuntimeError("upstream did not start")


def guardian_kind(workers: int, baseline: bool = False) -> str:
    return f"guardian-w{workers}" + ("@base" if baseline else "")


def start_proxy(kind: str, tmp: Path, up_port: int, workers: int | None = None,
                code: Path | None = None) -> tuple[Proc, int]:
    """Bare mitmdump (kind "bare") or `guardian-proxy run --workers K` (K None: the proxy's default), from the
    code at `code` (PYTHONPATH; None: this checkout's)."""
    port = free_port()
    d = tmp / kind
    d.mkdir()
    if kind == "bare":
        args = [str(VENV_BIN / "mitmdump"), "-q", "--listen-host", "127.0.0.1", "-p", str(port),
                "--set", f"confdir={d / 'conf'}", "-s", str(HERE / "redirect_upstream.py"),
                "--set", f"redirect_upstream=127.0.0.1:{up_port}", "--set", "connection_strategy=lazy"]
        marker = None
    else:
        from guardian_proxy.config import Settings

        cfg = d / "config.yaml"
        cfg.write_text("dashboard_port: 0\n" if "dashboard_port" in Settings.model_fields else "{}\n")
        args = [str(VENV_BIN / "guardian-proxy"), "run", "--port", str(port), "--state-dir", str(d / "state"),
                "--confdir", str(d / "conf"), "--config", str(cfg), "--redirect-upstream", f"127.0.0.1:{up_port}"]
        if workers is not None:
            args += ["--workers", str(workers)]
        marker = "listening on"
    env = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    if code is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(code), *filter(None, [os.environ.get("PYTHONPATH")])])
    p = Proc(args, d / "proxy.out", env)
    p.wait_ready(port, marker)
    return p, port


# --------------------------------------------------------------------------- load


class Tally:
    def __init__(self):
        self.lat: list[float] = []
        self.outcomes: Counter = Counter()  # allowed / transformed / denied
        self.unexpected: Counter = Counter()  # "expect->got" against the design intent (informational)
        self.mismatches: Counter = Counter()  # reason -> n
        self.errors: Counter = Counter()
        self.denied: list[int] = []
        self.connections = 0  # TCP connections the client opened to the proxy (httpcore's trace)


def classify(kind: str, c: bench_cases.Case, i: int, r: httpx.Response, t: Tally) -> None:
    if r.status_code == 403 and "x-guardian-decision" in r.headers:
        got = "denied"
        t.denied.append(i)
        if kind == "bare":
            t.mismatches["bare proxy denied a request"] += 1
    elif r.status_code == 200:
        try:
            data = r.json()
        except ValueError:
            t.mismatches["response is not the upstream's JSON"] += 1
            return
        if data.get("case") != c.key or len(data.get("pad", "")) != c.resp_size:
            t.mismatches["response corrupted or for another request"] += 1
            return
        verdict = data.get("verdict")
        if verdict == "bad":
            t.mismatches[data.get("reason", "bad")] += 1
            return
        got = "allowed" if verdict == "identical" else "transformed"
        if kind == "bare" and got != "allowed":
            t.mismatches["bare proxy changed a request"] += 1
    else:
        t.errors[f"HTTP {r.status_code}"] += 1
        return
    t.outcomes[got] += 1
    want = {"allow": "allowed", "transform": "transformed", "deny": "denied"}[c.expect]
    if got != want:
        t.unexpected[f"{c.expect}->{got}"] += 1


def new_client(proxy: str, conc: int, shared_pool: bool = False) -> httpx.AsyncClient:
    """The load's client for one proxy. By default each host keeps its own keep-alive connections, as a browser
    does: after a warm-up a request opens a connection only when all of its host's are busy, whatever the proxy's
    timing. `shared_pool`: one pool of `conc` connections over all hosts (httpx's limit): a request to a host with
    no idle connection closes an idle one to another host to open its own, 0.3-0.95 new connections a request
    depending on how bunched the answers come back, so the CPU per request then carries as many connection
    set-ups (and guardian's program lookups) as the proxy's own timing causes."""
    return httpx.AsyncClient(proxy=proxy, limits=client_limits(conc, shared_pool), timeout=60)


def client_limits(conc: int, shared_pool: bool) -> httpx.Limits:
    """httpx's pool limits for new_client: `conc` connections in all, or none (per host, never closed for another,
    nor after httpx's 5 s of idleness: a proxy's client waits while the others take their turn in a round)."""
    if shared_pool:
        return httpx.Limits(max_connections=conc, max_keepalive_connections=conc)
    return httpx.Limits(max_connections=None, max_keepalive_connections=None, keepalive_expiry=None)


async def run_chunk(kind: str, client: httpx.AsyncClient, up_port: int, workload: str, indexes: range, conc: int,
                    max_s: float, proc: Proc, run_tag: str, t: Tally) -> tuple[float, dict[str, float]]:
    """Send `indexes` of a workload through `client`, `conc` at a time (stop at max_s); tally into t; (seconds, CPU s
    of the proxy's process tree by role: main, workers, other)."""
    todo = iter(indexes)

    async def trace(event: str, info: dict) -> None:
        if event == "connection.connect_tcp.complete":
            t.connections += 1

    t0 = time.perf_counter()
    deadline = t0 + max_s

    async def worker() -> None:
        for i in todo:
            if time.perf_counter() > deadline:
                return
            c = bench_cases.case(workload, i)
            headers = c.headers + [("x-guardian-bench-case", c.key), ("x-guardian-bench-run", run_tag)]
            s = time.perf_counter()
            try:
                r = await client.request(c.method, c.url, headers=headers, content=c.body or None,
                                         extensions={"trace": trace})
            except Exception as e:  # connect errors, resets, timeouts
                t.errors[type(e).__name__] += 1
                continue
            t.lat.append((time.perf_counter() - s) * 1000)
            classify(kind, c, i, r, t)

    cpu0 = proc.cpu_by_role()
    denied_before = len(t.denied)
    await asyncio.gather(*(worker() for _ in range(conc)))
    elapsed = time.perf_counter() - t0
    cpu = {role: v - cpu0.get(role, 0.0) for role, v in proc.cpu_by_role().items()}
    seen = set(httpx.get(f"http://127.0.0.1:{up_port}/__bench/seen?run={run_tag}", timeout=30).json()["seen"])
    arrived = [i for i in t.denied[denied_before:] if i in seen]
    if arrived:
        t.mismatches["denied request reached the upstream"] += len(arrived)
    return elapsed, cpu


def summary(t: Tally, elapsed: float, cpu: dict[str, float], proc: Proc) -> dict:
    done = len(t.lat)
    total = sum(cpu.values())
    return {
        "requests": done, "seconds": round(elapsed, 2), "rps": round(done / elapsed, 1) if elapsed else 0,
        "p50_ms": pctl(t.lat, 0.5), "p99_ms": pctl(t.lat, 0.99), "errors": sum(t.errors.values()),
        "error_kinds": dict(t.errors), "cpu_ms_per_req": round(total * 1000 / done, 2) if done else None,
        "cpu_ms_per_req_by_role": {r: round(v * 1000 / done, 2) for r, v in cpu.items() if v} if done else {},
        "outcomes": dict(t.outcomes), "unexpected": dict(t.unexpected),
        "integrity_mismatches": sum(t.mismatches.values()), "mismatch_reasons": dict(t.mismatches),
        "rss_mb": proc.rss_mb(),
        # new client connections per request: one pool of --concurrency connections over several hosts closes an
        # idle connection to open one to another host, more or less often as the answers come back bunched or
        # spread; each costs the proxy a connection's setup (and guardian its program lookup): read CPU per
        # request beside it
        "connections_per_req": round(t.connections / done, 3) if done else None,
    }


def per_request(done: int, cpu: dict[str, float]) -> dict:
    """CPU ms per request of `done` requests that cost `cpu` (s by role): total and by role (the keys of summary)."""
    if not done:
        return {"requests": 0, "cpu_ms_per_req": None, "cpu_ms_per_req_by_role": {}}
    return {"requests": done, "cpu_ms_per_req": round(sum(cpu.values()) * 1000 / done, 3),
            "cpu_ms_per_req_by_role": {r: round(v * 1000 / done, 3) for r, v in cpu.items() if v}}


def run_workload(procs: dict, up_port: int, w: str, args) -> tuple[dict, dict[str, list[float]]]:
    """The workload in `args.rounds` rounds after one warm-up slice per proxy (not counted: the client's
    connections open, the proxy's caches see the workload); in each round every proxy gets the same slice of
    requests, the order alternating (forward, then reversed), so all see the same background load on a shared
    machine. Returns per-proxy summaries (with each round's CPU per request, `rounds`) and, per guardian kind, the
    per-round throughput ratios kind/bare."""
    return asyncio.run(_run_workload(procs, up_port, w, args))


async def _run_workload(procs: dict, up_port: int, w: str, args) -> tuple[dict, dict[str, list[float]]]:
    kinds = list(procs)
    rounds = max(1, min(args.rounds, args.requests))
    per = args.requests // rounds
    tallies = {k: Tally() for k in kinds}
    elapsed = dict.fromkeys(kinds, 0.0)
    cpu: dict[str, Counter] = {k: Counter() for k in kinds}
    by_round: dict[str, list[dict]] = {k: [] for k in kinds}
    ratios: dict[str, list[float]] = {k: [] for k in kinds if k != "bare"}
    shared = getattr(args, "shared_pool", False)
    clients = {k: new_client(proxy, args.concurrency, shared) for k, (_, proxy) in procs.items()}
    try:
        for k in kinds:
            await run_chunk(k, clients[k], up_port, w, range(3 * 10**6, 3 * 10**6 + per), args.concurrency,
                            args.max_seconds / rounds, procs[k][0], f"{k}-{w}-warm", Tally())
        for r in range(rounds):
            rps = {}
            for k in (kinds if r % 2 == 0 else kinds[::-1]):
                proc, proxy = procs[k]
                n0 = len(tallies[k].lat)
                el, c = await run_chunk(k, clients[k], up_port, w, range(r * per, (r + 1) * per), args.concurrency,
                                        args.max_seconds / rounds, proc, f"{k}-{w}-{r}", tallies[k])
                elapsed[k] += el
                cpu[k].update(c)
                rps[k] = (len(tallies[k].lat) - n0) / el if el else 0
                by_round[k].append(per_request(len(tallies[k].lat) - n0, c))
            for k in ratios:
                if rps.get("bare"):
                    ratios[k].append(round(rps[k] / rps["bare"], 3))
    finally:
        for cl in clients.values():
            await cl.aclose()
    out = {k: summary(tallies[k], elapsed[k], dict(cpu[k]), procs[k][0]) for k in kinds}
    for k in kinds:
        print(f"  {k:12} {w:9} {json.dumps(out[k])}", file=sys.stderr, flush=True)
        out[k]["rounds"] = by_round[k]
    return out, ratios


# --------------------------------------------------------------------------- sequential latency, head of line

# each sequential request is a different one (the detector caches texts it has seen): k → (workload, index)
LATENCY_CASES = {"bodyless_get": lambda k: ("bodyless", k), "json_post": lambda k: ("mixed", 10 * k + 7),
                 "personal_post": lambda k: ("personal", 3 * k + 1)}  # name + e-mail → service provider (rewrite)


def _send(client: httpx.Client, c: bench_cases.Case, tag: str) -> float:
    return _send_r(client, c, tag)[0]


def _send_r(client: httpx.Client, c: bench_cases.Case, tag: str) -> tuple[float, httpx.Response]:
    s = time.perf_counter()
    r = client.request(c.method, c.url, headers=c.headers + [("x-guardian-bench-case", c.key), ("x-guardian-bench-run", tag)],
                       content=c.body or None)
    ms = (time.perf_counter() - s) * 1000
    if r.status_code not in (200, 403):
        raise RuntimeError(f"{c.key}: HTTP {r.status_code}")
    return ms, r


def sequential(proxies: dict[str, str], n: int, rounds: int = 5) -> dict[str, dict]:
    """Per proxy and case: the median of n sequential requests on one keep-alive connection, each request
    different, after 10 warm-ups; the proxies take turns in `rounds` slices so both see the same load."""
    clients = {k: httpx.Client(proxy=url, timeout=60) for k, url in proxies.items()}
    times: dict[str, dict[str, list[float]]] = {k: {c: [] for c in LATENCY_CASES} for k in proxies}
    try:
        for name, which in LATENCY_CASES.items():
            for cl in clients.values():
                for j in range(10):
                    _send(cl, bench_cases.case(*which(50_000 + j)), "seq-warm")
            per = max(1, n // rounds)
            for r in range(rounds):
                order = list(clients) if r % 2 == 0 else list(clients)[::-1]
                for k in order:
                    times[k][name] += [_send(clients[k], bench_cases.case(*which(60_000 + r * per + j)), "seq")
                                       for j in range(per)]
    finally:
        for cl in clients.values():
            cl.close()
    return {k: {c: round(statistics.median(v), 2) for c, v in cs.items()} for k, cs in times.items()}


def head_of_line(proxy: str, slow_n: int = 2, min_probes: int = 50, max_s: float = 60.0,
                 idle_probes: int = 20) -> dict:
    """Probe latency (bodyless GETs and small personal POSTs, each kind one after the other on its own
    connection) idle, then while `slow_n` ~90 KB free-text POSTs are evaluated (the issue's two). A probe counts
    as "during" when it is sent while a slow request is still unanswered; probing stops when they are answered.
    While fewer than `min_probes` personal probes were taken and `max_s` has not passed, another wave of `slow_n`
    new slow requests (new texts: the detector caches what it has seen) is fired and probed the same way. With
    one worker a probe waits behind the slow bodies, so only a few fit: the count is reported. A p99 of fewer
    than 100 probes is the worst probe but one (or the worst itself)."""
    import threading

    kinds = {"bodyless": lambda k: bench_cases.case("bodyless", 70_000 + k),
             "personal": lambda k: bench_cases.case("personal", 3 * (70_000 + k) + 1)}  # a new text each time
    res: dict = {}
    slow_s: list[float] = []
    slow_status: Counter = Counter()
    during: dict[str, list[float]] = {k: [] for k in kinds}
    clients = {k: httpx.Client(proxy=proxy, timeout=300) for k in kinds}
    seq = dict.fromkeys(kinds, idle_probes)
    failed: list[BaseException] = []
    try:
        for k, make in kinds.items():
            idle = [_send(clients[k], make(j), "hol") for j in range(idle_probes)]
            res[f"{k}_p50_idle_ms"] = round(statistics.median(idle), 2)
            res[f"{k}_p99_idle_ms"] = pctl(idle, 0.99)

        def fire(c: bench_cases.Case) -> None:
            with httpx.Client(proxy=proxy, timeout=300) as cl:
                try:
                    ms, r = _send_r(cl, c, "hol-slow")
                except Exception as e:  # reported, not fatal: the probes are what is measured
                    slow_status[type(e).__name__] += 1
                    return
                slow_s.append(ms / 1000)
                slow_status[f"HTTP {r.status_code}"] += 1

        def probe(k: str, slow: list[threading.Thread]) -> None:
            try:
                while any(th.is_alive() for th in slow):
                    seq[k] += 1
                    during[k].append(_send(clients[k], kinds[k](seq[k]), "hol"))
            except BaseException as e:  # re-raised by the caller
                failed.append(e)

        t0 = time.monotonic()
        waves = 0
        while waves == 0 or (len(during["personal"]) < min_probes and time.monotonic() - t0 < max_s):
            slow = [threading.Thread(target=fire, args=(bench_cases.case("slow", waves * slow_n + i),))
                    for i in range(slow_n)]
            waves += 1
            for th in slow:
                th.start()
            time.sleep(0.3)  # the slow bodies reach the proxy (and its queue) first
            probes = [threading.Thread(target=probe, args=(k, slow)) for k in kinds]
            for th in probes:
                th.start()
            for th in [*slow, *probes]:
                th.join()
            if failed:
                raise failed[0]
    finally:
        for cl in clients.values():
            cl.close()
    res["slow_requests"] = slow_n
    res["waves"] = waves
    res["seconds"] = round(time.monotonic() - t0, 1)
    res["slow_request_s"] = round(max(slow_s), 2) if slow_s else None
    res["slow_request_s_median"] = round(statistics.median(slow_s), 2) if slow_s else None
    res["slow_outcomes"] = dict(slow_status)
    for k in kinds:
        res[f"{k}_p50_during_ms"] = pctl(during[k], 0.5)
        res[f"{k}_p99_during_ms"] = pctl(during[k], 0.99)
        res[f"{k}_max_during_ms"] = round(max(during[k]), 2) if during[k] else None
        res[f"{k}_probes_during"] = len(during[k])
    return res


# --------------------------------------------------------------------------- main


def cores() -> int:
    """The cores this process may run on (guardian-proxy's default worker count is one per core)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def parse_workers(text: str) -> list[int]:
    """"1,2" → [1, 2]; "N" is the cores; duplicates dropped, order kept; 0 = threads in the proxy process."""
    out: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        k = cores() if part.upper() == "N" else int(part)
        if k < 0:
            raise argparse.ArgumentTypeError(f"--workers: {k} < 0")
        if k not in out:
            out.append(k)
    if not out:
        raise argparse.ArgumentTypeError("--workers: no value")
    return out


def snapshot(proc: Proc, res: dict, when: str) -> None:
    """RSS of the tree at `when` (start, after_warmup, end): the total as rss_mb_<when>, each process too."""
    by = proc.rss_by_process()
    res[f"rss_mb_{when}"] = round(sum(by.values()), 1)
    res.setdefault("rss_mb_by_process", {})[when] = by


async def warm_up(kind: str, proxy: str, up_port: int, n: int, conc: int, proc: Proc) -> None:
    """`n` requests of the mixed workload, `conc` at a time, not counted (the models and caches load)."""
    async with new_client(proxy, conc) as client:
        await run_chunk(kind, client, up_port, "mixed", range(10**6, 10**6 + n), conc, 120, proc, f"{kind}-warmup",
                        Tally())


def bench(tmp: Path, up_port: int, args) -> tuple[dict, dict]:
    """Start the proxies, run everything; (results by kind, {workload: {guardian kind: per-round ratios}})."""
    count = kinds_of(args)
    guardians = list(count)
    kinds = ["bare"] if args.only == "bare" else guardians if args.only == "guardian" else ["bare", *guardians]
    procs: dict = {}
    res: dict = {k: {} for k in kinds}
    ratios: dict = {}
    try:
        for k in kinds:
            print(f"starting {k} …", file=sys.stderr, flush=True)
            proc, port = start_proxy(k, tmp, up_port, count.get(k), args.baseline if k.endswith("@base") else None)
            procs[k] = (proc, f"http://127.0.0.1:{port}")
            snapshot(proc, res[k], "start")
            res[k]["processes"] = len(res[k]["rss_mb_by_process"]["start"])
        if args.latency:
            for k, seq in sequential({k: url for k, (_, url) in procs.items()}, args.latency_n).items():
                res[k]["sequential_ms"] = seq
            return res, ratios
        for k, (proc, proxy) in procs.items():
            asyncio.run(warm_up(k, proxy, up_port, args.warmup, min(10, args.concurrency), proc))
            snapshot(proc, res[k], "after_warmup")
        for w in args.workloads:
            out, ratios[w] = run_workload(procs, up_port, w, args)
            for k in kinds:
                res[k][w] = out[k]
        for k, seq in sequential({k: url for k, (_, url) in procs.items()}, args.latency_n).items():
            res[k]["sequential_ms"] = seq
        for k, (proc, proxy) in procs.items():
            snapshot(proc, res[k], "end")
            res[k]["pss_mb_end"] = proc.pss_mb()
            res[k]["rss_growth_mb"] = round(res[k]["rss_mb_end"] - res[k]["rss_mb_after_warmup"], 1)
            if not args.no_hol and (k != "bare" or args.hol_bare):
                print(f"head-of-line {k} …", file=sys.stderr, flush=True)
                res[k]["head_of_line"] = head_of_line(proxy, slow_n=args.hol_slow, min_probes=args.hol_min_probes,
                                                      max_s=args.hol_seconds)
                print(f"  {k:12} hol       {json.dumps(res[k]['head_of_line'])}", file=sys.stderr, flush=True)
            res[k]["peak_rss_by_process"] = proc.peak_by_process()
            res[k]["peak_rss_mb"] = round(sum(res[k]["peak_rss_by_process"].values()), 1)
        return res, ratios
    finally:
        for proc, _ in procs.values():
            proc.stop()


def kinds_of(args) -> dict[str, int]:
    """The guardian kinds to run → their worker count: one per --workers value, and with --baseline each again
    from the baseline's code (`guardian-w1@base`), next to it."""
    out: dict[str, int] = {}
    for k in args.workers:
        out[guardian_kind(k)] = k
        if getattr(args, "baseline", None) is not None:
            out[guardian_kind(k, baseline=True)] = k
    return out


def proxy_bound(bare: dict, g: dict, workers: int) -> float | None:
    """Proxy-bound throughput ratio from CPU per request: bare mitmdump saturates one core at 1/b requests/s;
    guardian at min(1/main, P/total), its mitmproxy process on one core and the tree on P = min(cores,
    1 + workers) cores (P = 1 with workers 0: one process, one GIL)."""
    b, total = bare.get("cpu_ms_per_req"), g.get("cpu_ms_per_req")
    main = (g.get("cpu_ms_per_req_by_role") or {}).get("main", total)
    if not b or not total or not main:
        return None
    par = min(cores(), 1 + workers) if workers else 1
    return round(b * min(1 / main, par / total), 3)


def spread(xs: list[float | None]) -> dict | None:
    """Median, min and max of the values that were measured (None: not), and how many."""
    got = [x for x in xs if x is not None]
    if not got:
        return None
    return {"median": round(statistics.median(got), 3), "min": min(got), "max": max(got), "n": len(got)}


def bound_rounds(bare: dict, g: dict, workers: int) -> dict | None:
    """The proxy-bound ratio round by round (each round's bare and guardian CPU per request, measured minutes
    apart at most, in alternating order): its median, min, max; `pooled`, the ratio of the whole workload's CPU."""
    rounds = [proxy_bound(b, x, workers) for b, x in zip(bare.get("rounds", []), g.get("rounds", []), strict=True)]
    out = spread(rounds)
    if out is not None:
        out["rounds"] = rounds
        out["pooled"] = proxy_bound(bare, g, workers)
    return out


def versus(mine: dict | None, base: dict | None) -> dict | None:
    """This checkout's proxy-bound ratio ÷ the baseline's, round by round (the same bare round is in both, so
    its CPU cancels): median, min, max. An A/A run (the baseline is this commit) reads ~1.0 within the box's noise."""
    if not mine or not base:
        return None
    xs = [round(a / b, 3) if a and b else None for a, b in zip(mine["rounds"], base["rounds"], strict=True)]
    out = spread(xs)
    if out is not None:
        out["rounds"] = xs
    return out


def targets_for(kind: str | None, ratio: dict, guards: dict, workers: dict) -> tuple[dict, dict]:
    """The throughput targets (docs/benchmarks.md#proxy-throughput-and-latency) for `kind` (the largest worker
    count): (verdicts, the numbers they are read from); a verdict is None when its number was not
    measured (workload skipped, --no-hol, no bare proxy)."""
    r = ratio.get(kind, {})
    hol = guards.get(kind, {}).get("head_of_line", {})
    got = {"kind": kind, "workers": workers.get(kind), "personal_ratio": r.get("personal_throughput"),
           "mixed_ratio": r.get("mixed_throughput"), "hol_personal_p99_ms": hol.get("personal_p99_during_ms")}

    def at_least(v, x):
        return None if v is None else v >= x

    return ({"personal_ratio>=0.60": at_least(got["personal_ratio"], 0.60),
             "mixed_ratio>=0.75": at_least(got["mixed_ratio"], 0.75),
             "hol_personal_p99<=100ms": None if got["hol_personal_p99_ms"] is None
             else got["hol_personal_p99_ms"] <= 100}, got)


def tables(res: dict, final: dict, workloads: list[str]) -> str:
    rows = ["| workload | proxy | req/s | ratio to bare | p50 ms | p99 ms | errors | CPU ms/req (main + workers) | "
            "outcomes |", "|---|---|---|---|---|---|---|---|---|"]
    for w in workloads:
        for kind, r in res.items():
            r = r.get(w)
            if r:
                ratio = final["ratio"].get(kind, {}).get(f"{w}_throughput")
                by = r.get("cpu_ms_per_req_by_role", {})
                split = f" ({by.get('main', 0)} + {by['workers']})" if by.get("workers") else ""
                rows.append(f"| {w} | {kind} | {r['rps']} | {'' if ratio is None else ratio} | {r['p50_ms']} | "
                            f"{r['p99_ms']} | {r['errors']} | {r['cpu_ms_per_req']}{split} | {r['outcomes']} |")
    bound = [(w, k, r["proxy_bound"][w], r.get("vs_base", {}).get(w)) for w in workloads for k, r in res.items()
             if (r.get("proxy_bound") or {}).get(w)]
    if bound:
        rows += ["", "| proxy-bound | workload | median of rounds (min – max) | pooled | connections per request | "
                 "÷ baseline, median of rounds (min – max) |", "|---|---|---|---|---|---|"]
        for w, k, b, vs in bound:
            versus_text = f"{vs['median']} ({vs['min']} – {vs['max']})" if vs else ""
            rows.append(f"| {k} | {w} | {b['median']} ({b['min']} – {b['max']}) | {b['pooled']} | "
                        f"{res[k][w].get('connections_per_req')} | {versus_text} |")
    hol = [(k, r["head_of_line"]) for k, r in res.items() if "head_of_line" in r]
    if hol:
        rows += ["", "| head-of-line | slow in flight × waves | slow s | personal probes | personal p50 / p99 / max ms "
                 "| bodyless p50 / p99 / max ms | personal p50 idle ms |", "|---|---|---|---|---|---|---|"]
        for k, h in hol:
            rows.append(f"| {k} | {h['slow_requests']} × {h['waves']} | {h['slow_request_s_median']} | "
                        f"{h['personal_probes_during']} | {h['personal_p50_during_ms']} / {h['personal_p99_during_ms']} "
                        f"/ {h['personal_max_during_ms']} | {h['bodyless_p50_during_ms']} / "
                        f"{h['bodyless_p99_during_ms']} / {h['bodyless_max_during_ms']} | {h['personal_p50_idle_ms']} |")
    rows += ["", "| RSS MB | start | after warm-up | end | peak (sum of each process's) | end by process |",
             "|---|---|---|---|---|---|"]
    for k, r in res.items():
        by = r.get("rss_mb_by_process", {}).get("end") or r.get("rss_mb_by_process", {}).get("start", {})
        rows.append(f"| {k} | {r.get('rss_mb_start')} | {r.get('rss_mb_after_warmup')} | {r.get('rss_mb_end')} | "
                    f"{r.get('peak_rss_mb')} | {', '.join(f'{n} {v}' for n, v in by.items())} |")
    if final.get("targets"):
        m = final["targets_measured"]
        rows += ["", f"targets ({m['kind']}): " + "; ".join(
            f"{t} {'—' if ok is None else 'met' if ok else 'MISSED'}" for t, ok in final["targets"].items())
            + f" (personal {m['personal_ratio']}, mixed {m['mixed_ratio']}, hol p99 {m['hol_personal_p99_ms']} ms)"]
    return "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="1,000 requests per workload, 15 s cap each")
    ap.add_argument("--requests", type=int, default=10_000)
    ap.add_argument("--concurrency", type=int, default=50)
    ap.add_argument("--max-seconds", type=float, default=90.0, help="time cap per workload and proxy")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds per workload (bare, guardian, …)")
    ap.add_argument("--workloads", default=",".join(bench_cases.WORKLOADS))
    ap.add_argument("--workers", type=parse_workers, default=parse_workers("1,N"),
                    help="guardian-proxy --workers values, one proxy each (default 1,N; N = the cores; 0 = threads "
                         "in the proxy process)")
    ap.add_argument("--warmup", type=int, default=300)
    ap.add_argument("--latency", action="store_true", help="only the sequential medians")
    ap.add_argument("--latency-n", type=int, default=200)
    ap.add_argument("--hol-bare", action="store_true", help="also measure head-of-line on bare mitmdump")
    ap.add_argument("--no-hol", action="store_true", help="skip the head-of-line measurement")
    ap.add_argument("--hol-slow", type=int, default=2, help="slow ~90 KB requests in flight at once (default 2)")
    ap.add_argument("--hol-min-probes", type=int, default=50,
                    help="fire new waves of slow requests until this many probes were taken during them …")
    ap.add_argument("--hol-seconds", type=float, default=60.0, help="… or this many seconds passed (per proxy)")
    ap.add_argument("--shared-pool", action="store_true",
                    help="the load's client keeps one pool of --concurrency connections over all hosts (closing an "
                         "idle connection to one host to open one to another, as the benchmark did before) instead of "
                         "keep-alive connections per host")
    ap.add_argument("--only", choices=["bare", "guardian"])
    ap.add_argument("--baseline", type=Path, metavar="DIR",
                    help="also run each guardian kind from the code at DIR (another commit's checkout) as KIND@base, "
                         "in the same rounds")
    ap.add_argument("--out", type=Path, help="also write the JSON here")
    args = ap.parse_args()
    if args.quick:
        args.requests, args.max_seconds, args.warmup = min(args.requests, 1000), min(args.max_seconds, 15), 100
    args.workloads = [w for w in args.workloads.split(",") if w]
    with tempfile.TemporaryDirectory(prefix="gp-bench-") as d:
        tmp = Path(d)
        up, up_port = start_upstream(tmp)
        try:
            res, ratios = bench(tmp, up_port, args)
        finally:
            up.stop()
    bare = res.get("bare", {})
    guards = {k: v for k, v in res.items() if k != "bare"}
    workers = {k: n for k, n in kinds_of(args).items() if k in guards}
    if args.latency:
        final = {"bare": bare, "guardian": guards, "workers": workers}
        if bare:
            final["added_ms"] = {k: {c: round(g["sequential_ms"][c] - bare["sequential_ms"][c], 2)
                                     for c in LATENCY_CASES} for k, g in guards.items()}
        print(json.dumps(final))
        return
    for k, g in guards.items():
        g["throughput_ratio_rounds"] = {w: ratios[w][k] for w in args.workloads}
        if bare:
            g["added_p50_ms"] = {w: round(g[w]["p50_ms"] - bare[w]["p50_ms"], 2) for w in args.workloads}
            g["added_sequential_ms"] = {c: round(g["sequential_ms"][c] - bare["sequential_ms"][c], 2)
                                        for c in LATENCY_CASES}
            g["cpu_ratio"] = {w: round(bare[w]["cpu_ms_per_req"] / g[w]["cpu_ms_per_req"], 3)
                              for w in args.workloads if bare[w]["cpu_ms_per_req"] and g[w]["cpu_ms_per_req"]}
            g["proxy_bound"] = {w: bound_rounds(bare[w], g[w], workers[k]) for w in args.workloads}
            g["proxy_bound_ratio"] = {w: (g["proxy_bound"][w] or {}).get("median") for w in args.workloads}
    for k, g in guards.items():
        base = guards.get(f"{k}@base")
        if bare and base is not None:
            g["vs_base"] = {w: versus(g["proxy_bound"][w], base["proxy_bound"][w]) for w in args.workloads}

    def ratio(w: str, k: str) -> float | None:
        """Median over rounds of the kind's req/s ÷ bare req/s (the rounds interleave the proxies)."""
        return round(statistics.median(ratios[w][k]), 3) if ratios.get(w, {}).get(k) else None

    final = {
        "bare": bare, "guardian": guards, "workers": workers,
        "ratio": {k: {f"{w}_throughput": ratio(w, k) for w in bench_cases.WORKLOADS} for k in guards},
        "integrity_mismatches": sum(r[w]["integrity_mismatches"] for r in res.values() for w in args.workloads),
        "errors": sum(r[w]["errors"] for r in res.values() for w in args.workloads),
    }
    own = {k: n for k, n in workers.items() if not k.endswith("@base")}  # the targets are this checkout's
    top = max(own, key=own.get) if own else None
    final["targets"], final["targets_measured"] = targets_for(top, final["ratio"], guards, workers)
    print(tables(res, final, args.workloads))
    if args.out:
        args.out.write_text(json.dumps(final, indent=1))
    print(json.dumps(final))


if __name__ == "__main__":
    main()
