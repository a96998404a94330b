"""Where the CPU of one request goes, in-process: the proxy's side and the worker's side of bench_proxy's cases.

    .venv/bin/python scripts/profile_request.py                     # personal POSTs: CPU ms per request by part
    .venv/bin/python scripts/profile_request.py --workload mixed -n 600
    .venv/bin/python scripts/profile_request.py --profile 40        # + cProfile, the 40 costliest functions
    .venv/bin/python scripts/profile_request.py --kind 1            # only the transform third (0 deny, 2 allow)
    .venv/bin/python scripts/profile_request.py --pool 8 -n 900     # through a real worker process, 8 in flight

It builds the gateway the way `guardian-proxy run --workers 1` does (default settings, state under a temp dir, the
decision log on), warms it up, then for each bench case (scripts/bench_cases.py, indices past a warm-up set so the
detector's caches see new values as under load) runs what the two processes run for a request that leaves the
event-loop fast path:

    proxy   to_raw-equivalent RawRequest, evaluate_inline (declines), pickle it (and what it extracted) to the
            worker, unpickle the Decision, write_line (the JSONL line)
    worker  unpickle RawRequest, Gateway.evaluate(log=False), pickle the Decision back

and reports CPU (time.process_time, so a loaded machine changes little) per request for each part;
"worker_other_threads" is the share of the worker's CPU spent by threads other than the evaluating one (a native
library's pool: torch's spun ~4 ms per request before the model ran on one thread). With --pool the proxy's side is
measured as it runs with workers (the pipe read and written on the event loop, the request's future) and the
worker's CPU is read from /proc. mitmproxy's own work (HTTP parsing, the connections) and the other addons (procinfo's
per-connection lookup, the connection guard) are not here: bench_proxy measures those.
The last stdout line is JSON: {"workload", "n", "ms_per_req": {part: ms}, "outcomes": {...}}.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pickle
import pstats
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
import bench_cases  # noqa: E402

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def raw_of(case):
    from guardian_proxy.types import RawRequest

    return RawRequest(method=case.method, url=case.url, headers=list(case.headers), body=case.body,
                      client="127.0.0.1")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workload", default="personal", choices=bench_cases.WORKLOADS)
    ap.add_argument("-n", type=int, default=300, help="requests measured (default 300)")
    ap.add_argument("--warm", type=int, default=60, help="requests run first, not measured (default 60)")
    ap.add_argument("--kind", type=int, choices=(0, 1, 2), help="personal workload: only i %% 3 == KIND")
    ap.add_argument("--profile", type=int, metavar="N", help="cProfile the measured loop; print the N costliest")
    ap.add_argument("--sort", default="tottime", help="pstats sort key (default tottime)")
    ap.add_argument("--dump", type=Path, help="write the profile's stats to this file (pstats)")
    ap.add_argument("--pool", type=int, metavar="C",
                    help="through a real worker process (workers.WorkerPool), C requests in flight from an asyncio "
                         "loop as the addon sends them: this process's CPU per request is the proxy's side of it "
                         "(the event loop, which reads and writes the worker's pipe), the worker's is read from /proc")
    args = ap.parse_args()

    import logging

    logging.getLogger("presidio-analyzer").setLevel(logging.ERROR)
    from guardian_proxy.config import load_settings
    from guardian_proxy.evaluator import Ticket, write_line
    from guardian_proxy.pipeline import Gateway
    from guardian_proxy.workers import from_wire, to_wire

    tmp = Path(tempfile.mkdtemp(prefix="guardian-profile-"))
    s = load_settings(None, state_dir=tmp / "state", dashboard_port=0, workers=1)
    t0 = time.perf_counter()
    gw = Gateway.from_settings(s)
    gw.warm_up()
    print(f"gateway built and warm in {time.perf_counter() - t0:.1f} s", file=sys.stderr)

    def indices(start: int, n: int):
        i = start
        while n:
            if args.kind is None or i % 3 == args.kind:
                yield i
                n -= 1
            i += 1

    def one(i: int, parts: Counter, outcomes: Counter) -> None:
        case = bench_cases.case(args.workload, i)
        c0 = time.process_time()
        raw = raw_of(case)
        ticket = Ticket()
        inline = gw.evaluate_inline(raw, ticket)
        if inline is not None:  # decided on the event loop: no worker
            write_line(gw, raw, inline, ticket)
            c1 = time.process_time()
            parts["proxy"] += c1 - c0
            outcomes[inline.action] += 1
            return
        wire = pickle.dumps((raw, ticket.action), pickle.HIGHEST_PROTOCOL)
        c1 = time.process_time()
        t1 = time.thread_time()
        wraw, handed = pickle.loads(wire)
        d = gw.evaluate(wraw, log=False, ticket=Ticket(handed))
        d.six._parsed = None
        back = pickle.dumps(to_wire(d), pickle.HIGHEST_PROTOCOL)  # as workers._serve sends it
        c2 = time.process_time()
        parts["worker_other_threads"] += (c2 - c1) - (time.thread_time() - t1)
        d2 = from_wire(*pickle.loads(back))
        write_line(gw, raw, d2, ticket)
        c3 = time.process_time()
        parts["proxy"] += (c1 - c0) + (c3 - c2)
        parts["worker"] += c2 - c1
        outcomes[d2.action] += 1

    if args.pool:
        return through_pool(args, s, gw, indices)

    scratch_p, scratch_o = Counter(), Counter()
    for i in indices(1_000_000, args.warm):
        one(i, scratch_p, scratch_o)
    parts, outcomes = Counter(), Counter()
    # the profile's clock is this thread's CPU time (a loaded machine's waits are not counted as work)
    prof = cProfile.Profile(time.thread_time) if args.profile else None
    if prof:
        prof.enable()
    n = 0
    for i in indices(2_000_000, args.n):
        one(i, parts, outcomes)
        n += 1
    if prof:
        prof.disable()
        st = pstats.Stats(prof, stream=sys.stderr)
        st.sort_stats(args.sort).print_stats(args.profile)
        if args.dump:
            st.dump_stats(args.dump)
    ms = {k: round(v * 1000 / n, 3) for k, v in sorted(parts.items())}
    ms["total"] = round((parts["proxy"] + parts["worker"]) * 1000 / n, 3)
    print(json.dumps({"workload": args.workload, "kind": args.kind, "n": n, "ms_per_req": ms,
                      "outcomes": dict(outcomes), "profiled": bool(prof)}))
    return 0


def _proc_cpu_s(pid: int) -> float:
    f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def through_pool(args, settings, gw, indices) -> int:
    """The proxy's side as it runs with workers (guardian_proxy/evaluator.py): to_raw-equivalent, evaluate_inline,
    submit to the pool, await the wrapped future on the event loop, write_line."""
    import asyncio

    from guardian_proxy.evaluator import Evaluator
    from guardian_proxy.workers import WorkerPool

    pool = WorkerPool(settings, 1).start()
    ev = Evaluator(gw, processes=pool)
    outcomes: Counter = Counter()

    async def one(i: int) -> None:
        d = await ev.evaluate(raw_of(bench_cases.case(args.workload, i)), inline=True)
        outcomes[d.action] += 1

    async def run(idx: list[int]) -> None:
        it = iter(idx)

        async def lane():
            for i in it:
                await one(i)

        await asyncio.gather(*(lane() for _ in range(args.pool)))

    try:
        asyncio.run(run(list(indices(1_000_000, args.warm))))
        outcomes.clear()
        idx = list(indices(2_000_000, args.n))
        wpid = pool.pids()[0]
        # the profile's clock is the event loop's CPU time (its waits for the worker are not counted as work)
        prof = cProfile.Profile(time.thread_time) if args.profile else None
        c0, w0, t0, o0 = time.process_time(), _proc_cpu_s(wpid), time.perf_counter(), os.times()
        if prof:
            prof.enable()
        asyncio.run(run(idx))
        if prof:
            prof.disable()
        c1, w1, t1, o1 = time.process_time(), _proc_cpu_s(wpid), time.perf_counter(), os.times()
    finally:
        ev.close()
    if prof:
        st = pstats.Stats(prof, stream=sys.stderr)
        st.sort_stats(args.sort).print_stats(args.profile)
        if args.dump:
            st.dump_stats(args.dump)
    n = len(idx)
    ms = {"proxy": round((c1 - c0) * 1000 / n, 3), "worker": round((w1 - w0) * 1000 / n, 3)}
    ms["total"] = round(ms["proxy"] + ms["worker"], 3)
    ms["proxy_system"] = round((o1.system - o0.system) * 1000 / n, 3)  # of "proxy": the kernel's (pipes, wake-ups)
    print(json.dumps({"workload": args.workload, "kind": args.kind, "n": n, "pool_in_flight": args.pool,
                      "ms_per_req": ms, "wall_s": round(t1 - t0, 2), "outcomes": dict(outcomes),
                      "profiled": bool(prof)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
