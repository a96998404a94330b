"""Hostile upstreams and clients against a real `guardian-proxy run`
(docs/security.md#hostile-upstreams-and-clients): numbers, never a timed test.

    .venv/bin/python scripts/bench_hostile.py                  # a 10 GiB response, 20 SSE probes, bombs, slowloris
    .venv/bin/python scripts/bench_hostile.py --bytes 2G --sse 10 --half-open 500

It starts tests/support/hostile.py's upstream (bodies generated, never stored) and the proxy redirected to it
(patterns only: no NER model, which no response path uses), then measures:

- a huge response (Content-Length --bytes) read through the proxy: the proxy's RSS before / peak during / after,
  and throughput, beside the same body read directly from the upstream;
- time to the first byte of an SSE stream whose first event is sent at once: direct vs through the proxy
  (medians of --sse probes; target: within 50 ms of direct);
- a gzip-bomb chat answer (--bomb decoded bytes, as JSON with a Content-Length and as an SSE stream): the
  proxy's peak RSS growth, the bytes the client got, and the slowest unrelated GET meanwhile;
- --half-open connections that never finish their request head: the proxy's open files, a normal request's
  latency beside them, and how long until all were closed (header timeout --header-timeout).

The last stdout line is the JSON of every number.
"""

from __future__ import annotations

import argparse
import http.client
import json
import socket
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.hostile import (  # noqa: E402
    HostileUpstream,
    RssSampler,
    json_bomb,
    open_files,
    proxy_args,
    rss_bytes,
    sse_bomb,
    write_config,
)
from tests.support.proxy_process import start_proxy  # noqa: E402

MiB = 1 << 20


def size(text: str) -> int:
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    t = text.strip().lower().rstrip("ib")
    return int(float(t[:-1]) * units[t[-1]]) if t and t[-1] in units else int(t)


def conn(port: int, timeout: float = 120) -> http.client.HTTPConnection:
    return http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)


def read_all(r: http.client.HTTPResponse) -> int:
    buf, n = bytearray(MiB), 0
    while k := r.readinto(buf):
        n += k
    return n


def big_body(up, px, n: int) -> dict:
    c = conn(up.port)
    c.request("GET", f"/big?n={n}")
    t = time.perf_counter()
    got = read_all(c.getresponse())
    direct_s = time.perf_counter() - t
    assert got == n
    before = rss_bytes(px.proc.pid)
    c = conn(px.port)
    c.request("GET", f"http://files.example.org/big?n={n}")
    t = time.perf_counter()
    with RssSampler(px.proc.pid, 0.1) as rss:
        got = read_all(c.getresponse())
    secs = time.perf_counter() - t
    time.sleep(1.0)
    assert got == n, got
    return {"bytes": n, "direct_MiB_s": round(n / MiB / direct_s, 1), "proxy_MiB_s": round(n / MiB / secs, 1),
            "proxy_s": round(secs, 1), "rss_before_MiB": round(before / MiB, 1),
            "rss_peak_MiB": round(rss.peak / MiB, 1), "rss_after_MiB": round(rss_bytes(px.proc.pid) / MiB, 1)}


def first_sse_byte(port: int, absolute: bool) -> float:
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    target = "http://stream.example.org/sse?events=2&every=0.3" if absolute else "/sse?events=2&every=0.3"
    t = time.perf_counter()
    s.sendall(f"GET {target} HTTP/1.1\r\nHost: stream.example.org\r\n\r\n".encode())
    buf = b""
    while b"data:" not in buf:
        chunk = s.recv(65536)
        if not chunk:
            raise RuntimeError("closed before the first event")
        buf += chunk
    took = time.perf_counter() - t
    s.close()
    return took


def sse(up, px, probes: int) -> dict:
    direct = [first_sse_byte(up.port, False) for _ in range(probes)]
    proxied = [first_sse_byte(px.port, True) for _ in range(probes)]
    d, p = statistics.median(direct), statistics.median(proxied)
    return {"probes": probes, "direct_ms": round(d * 1000, 2), "proxy_ms": round(p * 1000, 2),
            "added_ms": round((p - d) * 1000, 2), "proxy_max_ms": round(max(proxied) * 1000, 2),
            "within_50ms": p - d < 0.05}


