"""Throughput, latency, integrity and memory of guardian-proxy against a bare mitmdump.

    .venv/bin/python scripts/bench_proxy.py             # 10,000 requests per workload, 50 connections
    .venv/bin/python scripts/bench_proxy.py --quick     # 1,000 requests per workload, 15 s cap each
    .venv/bin/python scripts/bench_proxy.py --latency   # sequential medians of 200 (issue 2 numbers)

It starts the benchmark upstream (scripts/bench_upstream.py, which verifies every request it gets),
a bare `mitmdump` (with scripts/redirect_upstream.py) and `guardian-proxy run`, both redirected to that
upstream, and drives each with the same concurrent httpx load over loopback (bounded by --requests and
--max-seconds per workload): bodyless GETs, JSON POSTs carrying personal data, and a mixed browsing
profile (see scripts/bench_cases.py). The two proxies take turns in --rounds slices of each workload
(order alternating) so that both see the same background load on a shared machine; the throughput
ratio is the median of the per-round ratios. Per proxy and workload it reports requests/s, p50/p99
latency, errors, proxy CPU ms per request and RSS; sequential medians (interleaved the same way);
for guardian-proxy the outcome counts and the head-of-line effect of one slow request.

The last stdout line is JSON: {"bare": {...}, "guardian": {...}, "ratio": {"bodyless_throughput",
"mixed_throughput"}, "integrity_mismatches": n, "errors": n}. Integrity mismatches: a body that arrived
changed through bare mitmdump; a rewrite that is not valid, changed shape or kept a planted value; a
denied request that reached the upstream; a response that came back corrupted or for another request.
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


class Proc:
    """A child process with the /proc readings the benchmark needs (Linux)."""

    def __init__(self, args: list[str], out: Path, env: dict | None = None):
        self.out = out
        self.p = subprocess.Popen(args, stdout=out.open("wb"), stderr=subprocess.STDOUT,
                                  env=dict(os.environ, **(env or {})))

    def _status(self, field: str) -> float:
        for line in Path(f"/proc/{self.p.pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
        return 0.0

    def rss_mb(self) -> float:
        return round(self._status("VmRSS"), 1)

    def peak_mb(self) -> float:
        return round(self._status("VmHWM"), 1)

    def cpu_s(self) -> float:
        fields = Path(f"/proc/{self.p.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def wait_ready(self, port: int, marker: str | None, timeout: float = 180) -> None:
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


def start_proxy(kind: str, tmp: Path, up_port: int) -> tuple[Proc, int]:
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
        marker = "listening on"
    p = Proc(args, d / "proxy.out", {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
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


async def run_chunk(kind: str, proxy: str, up_port: int, workload: str, indexes: range, conc: int, max_s: float,
                    proc: Proc, run_tag: str, t: Tally) -> tuple[float, float]:
    """Send `indexes` of a workload with `conc` connections (stop at max_s); tally into t; (seconds, proxy CPU s)."""
    todo = iter(indexes)
    limits = httpx.Limits(max_connections=conc, max_keepalive_connections=conc)
    async with httpx.AsyncClient(proxy=proxy, limits=limits, timeout=60) as client:
        t0 = time.perf_counter()
        deadline = t0 + max_s

        async def worker() -> None:
            for i in todo:
                if time.perf_counter() > deadline:
                    return
                c = bench_cases.case(workload, i)
                headers = c.headers + [("x-bench-case", c.key), ("x-bench-run", run_tag)]
                s = time.perf_counter()
                try:
                    r = await client.request(c.method, c.url, headers=headers, content=c.body or None)
                except Exception as e:  # connect errors, resets, timeouts
                    t.errors[type(e).__name__] += 1
                    continue
                t.lat.append((time.perf_counter() - s) * 1000)
                classify(kind, c, i, r, t)

        cpu0 = proc.cpu_s()
        denied_before = len(t.denied)
        await asyncio.gather(*(worker() for _ in range(conc)))
        elapsed = time.perf_counter() - t0
        cpu = proc.cpu_s() - cpu0
    seen = set(httpx.get(f"http://127.0.0.1:{up_port}/__bench/seen?run={run_tag}", timeout=30).json()["seen"])
    arrived = [i for i in t.denied[denied_before:] if i in seen]
    if arrived:
        t.mismatches["denied request reached the upstream"] += len(arrived)
    return elapsed, cpu


def summary(t: Tally, elapsed: float, cpu: float, proc: Proc) -> dict:
    done = len(t.lat)
    return {
        "requests": done, "seconds": round(elapsed, 2), "rps": round(done / elapsed, 1) if elapsed else 0,
        "p50_ms": pctl(t.lat, 0.5), "p99_ms": pctl(t.lat, 0.99), "errors": sum(t.errors.values()),
        "error_kinds": dict(t.errors), "cpu_ms_per_req": round(cpu * 1000 / done, 2) if done else None,
        "outcomes": dict(t.outcomes), "unexpected": dict(t.unexpected),
        "integrity_mismatches": sum(t.mismatches.values()), "mismatch_reasons": dict(t.mismatches),
        "rss_mb": proc.rss_mb(),
    }


def run_workload(procs: dict, up_port: int, w: str, args) -> tuple[dict, list[float]]:
    """The workload in `args.rounds` rounds; in each round every proxy gets the same slice of requests, the
    order alternating, so both see the same background load on a shared machine. Returns per-proxy
    summaries and the per-round throughput ratios guardian/bare."""
    kinds = list(procs)
    rounds = max(1, min(args.rounds, args.requests))
    per = args.requests // rounds
    tallies = {k: Tally() for k in kinds}
    time_cpu = {k: [0.0, 0.0] for k in kinds}
    ratios = []
    for r in range(rounds):
        rps = {}
        for k in (kinds if r % 2 == 0 else kinds[::-1]):
            proc, proxy = procs[k]
            n0 = len(tallies[k].lat)
            el, cpu = asyncio.run(run_chunk(k, proxy, up_port, w, range(r * per, (r + 1) * per), args.concurrency,
                                            args.max_seconds / rounds, proc, f"{k}-{w}-{r}", tallies[k]))
            time_cpu[k][0] += el
            time_cpu[k][1] += cpu
            rps[k] = (len(tallies[k].lat) - n0) / el if el else 0
        if "bare" in rps and "guardian" in rps and rps["bare"]:
            ratios.append(round(rps["guardian"] / rps["bare"], 3))
    out = {k: summary(tallies[k], *time_cpu[k], procs[k][0]) for k in kinds}
    for k in kinds:
        print(f"  {k:8} {w:9} {json.dumps(out[k])}", file=sys.stderr, flush=True)
    return out, ratios


# --------------------------------------------------------------------------- sequential latency, head of line

# each sequential request is a different one (the detector caches texts it has seen): k → (workload, index)
LATENCY_CASES = {"bodyless_get": lambda k: ("bodyless", k), "json_post": lambda k: ("mixed", 10 * k + 7),
                 "personal_post": lambda k: ("personal", 3 * k + 1)}  # name + e-mail → service provider (rewrite)


def _send(client: httpx.Client, c: bench_cases.Case, tag: str) -> float:
    s = time.perf_counter()
    r = client.request(c.method, c.url, headers=c.headers + [("x-bench-case", c.key), ("x-bench-run", tag)],
                       content=c.body or None)
    ms = (time.perf_counter() - s) * 1000
    if r.status_code not in (200, 403):
        raise RuntimeError(f"{c.key}: HTTP {r.status_code}")
    return ms


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


def head_of_line(proxy: str, probes: int = 20, slow_n: int = 2) -> dict:
    """Probe latency (bodyless GET, small personal POST) idle vs while `slow_n` ~90 KB free-text POSTs (as many
    as the machine has cores, by default: enough to occupy a pool sized to the cores) are evaluated."""
    import threading

    slow_cases = [bench_cases.case("slow", j) for j in range(slow_n)]
    kinds = {"bodyless": lambda k: bench_cases.case("bodyless", 70_000 + k),
             "personal": lambda k: bench_cases.case("personal", 3 * (70_000 + k) + 1)}  # a new text each time
    res: dict = {}
    with httpx.Client(proxy=proxy, timeout=120) as client:
        for k, make in kinds.items():
            res[f"{k}_p50_idle_ms"] = round(statistics.median(_send(client, make(j), "hol") for j in range(probes)), 2)
        box: dict = {"slow_s": []}

        def fire(c: bench_cases.Case) -> None:
            with httpx.Client(proxy=proxy, timeout=300) as cl:
                box["slow_s"].append(_send(cl, c, "hol-slow") / 1000)

        threads = [threading.Thread(target=fire, args=(c,)) for c in slow_cases]
        for th in threads:
            th.start()
        time.sleep(0.3)
        during: dict[str, list[float]] = {k: [] for k in kinds}
        j = probes
        while any(th.is_alive() for th in threads) and len(during["personal"]) < probes:
            j += 1
            for k, make in kinds.items():
                during[k].append(_send(client, make(j), "hol"))
        for th in threads:
            th.join()
    res["slow_requests"] = slow_n
    res["slow_request_s"] = round(max(box["slow_s"] or [float("nan")]), 2)
    for k in kinds:
        res[f"{k}_p50_during_ms"] = pctl(during[k], 0.5)
        res[f"{k}_max_during_ms"] = round(max(during[k]), 2) if during[k] else None
        res[f"{k}_probes_during"] = len(during[k])
    return res


# --------------------------------------------------------------------------- main


def bench(tmp: Path, up_port: int, args) -> tuple[dict, dict]:
    kinds = [args.only] if args.only else ["bare", "guardian"]
    procs: dict = {}
    res: dict = {k: {} for k in kinds}
    ratios: dict = {}
    try:
        for k in kinds:
            print(f"starting {k} …", file=sys.stderr, flush=True)
            proc, port = start_proxy(k, tmp, up_port)
            procs[k] = (proc, f"http://127.0.0.1:{port}")
            res[k]["rss_mb_start"] = proc.rss_mb()
        if args.latency:
            for k, seq in sequential({k: url for k, (_, url) in procs.items()}, args.latency_n).items():
                res[k]["sequential_ms"] = seq
            return res, ratios
        for k, (proc, proxy) in procs.items():
            asyncio.run(run_chunk(k, proxy, up_port, "mixed", range(10**6, 10**6 + args.warmup),
                                  min(10, args.concurrency), 120, proc, f"{k}-warmup", Tally()))
            res[k]["rss_mb_after_warmup"] = proc.rss_mb()
        for w in args.workloads:
            out, ratios[w] = run_workload(procs, up_port, w, args)
            for k in kinds:
                res[k][w] = out[k]
        for k, seq in sequential({k: url for k, (_, url) in procs.items()}, args.latency_n).items():
            res[k]["sequential_ms"] = seq
        for k, (proc, proxy) in procs.items():
            res[k]["rss_mb_end"] = proc.rss_mb()
            res[k]["rss_growth_mb"] = round(res[k]["rss_mb_end"] - res[k]["rss_mb_after_warmup"], 1)
            if not args.no_hol and (k == "guardian" or args.hol_bare):
                res[k]["head_of_line"] = head_of_line(proxy, slow_n=args.hol_slow)
            res[k]["peak_rss_mb"] = proc.peak_mb()
        return res, ratios
    finally:
        for proc, _ in procs.values():
            proc.stop()


def table(res: dict, workloads: list[str]) -> str:
    rows = ["| workload | proxy | req/s | p50 ms | p99 ms | errors | proxy CPU ms/req | outcomes |",
            "|---|---|---|---|---|---|---|---|"]
    for w in workloads:
        for kind in ("bare", "guardian"):
            r = res.get(kind, {}).get(w)
            if r:
                rows.append(f"| {w} | {kind} | {r['rps']} | {r['p50_ms']} | {r['p99_ms']} | {r['errors']} | "
                            f"{r['cpu_ms_per_req']} | {r['outcomes']} |")
    return "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="1,000 requests per workload, 15 s cap each")
    ap.add_argument("--requests", type=int, default=10_000)
    ap.add_argument("--concurrency", type=int, default=50)
    ap.add_argument("--max-seconds", type=float, default=90.0, help="time cap per workload and proxy")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds per workload (bare, guardian, …)")
    ap.add_argument("--workloads", default=",".join(bench_cases.WORKLOADS))
    ap.add_argument("--warmup", type=int, default=300)
    ap.add_argument("--latency", action="store_true", help="only the sequential medians (issue 2)")
    ap.add_argument("--latency-n", type=int, default=200)
    ap.add_argument("--hol-bare", action="store_true", help="also measure head-of-line on bare mitmdump")
    ap.add_argument("--no-hol", action="store_true", help="skip the head-of-line measurement")
    ap.add_argument("--hol-slow", type=int, default=max(2, os.cpu_count() or 2),
                    help="slow requests in flight during the head-of-line probes (default: the cores)")
    ap.add_argument("--only", choices=["bare", "guardian"])
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
    bare, guard = res.get("bare", {}), res.get("guardian", {})
    if args.latency:
        if bare and guard:
            res["added_ms"] = {k: round(guard["sequential_ms"][k] - bare["sequential_ms"][k], 2)
                               for k in LATENCY_CASES}
        print(json.dumps(res))
        return
    if bare and guard:
        guard["added_p50_ms"] = {w: round(guard[w]["p50_ms"] - bare[w]["p50_ms"], 2) for w in args.workloads}
        guard["added_sequential_ms"] = {k: round(guard["sequential_ms"][k] - bare["sequential_ms"][k], 2)
                                        for k in LATENCY_CASES}
        guard["throughput_ratio_rounds"] = ratios
        guard["cpu_ratio"] = {w: round(bare[w]["cpu_ms_per_req"] / guard[w]["cpu_ms_per_req"], 3)
                              for w in args.workloads if bare[w]["cpu_ms_per_req"] and guard[w]["cpu_ms_per_req"]}

    def ratio(w: str) -> float | None:
        """Median over rounds of guardian req/s ÷ bare req/s (the rounds interleave the two proxies)."""
        return round(statistics.median(ratios[w]), 3) if ratios.get(w) else None

    final = {
        "bare": bare, "guardian": guard,
        "ratio": {"bodyless_throughput": ratio("bodyless"), "mixed_throughput": ratio("mixed")},
        "integrity_mismatches": sum(r[w]["integrity_mismatches"] for r in res.values() for w in args.workloads),
        "errors": sum(r[w]["errors"] for r in res.values() for w in args.workloads),
    }
    print(table(res, args.workloads))
    if args.out:
        args.out.write_text(json.dumps(final, indent=1))
    print(json.dumps(final))


if __name__ == "__main__":
    main()
