"""Evaluation in worker processes (guardian_proxy/workers.py): the same decisions as in the proxy's own process, a
worker that dies is replaced and its request gets the fail rules, a request that never reached it goes to another,
large bodies leave one worker free for small requests, and under load a SIGKILLed worker loses and repeats no
decision line."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest

from guardian_proxy.config import load_settings
from guardian_proxy.evaluator import BIG_BODY_BYTES
from guardian_proxy.types import RawRequest
from guardian_proxy.workers import WorkerDied, WorkerPool, default_count, pool_for

PERSONAL = RawRequest(method="POST", url="https://support.zendesk.com/api/v2/tickets",  # a phone app's SDK
                      headers=[("content-type", "application/json"), ("user-agent", "Dalvik/2.1.0 (Linux; U; Android 14; Pixel 8)")],
                      body=json.dumps({"text": "Please call John Smith back at john.smith@example.com"}).encode())


def _settings(tmp: Path, **kw):
    return load_settings(state_dir=tmp / "state", dashboard_port=0, **kw)


# ---------------------------------------------------------------------- scheduling (no processes)


def test_large_bodies_leave_the_last_worker_to_small_requests(tmp_path):
    pool = WorkerPool(_settings(tmp_path), 2)
    assert [s.big_ok for s in pool.slots] == [True, False]
    big, small = SimpleNamespace(body=b"x" * (BIG_BODY_BYTES + 1)), SimpleNamespace(body=b"y")

    async def queue():
        pool.submit_async(big)  # no worker started: both wait in the queue
        late = pool.submit_async(SimpleNamespace(body=b"z"))
        pool.submit_async(small)
        late.cancel()  # its deadline passed while it waited: no worker takes it
        first = pool._take(big_ok=False)  # the reserved worker skips the older large body (and the cancelled one)
        assert first.raw is small
        assert pool._take(big_ok=True).raw is big
        assert pool._take(big_ok=True) is None and not pool._jobs

    asyncio.run(queue())
    assert WorkerPool(_settings(tmp_path), 1).slots[0].big_ok  # one worker takes everything


def test_worker_count_defaults_to_the_cores_and_zero_means_threads(tmp_path):
    assert default_count() >= 1
    assert pool_for(_settings(tmp_path, workers=0)) is None
    assert WorkerPool(_settings(tmp_path)).n == default_count()


def test_a_closed_pool_refuses_and_fails_what_was_queued(tmp_path):
    pool = WorkerPool(_settings(tmp_path), 1)
    fut = pool.submit(SimpleNamespace(body=b""))
    pool.close()
    with pytest.raises(WorkerDied):
        fut.result(1)
    with pytest.raises(RuntimeError):
        pool.submit(SimpleNamespace(body=b""))


# ---------------------------------------------------------------------- real worker processes


@pytest.mark.slow
def test_a_worker_decides_as_the_proxy_process_would_and_is_replaced_when_killed(tmp_path, gateway):
    pool = WorkerPool(_settings(tmp_path), 1).start()
    try:
        decision, _ = pool.submit(PERSONAL).result(120)
        here = gateway.evaluate(PERSONAL, log=False)
        assert (decision.action, decision.six.categories, decision.rule) == \
               (here.action, here.six.categories, here.rule)
        assert decision.action == "transform"
        assert decision.rewrite is not None and b"john.smith@example.com" not in decision.rewrite.body
        assert decision.six._parsed is None  # the parsed body stays in the worker

        # what the event loop extracted goes with the request: the worker decides from it, never extracts again
        mail = RawRequest(method="GET", url="https://api.example-crm.com/u/john.smith%40example.com/orders")
        handed = gateway.extractor.extract(mail)
        assert handed.personal() and pool.submit(mail).result(120)[0].six.categories == handed.categories
        handed.categories = {**handed.categories, "health": 1}  # not in the request: only the hand-off has it
        decision, _ = pool.submit(mail, handed).result(120)
        assert decision.six.categories == handed.categories

        # killed while it evaluates a large body: that request fails by rule, the pool goes on with a new worker
        old = pool.pids()[0]
        slow = RawRequest(method="POST", url="https://api.example-crm.com/v1/notes",
                          headers=[("content-type", "text/plain")],
                          body=(" ".join(f"Maria Garcia met Peter Brown in Springfield on day {i}." for i in range(1500))
                                ).encode())
        fut = pool.submit(slow)
        time.sleep(1.0)
        os.kill(old, signal.SIGKILL)
        with pytest.raises(WorkerDied):
            fut.result(60)
        decision, _ = pool.submit(PERSONAL).result(180)  # waits for the replacement to load its models
        assert decision.action == here.action and pool.pids()[0] not in (None, old)

        # killed while idle: the next request is not failed, it waits for (or goes to) a live worker
        os.kill(pool.pids()[0], signal.SIGKILL)
        time.sleep(0.5)
        decision, _ = pool.submit(PERSONAL).result(180)
        assert decision.action == here.action
    finally:
        pool.close()
    assert all(not s.proc.is_alive() for s in pool.slots)


def _workers_of(pid: int) -> list[int]:
    """The evaluation worker processes under `pid` (spawned children running multiprocessing's spawn_main)."""
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
            cmd = (d / "cmdline").read_bytes()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid and b"spawn_main" in cmd:
            out.append(int(d.name))
    return sorted(out)


@pytest.mark.slow
def test_sigkill_of_a_worker_under_load_loses_and_repeats_no_decision_line(tmp_path):
    from tests.support.proxy_process import start_proxy
    from tests.support.upstream import start_upstream

    up = start_upstream()
    px = start_proxy(tmp_path, up.port, extra=["--workers", "2"])
    answered: dict[str, int] = {}
    lock = threading.Lock()
    stop = threading.Event()

    def load(t: int) -> None:
        with httpx.Client(proxy=px.url, timeout=60) as c:
            k = 0
            while not stop.is_set():
                k += 1
                path = f"/v1/contacts/t{t}-{k}"
                r = c.post(f"http://support.zendesk.com{path}", json={
                    "text": f"Please call John Smith back at john.smith.{t}.{k}@example.com"})
                with lock:
                    answered[path] = r.status_code

    try:
        workers = _workers_of(px.proc.pid)
        assert len(workers) == 2, workers
        threads = [threading.Thread(target=load, args=(t,)) for t in range(4)]
        for th in threads:
            th.start()
        deadline = time.time() + 60
        while len(answered) < 20 and time.time() < deadline:
            time.sleep(0.05)
        os.kill(workers[0], signal.SIGKILL)
        n_kill = len(answered)
        while len(answered) < n_kill + 30 and time.time() < deadline + 60:  # it keeps serving meanwhile
            time.sleep(0.05)
        stop.set()
        for th in threads:
            th.join(60)
        assert len(answered) >= n_kill + 30, px.output.read_text()[-2000:]
        # the replacement comes up and the proxy still decides with two workers
        deadline = time.time() + 120
        while time.time() < deadline and "replaced" not in px.output.read_text():
            time.sleep(0.5)
        assert "replaced" in px.output.read_text()
        now = _workers_of(px.proc.pid)
        assert len(now) == 2 and workers[0] not in now
        r = httpx.post("http://support.zendesk.com/v1/contacts/after", proxy=px.url, timeout=120,
                       json={"text": "Please call John Smith back at late@example.com"})
        assert r.status_code == 200
    finally:
        stop.set()
        px.stop()
        up.close()
    lines = [x for x in px.log_lines() if x["host"] == "support.zendesk.com"]
    assert len({x["id"] for x in lines}) == len(lines)
    assert len(lines) == len(answered) + 1, "a decision line was lost or written twice"  # + the request after
    paths = [x["path"] for x in lines if x["path"].startswith("/v1/contacts/")]
    assert len(paths) == len(set(paths)), "a decision line was written twice"
    # the request the killed worker held is logged with its rule; its path only to the first segment (a request
    # whose extraction died with the worker was not inspected: the log never spells out what it did not read)
    failed = [x for x in lines if (x.get("rule") or "").startswith("worker-error")]
    missing = [p for p in answered if p not in set(paths)]
    assert len(failed) <= 1 and len(missing) == len(failed), (failed, missing)
    assert all(x["path"] == "/v1/…" for x in failed)
    assert all(answered[p] == 403 for p in missing)
