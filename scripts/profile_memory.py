"""Where the memory and the start-up time of guardian-proxy go (docs/design/scaling.md, docs/benchmarks.md): a
benchmark, not a timed test.

    python scripts/profile_memory.py stages    # one worker's load, step by step, in this process
    python scripts/profile_memory.py proxy     # a real `guardian-proxy run --port 0`, default settings

`stages` builds what an evaluation worker builds (Gateway.from_settings(with_log=False), then warm_up()) with the
default settings and a temporary state dir, and prints after each step: wall and CPU seconds, RSS, PSS, private
memory (/proc/self/smaps_rollup), the number of modules loaded, and which heavy libraries are loaded so far.

`proxy` starts `guardian-proxy run --port 0` (default settings: the default worker count; a temporary state dir and
mitmproxy confdir; a local upstream through --redirect-upstream), and prints the time to the banner, to
runtime.json, to the first personal POST decided (`--traffic N`: then N more POSTs), then RSS / PSS / shared / private of the proxy process and of each
of its children (the workers), and the totals. PSS is what the machine really spends (shared pages divided among
the processes that map them); RSS counts shared libraries once per process.

Wall-clock numbers depend on the load of the machine: the script prints the load average next to them.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HEAVY = ("torch", "transformers", "tokenizers", "safetensors", "spacy", "thinc", "presidio_analyzer",
         "presidio_anonymizer", "faker", "wordfreq", "numpy", "scipy", "sklearn", "llama_cpp", "rank_bm25",
         "phonenumbers", "mitmproxy", "pydantic", "yaml", "regex", "onnxruntime", "sentence_transformers",
         "huggingface_hub", "tldextract", "en_core_web_sm", "en_core_web_md", "en_core_web_lg")


def rollup(pid: int | str = "self") -> dict[str, float]:
    """MB from /proc/<pid>/smaps_rollup: Rss, Pss, Shared (clean + dirty), Private (clean + dirty), Swap."""
    out: dict[str, float] = {}
    try:
        text = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except OSError:
        return out
    kb: dict[str, int] = {}
    for line in text.splitlines()[1:]:
        parts = line.split()
        if len(parts) >= 2 and parts[0].endswith(":"):
            kb[parts[0][:-1]] = int(parts[1])
    out["rss"] = kb.get("Rss", 0) / 1024
    out["pss"] = kb.get("Pss", 0) / 1024
    out["shared"] = (kb.get("Shared_Clean", 0) + kb.get("Shared_Dirty", 0)) / 1024
    out["private"] = (kb.get("Private_Clean", 0) + kb.get("Private_Dirty", 0)) / 1024
    out["swap"] = kb.get("Swap", 0) / 1024
    return out


def children(pid: int) -> list[int]:
    kids: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            kids += [int(x) for x in (task / "children").read_text().split()]
        except OSError:
            pass
    return sorted(set(kids))


def descendants(pid: int) -> list[int]:
    out, todo = [], children(pid)
    while todo:
        p = todo.pop(0)
        out.append(p)
        todo += children(p)
    return out


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:80]
    except OSError:
        return "?"


def load() -> str:
    return "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


# ---------------------------------------------------------------------- stages: one worker's load


def stages() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="gp-mem-"))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    t0, c0 = time.perf_counter(), time.process_time()
    rows: list[tuple] = []
    seen: set[str] = set()

    def mark(what: str) -> None:
        heavy = sorted(h for h in HEAVY if h in sys.modules and h not in seen)
        seen.update(heavy)
        r = rollup()
        rows.append((what, time.perf_counter() - t0, time.process_time() - c0, r.get("rss", 0), r.get("pss", 0),
                     r.get("private", 0), len(sys.modules), ",".join(heavy)))

    mark("interpreter")
    from guardian_proxy.config import load_factor_tables, load_settings

    mark("import config")
    settings = load_settings(None, state_dir=tmp / "state")
    mark("load_settings")
    from guardian_proxy import pipeline

    mark("import pipeline")
    for name in ("agents", "anonymize", "extract", "extract.detector", "likelihood", "llm", "policy", "session"):
        __import__(f"guardian_proxy.{name}")
        mark(f"import {name}")
    tables = load_factor_tables(settings.factor_tables_dir)
    mark("factor tables")
    gw = pipeline.Gateway.from_settings(settings, with_log=False)
    mark("Gateway.from_settings")
    del tables
    gw.warm_up()
    mark("warm_up (first evaluate)")
    from guardian_proxy.types import RawRequest

    gw.evaluate(RawRequest(method="POST", url="https://api.example.com/v1/users", headers=[
        ("content-type", "application/json")], body=json.dumps({
            "name": "Maria Keller", "email": "maria.keller@example.org", "phone": "+49 30 1234567",
            "note": "I live at 12 Rosenweg, Berlin and my doctor says I have diabetes."}).encode()), log=False)
    mark("a personal JSON POST")

    print(f"# one worker's load, step by step ({load()}, {os.cpu_count()} CPUs)")
    print(f"{'step':28} {'wall s':>7} {'cpu s':>7} {'RSS MB':>7} {'PSS MB':>7} {'priv MB':>7} {'mods':>5}  new heavy")
    prev = None
    for what, wall, cpu, rss, pss, priv, mods, heavy in rows:
        d = f" (+{rss - prev:.0f})" if prev is not None else ""
        print(f"{what:28} {wall:7.2f} {cpu:7.2f} {rss:7.0f} {pss:7.0f} {priv:7.0f} {mods:5d}  {heavy}{d}")
        prev = rss
    big = sorted(((m, mod) for m, mod in sys.modules.items() if "." not in m), key=lambda x: x[0])
    print("top-level packages loaded:", " ".join(m for m, _ in big if not m.startswith("_"))[:2000])


# ---------------------------------------------------------------------- proxy: the real process


def _upstream() -> tuple[object, int]:
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class H(BaseHTTPRequestHandler):
        def _ok(self):
            n = int(self.headers.get("content-length") or 0)
            self.rfile.read(n)
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        do_GET = do_POST = _ok

        def log_message(self, *a):
            pass

    srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, srv.server_address[1]


def proxy(extra: list[str], settle_s: float, traffic: int = 0) -> None:
    import urllib.request

    tmp = Path(tempfile.mkdtemp(prefix="gp-mem-"))
    srv, up = _upstream()
    state, out = tmp / "state", tmp / "out.txt"
    binary = Path(sys.executable).parent / "guardian-proxy"
    args = [str(binary), "run", "--port", "0", "--state-dir", str(state), "--confdir", str(tmp / "conf"),
            "--redirect-upstream", f"127.0.0.1:{up}", *extra]
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    print(f"# {' '.join(args[1:])}  ({load()}, {os.cpu_count()} CPUs)")
    t0 = time.perf_counter()
    proc = subprocess.Popen(args, stdout=out.open("wb"), stderr=subprocess.STDOUT, env=env)
    banner = runtime = None
    port = 0
    peak: dict[int, float] = {}
    while proc.poll() is None and time.perf_counter() - t0 < 600:
        for p in [proc.pid, *descendants(proc.pid)]:
            peak[p] = max(peak.get(p, 0.0), rollup(p).get("rss", 0.0))
        text = out.read_text(errors="replace")
        if banner is None and "listening on" in text and "CA certificate:" in text:
            banner = time.perf_counter() - t0
            import re

            port = int(re.search(r"listening on http://[^\s:]*:(\d+)", text).group(1))
        if runtime is None and (state / "runtime.json").exists():
            runtime = time.perf_counter() - t0
        if banner is not None and runtime is not None:
            break
        time.sleep(0.05)
    if banner is None:
        print(out.read_text(errors="replace"))
        proc.kill()
        sys.exit("the proxy did not start")
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": f"http://127.0.0.1:{port}"}))
    body = json.dumps({"name": "Maria Keller", "email": "maria.keller@example.org",
                       "note": "my doctor says I have diabetes"}).encode()
    req = urllib.request.Request("http://api.example.com/v1/profile", data=body, method="POST",
                                 headers={"content-type": "application/json"})
    t1 = time.perf_counter()
    try:
        with opener.open(req, timeout=120) as r:
            status = r.status
    except urllib.error.HTTPError as e:
        status = e.code
    first = time.perf_counter() - t0
    print(f"banner {banner:.1f} s, runtime.json {runtime or float('nan'):.1f} s, first personal POST decided "
          f"{first:.1f} s (HTTP {status}, {1000 * (time.perf_counter() - t1):.0f} ms itself)")
    if traffic:
        import random

        rng = random.Random(7)
        words = "the order was late and I would like a refund for the blue jacket size medium".split()
        t2 = time.perf_counter()
        for k in range(traffic):
            text = " ".join(rng.choice(words) for _ in range(40))
            data = json.dumps({"name": f"Maria Keller{k}", "email": f"m{k}@example.org", "text": text}).encode()
            big = k == traffic // 2  # one ~90 KB free-text body (NER over the whole of it)
            if big:
                data = (f"Hello, I am Anna Schmidt from Hamburg. {text} " * 400).encode()
            r = urllib.request.Request(f"http://shop.example.com/api/{k}", data=data, method="POST", headers={
                "content-type": "text/plain" if big else "application/json"})
            try:
                opener.open(r, timeout=120).close()
            except urllib.error.HTTPError:
                pass
        print(f"{traffic} more POSTs (one with ~90 KB of free text) in "
              f"{time.perf_counter() - t2:.1f} s")
    time.sleep(settle_s)
    pids = [proc.pid, *descendants(proc.pid)]
    tot = {"rss": 0.0, "pss": 0.0, "shared": 0.0, "private": 0.0}
    print(f"{'pid':>8} {'RSS':>7} {'PSS':>7} {'shared':>7} {'private':>7} {'peak RSS':>8}  MB  process")
    for p in pids:
        r = rollup(p)
        if not r:
            continue
        for k in tot:
            tot[k] += r[k]
        print(f"{p:8d} {r['rss']:7.0f} {r['pss']:7.0f} {r['shared']:7.0f} {r['private']:7.0f} {peak.get(p, 0):8.0f}"
              f"      {cmdline(p)}")
    print(f"{'total':>8} {tot['rss']:7.0f} {tot['pss']:7.0f} {tot['shared']:7.0f} {tot['private']:7.0f}")
    cpu = [0.0]
    for p in pids:
        try:
            f = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            cpu[0] += (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, IndexError):
            pass
    print(f"CPU spent by the proxy's processes up to now: {cpu[0]:.1f} s")
    proc.terminate()
    try:
        proc.wait(20)
    except subprocess.TimeoutExpired:
        proc.kill()
    srv.shutdown()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("stages")
    p = sub.add_parser("proxy")
    p.add_argument("--settle", type=float, default=1.0, help="seconds after the first request before measuring")
    p.add_argument("--traffic", type=int, default=0, help="POSTs to send (one with ~90 KB of free text) before "
                   "measuring: the footprint after use, not only after start")
    p.add_argument("extra", nargs="*", help="more `guardian-proxy run` arguments (after --)")
    a = ap.parse_args()
    if a.cmd == "stages":
        stages()
    else:
        proxy(a.extra, a.settle, a.traffic)


if __name__ == "__main__":
    main()
