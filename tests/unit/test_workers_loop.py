"""The proxy's side of the worker pool on the event loop (guardian_proxy/workers.py): the pipe's framing is
multiprocessing's own, an answer reaches the request's future on the loop, a body larger than the pipe's buffer
goes without blocking the loop, and a worker that dies or overruns the hard limit fails its request (the fail
rules) and is replaced. The worker here is a thread at the other end of a real pipe."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import threading
from types import SimpleNamespace

import pytest

from guardian_proxy.config import load_settings
from guardian_proxy.workers import WorkerDied, WorkerPool, _Slot, frame, unframe


def test_frames_are_what_a_multiprocessing_connection_reads_and_writes():
    parent, child = multiprocessing.Pipe()
    try:
        os.write(parent.fileno(), frame((7, "raw", None)))
        assert child.recv() == (7, "raw", None)
        child.send((7, {"decision": "x" * 70_000}, None))
        child.send((8, None, "PicklingError"))
        buf = bytearray()
        while len(buf) < 70_000:
            buf += os.read(parent.fileno(), 1 << 20)
        head, rest = buf[:5], buf[5:]
        part = bytearray(head)
        assert unframe(part) == [] and part == head  # not complete: kept
        part += rest
        while True:
            got = unframe(part)
            if len(got) == 2 or not part:
                break
            part += os.read(parent.fileno(), 1 << 20)
        assert got == [(7, {"decision": "x" * 70_000}, None), (8, None, "PicklingError")] and part == bytearray()
    finally:
        parent.close()
        child.close()


class FakeWorker:
    """The worker's end of a real pipe, served by a thread; `answer(job, raw, action)` returns what it sends back,
    or None: it exits instead (its pipe and its process sentinel close)."""

    def __init__(self, answer):
        self.parent, self.child = multiprocessing.Pipe()
        self.sentinel, self._alive = os.pipe()  # readable (EOF) once the "process" is gone
        self.answer = answer
        self.killed = threading.Event()
        self.proc = SimpleNamespace(sentinel=self.sentinel, exitcode=None, is_alive=lambda: not self.killed.is_set(),
                                    kill=self.killed.set, join=lambda t=None: None, terminate=self.killed.set)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while True:
            try:
                job, raw, action = self.child.recv()
            except (EOFError, OSError):
                return
            out = self.answer(job, raw, action)
            if out is None:
                self.exit()
                return
            self.child.send(out)

    def exit(self):
        self.child.close()
        os.close(self._alive)

    def slot_of(self, pool: WorkerPool) -> _Slot:
        slot = pool.slots[0]
        slot.proc, slot.conn, slot.pid = self.proc, self.parent, 4242
        return slot


@pytest.fixture
def pool(tmp_path, monkeypatch):
    replaced = threading.Event()
    monkeypatch.setattr(_Slot, "_replace", lambda self: replaced.set())
    p = WorkerPool(load_settings(state_dir=tmp_path / "state", dashboard_port=0), 1)
    p.replaced = replaced
    yield p
    p.closed = True


def test_an_answer_reaches_the_future_on_the_loop_and_a_big_body_never_blocks_it(pool):
    worker = FakeWorker(lambda job, raw, action: (job, {"len": len(raw.body), "action": action}, (), {"kept": 1}))
    worker.slot_of(pool)
    big = SimpleNamespace(body=b"x" * (8 << 20))  # far more than the pipe's buffer

    async def go():
        ticks = 0

        async def ticker():
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0)

        t = asyncio.create_task(ticker())
        small = await pool.submit_async(SimpleNamespace(body=b"y"), "extracted")
        assert small == ({"len": 1, "action": "extracted"}, {"kept": 1})
        before = ticks
        got = await pool.submit_async(big)
        t.cancel()
        return got, ticks - before

    (decision, kept), ticks = asyncio.run(go())
    assert decision["len"] == 8 << 20 and kept == {"kept": 1}
    assert ticks > 1  # the loop ran other work while the body went through the pipe
    worker.exit()


def test_a_worker_that_dies_fails_its_request_and_is_replaced(pool):
    worker = FakeWorker(lambda job, raw, action: None)  # exits on its first request
    slot = worker.slot_of(pool)

    async def go():
        with pytest.raises(WorkerDied, match="exited"):
            await pool.submit_async(SimpleNamespace(body=b"y"))
        queued = pool.submit_async(SimpleNamespace(body=b"z"))  # waits for the replacement
        await asyncio.sleep(0.05)
        assert not queued.done() and len(pool._jobs) == 1
        queued.cancel()

    asyncio.run(go())
    assert pool.replaced.wait(5) and not slot.watched and slot.job is None


def test_a_worker_past_the_hard_limit_is_killed_and_its_request_fails(pool):
    gate = threading.Event()
    worker = FakeWorker(lambda job, raw, action: gate.wait(10) and None)  # busy until killed
    pool.hard_limit_s = 0.1
    worker.slot_of(pool)

    async def go():
        with pytest.raises(WorkerDied, match="still busy"):
            await pool.submit_async(SimpleNamespace(body=b"y"))

    asyncio.run(go())
    assert worker.killed.is_set() and pool.replaced.wait(5)
    gate.set()  # the thread "exits" now


def test_a_pool_used_from_threads_runs_its_own_loop_and_closing_fails_what_waits(pool):
    worker = FakeWorker(lambda job, raw, action: (job, "decided", (), None))
    worker.slot_of(pool)
    assert pool.submit(SimpleNamespace(body=b"y")).result(5) == ("decided", None)
    pool.slots[0].job = None
    pool.slots[0].unwatch = lambda: None  # keep it busy-looking: the next request waits in the queue
    pool.slots[0].watched = False
    waiting = pool.submit(SimpleNamespace(body=b"z"))
    pool.close()
    with pytest.raises(WorkerDied, match="shutting down"):
        waiting.result(5)
    assert worker.killed.is_set()
