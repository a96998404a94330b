"""Dashboard overhead: the cost of publishing one decision (log record + log-safe detail + aggregates +
fan-out) and the delay until a live SSE reader has it. Prints one JSON object.

    .venv/bin/python scripts/bench_dashboard.py [--n 2000]
"""

from __future__ import annotations

import argparse
import json
import queue
import tempfile
import threading
import time
from pathlib import Path

import httpx

from guardian_proxy.config import load_settings
from guardian_proxy.dashboard import Dashboard
from guardian_proxy.types import Action, Decision, Likelihood, RawRequest, Risk


def decision() -> Decision:
    return Decision(action="deny", six=Action(domain="ads.example", host="ads.example", categories={"contact": 2},
                                              recipient="ad_network"),
                    likelihood=Likelihood(value=0.7, path="fixed"),
                    risk=Risk(Sd=0.6, Mtr=1.2, Mp=1.1, Mb=1.0, MT=1.3, Seff=0.8, R=0.7, tier="sensitive",
                              allow_ceiling=0.15, deny_floor=0.6))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2000)
    a = ap.parse_args()
    dash = Dashboard(load_settings(state_dir=Path(tempfile.mkdtemp())), port=0)
    assert dash.start(), dash.error
    raw = RawRequest(method="POST", url="https://ads.example/collect?uid=1",
                     headers=[("content-type", "application/json")], body=b'{"a": 1}')
    t = time.perf_counter()
    for _ in range(a.n):
        dash.publish(raw, decision())
    publish_us = (time.perf_counter() - t) / a.n * 1e6

    got: queue.Queue = queue.Queue()

    def reader() -> None:
        with httpx.Client(base_url=dash.base_url, headers={"X-Guardian-Token": dash.guard.token}, timeout=None) as c:
            with c.stream("GET", "/api/events") as r:
                for line in r.iter_lines():
                    if line.startswith("data: "):
                        got.put(time.perf_counter())

    threading.Thread(target=reader, daemon=True).start()
    time.sleep(0.5)
    lat = []
    for _ in range(200):
        t0 = time.perf_counter()
        dash.publish(raw, decision())
        lat.append((got.get(timeout=5) - t0) * 1000)
    lat.sort()
    dash.stop()
    print(json.dumps({"publish_us_per_decision": round(publish_us, 1), "sse_delay_ms_p50": round(lat[100], 2),
                      "sse_delay_ms_p95": round(lat[190], 2), "n": a.n}))


if __name__ == "__main__":
    main()