def bomb(up, px, kind: str) -> dict:
    chat = {"model": "gpt-4o", "messages": [{"role": "user", "content": "Hi, I'm Quentin Zarkowsky (qz@gmail.com)."}]}
    slowest, done = [0.0], threading.Event()

    def others():
        while not done.is_set():
            t = time.perf_counter()
            c = conn(px.port, 30)
            c.request("GET", "http://www.example.org/small")
            c.getresponse().read()
            slowest[0] = max(slowest[0], time.perf_counter() - t)
            time.sleep(0.05)

    wire = len(json_bomb(up.bomb_bytes) if kind == "bomb" else sse_bomb(up.bomb_bytes))
    with RssSampler(px.proc.pid, 0.02) as rss:
        th = threading.Thread(target=others, daemon=True)
        th.start()
        t = time.perf_counter()
        c = conn(px.port)
        c.request("POST", "http://api.openai.com/v1/chat/completions", json.dumps(chat).encode(),
                  {"content-type": "application/json", "authorization": "Bearer sk-bench", "x-answer": kind})
        got = read_all(c.getresponse())
        secs = time.perf_counter() - t
        time.sleep(0.5)
        done.set()
        th.join(30)
    return {"wire_bytes": wire, "decoded_bytes": up.bomb_bytes, "client_got_bytes": got, "seconds": round(secs, 2),
            "rss_growth_MiB": round(rss.growth / MiB, 1), "slowest_other_get_s": round(slowest[0], 3)}


def slowloris(px, n: int, header_s: float) -> dict:
    base = open_files(px.proc.pid)
    t0 = time.perf_counter()
    socks = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", px.port), timeout=10)
        s.sendall(b"GET http://www.example.org/small HTTP/1.1\r\nHost: www.exa")
        socks.append(s)
    opened_s = time.perf_counter() - t0
    peak = open_files(px.proc.pid) - base
    t = time.perf_counter()
    c = conn(px.port, 30)
    c.request("GET", "http://www.example.org/small")
    c.getresponse().read()
    normal = time.perf_counter() - t
    c.close()
    deadline = time.monotonic() + header_s + 30
    for s in socks:
        try:
            s.settimeout(max(0.01, deadline - time.monotonic()))
            while s.recv(65536):
                pass
        except OSError:
            pass
        s.close()
    all_closed = time.perf_counter() - t0
    return {"half_open": n, "opened_in_s": round(opened_s, 2), "extra_open_files": peak,
            "normal_request_ms": round(normal * 1000, 1), "all_closed_after_s": round(all_closed, 2),
            "header_timeout_s": header_s}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bytes", default="10G", help="size of the huge response (default 10G)")
    ap.add_argument("--sse", type=int, default=20, help="SSE first-byte probes each way")
    ap.add_argument("--bomb", default="512M", help="decoded size of the gzip bombs")
    ap.add_argument("--half-open", type=int, default=2000, help="half-open connections (slowloris)")
    ap.add_argument("--header-timeout", type=float, default=5.0, help="the proxy's header timeout for this run")
    a = ap.parse_args()
    out: dict = {}
    tmp = Path(tempfile.mkdtemp(prefix="bench-hostile-"))
    up = HostileUpstream(bomb_bytes=size(a.bomb))
    cfg = write_config(tmp, header_timeout_s=a.header_timeout)
    t0 = time.perf_counter()
    px = start_proxy(tmp, up.port, extra=proxy_args(cfg))
    print(f"proxy started in {time.perf_counter() - t0:.1f}s (pid {px.proc.pid})", flush=True)
    try:
        out["sse_first_byte"] = sse(up, px, a.sse)
        print("SSE first byte:", out["sse_first_byte"], flush=True)
        for kind in ("bomb", "bomb-sse"):
            out[kind.replace("-", "_")] = bomb(up, px, kind)
            print(f"{kind}:", out[kind.replace("-", "_")], flush=True)
        out["slowloris"] = slowloris(px, a.half_open, a.header_timeout)
        print("slowloris:", out["slowloris"], flush=True)
        out["big_response"] = big_body(up, px, size(a.bytes))
        print("big response:", out["big_response"], flush=True)
    finally:
        px.stop()
        up.close()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
