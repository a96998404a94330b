"""Latency of the extract stage (stage 1) per request over the request corpus (tests/fixtures/requests).

    python scripts/bench_extract.py [--rounds 5] [--mode both|fast|ner] [--cache] [--json]

Runs on one core (affinity pinned, BLAS/OpenMP threads = 1). For each mode it prints p50/p99/mean of the
wall time per request and of the thread CPU time, over `rounds` passes of the corpus after one warm-up pass
(models loaded). The per-text cache is off unless --cache (a cached rerun of the same corpus measures only
the cache). A second line per mode reports a 2 KB free-text chat message (the issue's "≤ 2 KB of text").
Modes: fast = field names + patterns + credentials + health + narrative recognizers (detector.ner false);
ner = the same plus Presidio/spaCy NER (the default configuration).
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import json  # noqa: E402
import random  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from guardian_proxy.extract import Extractor  # noqa: E402
from guardian_proxy.extract.detector import Detector  # noqa: E402
from guardian_proxy.types import RawRequest  # noqa: E402

LONG_TEXT = (
    "Hi, I need help writing a letter to my landlord. My name is Daniel Okafor and I live at 42 Elm Street, "
    "Springfield with my wife Grace and our two kids. Last month I was diagnosed with type 2 diabetes and started "
    "on metformin, and I had to take three weeks off work at Harbor Logistics, so I am behind on rent by $1,850. "
    "You can reach me at daniel.okafor@example.com or +1 (503) 555-0147. My bank is First Community Bank and the "
    "account I pay rent from ends in 4471. Please explain that I can pay the arrears in three instalments starting "
    "on 15 July, and mention that my employer has confirmed I will be back full time from next month. "
)


def load_corpus() -> list[RawRequest]:
    spec = importlib.util.spec_from_file_location("loader", ROOT / "tests" / "fixtures" / "requests" / "loader.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return [req for _, req, _ in mod.load_all()]


def long_request(chars: int = 2048) -> RawRequest:
    text = (LONG_TEXT * (chars // len(LONG_TEXT) + 1))[:chars]
    body = json.dumps({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": text}]}).encode()
    return RawRequest(method="POST", url="https://api.openai.com/v1/chat/completions",
                      headers=[("content-type", "application/json")], body=body)


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, round(q / 100 * (len(xs) - 1))))]


def measure(ex: Extractor, reqs: list[RawRequest], rounds: int, seed: int = 0) -> dict:
    wall, cpu = [], []
    order = list(reqs)
    rnd = random.Random(seed)
    for _ in range(rounds):
        rnd.shuffle(order)
        for r in order:
            c0, t0 = time.thread_time(), time.perf_counter()
            ex.extract(r)
            wall.append((time.perf_counter() - t0) * 1000)
            cpu.append((time.thread_time() - c0) * 1000)
    return {"n": len(wall), "p50_ms": round(pct(wall, 50), 2), "p99_ms": round(pct(wall, 99), 2),
            "mean_ms": round(statistics.fmean(wall), 2), "cpu_p50_ms": round(pct(cpu, 50), 2),
            "cpu_p99_ms": round(pct(cpu, 99), 2)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--mode", choices=("both", "fast", "ner"), default="both")
    ap.add_argument("--cache", action="store_true", help="keep the per-text cache on (measures cache hits)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    corpus = load_corpus()
    chars = [sum(len(f.text) for f in Extractor(Detector(ner=False)).extract(r).fields) for r in corpus]
    results = {"requests": len(corpus), "text_chars_p50": pct(chars, 50), "text_chars_max": max(chars),
               "cache": a.cache, "rounds": a.rounds}
    for mode in (("fast", "ner") if a.mode == "both" else (a.mode,)):
        det = Detector(ner=mode == "ner", cache_size=4096 if a.cache else 0)
        ex = Extractor(det)
        t0 = time.perf_counter()
        for r in corpus:  # warm-up: loads spaCy/Presidio, compiles lazily built tables
            ex.extract(r)
        results[f"{mode}_warmup_s"] = round(time.perf_counter() - t0, 2)
        results[mode] = measure(ex, corpus, a.rounds)
        results[f"{mode}_2kb_chat"] = measure(ex, [long_request()], max(5, a.rounds * 4))
    if a.json:
        print(json.dumps(results, indent=2))
        return 0
    print(f"corpus: {results['requests']} requests, outgoing text p50 {results['text_chars_p50']} chars, "
          f"max {results['text_chars_max']}; rounds {a.rounds}; per-text cache {'on' if a.cache else 'off'}; one core")
    for mode in (("fast", "ner") if a.mode == "both" else (a.mode,)):
        for key, label in ((mode, "corpus"), (f"{mode}_2kb_chat", "2 KB chat message")):
            r = results[key]
            print(f"{mode:4s} {label:18s} n={r['n']:4d}  p50 {r['p50_ms']:7.2f} ms  p99 {r['p99_ms']:7.2f} ms  "
                  f"mean {r['mean_ms']:7.2f} ms  (cpu p50 {r['cpu_p50_ms']:.2f} ms, p99 {r['cpu_p99_ms']:.2f} ms)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
