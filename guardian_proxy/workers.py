"""Evaluation in worker processes (`workers: N`, default one per core): the stages run off mitmproxy's process and
its GIL, so a machine's every core decides requests.

    mitmproxy process                                  worker process ×N (spawned; each loads its models once)
      Evaluator.evaluate ── RawRequest (+ the Action ──pipe──▶  Gateway.evaluate(raw, log=False), going on from
                            the event loop extracted)             that Action instead of extracting again
      the line, apply    ◀──pipe── Decision (+ what the reply needs: the agent guard's guidance)

The mitmproxy process's evaluator (guardian_proxy/evaluator.py) keeps the decision log (one writer: a worker that
dies can neither lose nor repeat a line), the deadline and the fail rules, exactly as with threads: past
`limits.eval_timeout_s` the request gets its tier's fail mode and a late answer is dropped. State the workers share (sessions, overrides, policies, split values) lives
in the state store (guardian_proxy/state), never in one process's memory.

Scheduling: one queue, first come first served; big bodies (`evaluator.is_big`) are taken only by the first N−1 workers,
so one worker is always free for small requests (a 90 KB free-text body takes seconds of NER; a small personal POST
takes milliseconds and must not wait behind it). With N = 1 everything shares the one worker.

The proxy's event loop reads and writes the workers' pipes itself (`loop.add_reader`, non-blocking writes): no
thread between the request and its worker, so no wake-up of one and no hand-back to the loop per request (0.25-0.3 ms
of the proxy process's CPU per request that leaves the fast path; scripts/profile_request.py --pool 8).

Workers are spawned, not forked: fork after the models load is unsafe (torch's and OpenMP's thread pools, locks held
by other threads) and `forkserver` makes them children of a server process, not of the proxy (`ps --ppid`). What
each one loads is trimmed instead: no transformers (guardian_proxy/extract/ner.py), and the proxy process itself
loads no torch (Gateway.from_settings(models=False)).

A worker that dies (killed, out of memory, a crash in a native library) is replaced; the request it held is decided
by the fail rules (`rule: worker-error-fail-…`), never lost; the requests still queued go to the other workers. A
worker still busy `hard_limit_s` after its deadline (a runaway model or pattern) is killed and replaced the same way.
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import logging
import multiprocessing
import os
import pickle
import signal
import struct
import threading
import time
from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass
from multiprocessing.reduction import ForkingPickler

from .errors import GuardianError
from .evaluator import Ticket, is_big

log = logging.getLogger("guardian_proxy")

#: seconds a worker may take to load its models and answer that it is ready
START_TIMEOUT_S = 300.0


class WorkerDied(Exception):
    """The worker evaluating a request exited before answering (the request gets the fail rules)."""

    stage = "worker"

    def __init__(self, why: str):
        super().__init__(why)
        self.cause = self


#: what one worker costs (RSS after warm-up: spaCy, Presidio without transformers, the shipped models in numpy,
#: no torch: ~235 MB, PSS ~205 MB; scripts/profile_memory.py), with room for the growth under traffic (a 90 KB
#: free-text rewrite adds tens of MB), for the default count
WORKER_MB = 300


def _available_mb() -> float | None:
    try:
        for line in open("/proc/meminfo", encoding="ascii"):
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (ValueError, OSError, AttributeError):
        return None


def default_count() -> int:
    """One worker per core this process may run on, but no more than fit in a quarter of the memory available
    now (a laptop with 16 cores and 16 GB gets 6 workers, not 16 × 600 MB); at least one."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    avail = _available_mb()
    fit = int(avail / 4 // WORKER_MB) if avail else cores
    return max(1, min(cores, fit))


# ---------------------------------------------------------------------- the process's heap

#: objects allocated (net) between two collections of the youngest generation, in a process that serves requests
#: (CPython's default is 700): a request's objects mostly die with it, freed by their reference counts, so a rarer
#: young collection finds about the same few live objects and scans them fewer times
GC_YOUNG = 10_000


def settle_heap() -> None:
    """Once a serving process has loaded what it keeps for its life (models, tables, mitmproxy's addons), before it
    serves: collect, then move every object it holds into the collector's permanent generation (`gc.freeze`), and
    collect the young generation every GC_YOUNG allocations instead of 700. Nothing is kept alive that would not be
    (reference counting still frees a frozen object; only its cycles, none at start-up after the collection, would
    stay): the collector no longer walks the hundreds of thousands of start-up objects (spaCy's vocabulary, the
    recipient tables: ~0.1 s a full collection in a worker) again and again while requests come."""
    gc.collect()
    gc.freeze()
    young, middle, old = gc.get_threshold()
    if young and young < GC_YOUNG:  # 0: the collector is off (the embedding program's choice)
        gc.set_threshold(GC_YOUNG, middle, old)


# ---------------------------------------------------------------------- the worker process


def _serve(settings, conn) -> None:
    """A worker's life: build the gateway (its own models and stores), say ready, then answer requests until the
    pipe closes (the proxy exited or closed the pool). Never logs a value: the console mask is on its handlers."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the proxy's to handle: it closes the pipes
    from .proctitle import name_worker, worker_index

    name_worker((worker_index(multiprocessing.current_process().name) or 0) + 1)  # `guardian wkr 1` in ps
    logging.basicConfig(level=logging.WARNING, format="guardian-proxy worker %(process)d: %(message)s")
    logging.getLogger("presidio-analyzer").setLevel(logging.ERROR)
    from .logmask import mask_handlers

    mask_handlers()
    try:
        from .pipeline import Gateway

        gateway = Gateway.from_settings(settings, with_log=False)
        gateway.warm_up()
        settle_heap()
    except BaseException as e:  # the proxy reports it in one line and does not start
        conn.send(("failed", f"{type(e).__name__}: {e}" if isinstance(e, GuardianError) else type(e).__name__))
        return
    conn.send(("ready", os.getpid()))
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            break
        if msg is None:
            break
        job, raw, action = msg
        try:
            decision = gateway.evaluate(raw, log=False, ticket=Ticket(action))  # from the proxy's extraction, if any
            decision.six._parsed = None  # the parsed body stays here: the proxy has the wire bytes
            kept = gateway.agents.handoff(decision.id) if gateway.agents is not None else None
            conn.send((job, *to_wire(decision), kept))
        except (EOFError, OSError, BrokenPipeError):
            break
        except BaseException as e:  # a decision that cannot be sent back: the proxy applies the fail rules
            try:
                conn.send((job, None, (), type(e).__name__))
            except (EOFError, OSError):
                break


# ---------------------------------------------------------------------- the decision on the pipe


def to_wire(decision) -> tuple:
    """(the decision without its evidence statements, those statements as (score, fields) pairs): the same
    information, but a pydantic model costs its unpickler a Python `__setstate__` call, and a deny carries its policy
    evidence (a statement and its score: two models, ~27 µs each to unpickle in the proxy process; a deny's 8 took
    0.21 ms of its 0.26 ms, 4.7 of its 6.8 KB). `from_wire` builds them again from their fields."""
    ev = getattr(decision, "evidence", None)
    if ev is None or not ev.statements:
        return decision, ()
    slim = decision.model_copy(update={"evidence": ev.model_copy(update={"statements": []})})
    return slim, tuple((s.score, s.statement.__dict__) for s in ev.statements)


def from_wire(decision, statements):
    """The decision `to_wire` split, whole again (its statements rebuilt by their constructors: ~5 µs each)."""
    if statements:
        from .types import ScoredStatement, Statement

        decision.evidence.statements = [ScoredStatement(statement=Statement(**fields), score=score)
                                        for score, fields in statements]
    return decision


# ---------------------------------------------------------------------- the proxy's side

_HEAD = struct.Struct("!i")  # multiprocessing.Connection's framing: a signed length, -1 then "!Q" for > 2 GiB
_HUGE = struct.Struct("!Q")
READ_CHUNK = 64 * 1024  # below malloc's mmap threshold: a bigger read buffer costs an mmap and munmap per read (20 µs)


def frame(obj) -> bytes:
    """`obj` as `Connection.send` writes it (pickled by multiprocessing's pickler, length first): the worker's
    `conn.recv()` reads it."""
    body = ForkingPickler.dumps(obj)
    n = len(body)
    head = _HEAD.pack(n) if n <= 0x7FFFFFFF else _HEAD.pack(-1) + _HUGE.pack(n)
    return b"".join((head, body))


def unframe(buf: bytearray) -> list:
    """The whole messages at the start of `buf` (as `Connection.send` wrote them), unpickled; what they took is
    removed from `buf`, a message not yet complete stays."""
    out, at = [], 0
    while len(buf) - at >= _HEAD.size:
        (n,) = _HEAD.unpack_from(buf, at)
        head = _HEAD.size
        if n == -1:
            if len(buf) - at < head + _HUGE.size:
                break
            (n,) = _HUGE.unpack_from(buf, at + head)
            head += _HUGE.size
        if len(buf) - at < head + n:
            break
        out.append(pickle.loads(buf[at + head:at + head + n]))
        at += head + n
    if at:
        del buf[:at]
    return out


@dataclass
class _Job:
    raw: object
    big: bool
    action: object = None  # what the proxy's event loop extracted already (guardian_proxy.types.Action) or None
    future: asyncio.Future | None = None  # on the pool's event loop: (Decision, the agent guard's handoff)
    id: int = 0


class _Slot:
    """One worker process. Its pipe and its process sentinel are watched by the pool's event loop
    (`loop.add_reader`): the answer is read, unpickled and handed to the request's future there, with no thread
    between (no wake-up of a feeding thread, no `call_soon_threadsafe` back). Writes never block the loop: what the
    pipe does not take at once is written when it is writable again. A job at a time."""

    def __init__(self, pool: WorkerPool, index: int, big_ok: bool):
        self.pool, self.index, self.big_ok = pool, index, big_ok
        self.proc = None
        self.conn = None
        self.pid: int | None = None
        self.busy_since: float | None = None
        self.job: _Job | None = None
        self.watched = False  # its pipe and sentinel are on the pool's loop
        self._fd: int | None = None
        self._buf = bytearray()
        self._out: memoryview | None = None  # the part of a job's frame the pipe has not taken yet
        self._timer: asyncio.TimerHandle | None = None

    # -- process (blocking: before the loop, or in a replacement thread)

    def spawn(self) -> None:
        ctx = multiprocessing.get_context("spawn")
        parent, child = ctx.Pipe()
        self.proc = ctx.Process(target=_serve, args=(self.pool.settings, child), name=f"guardian-worker-{self.index}",
                                daemon=True)
        self.proc.start()
        child.close()
        self.conn = parent

    def wait_ready(self, timeout: float) -> None:
        """Raises GuardianError when the worker failed to start or did not answer in time."""
        from multiprocessing.connection import wait

        ready = wait([self.conn, self.proc.sentinel], timeout)
        if self.conn in ready:
            try:
                msg = self.conn.recv()
            except (EOFError, OSError):
                msg = ("failed", f"exited with {self.proc.exitcode}")
            if msg[0] == "ready":
                self.pid = msg[1]
                return
            self.kill()
            raise GuardianError(f"evaluation worker {self.index} could not start: {msg[1]}")
        self.kill()
        if ready:
            raise GuardianError(f"evaluation worker {self.index} exited while loading its models "
                                f"(exit code {self.proc.exitcode})")
        raise GuardianError(f"evaluation worker {self.index} did not load its models in {timeout:.0f} s")

    def kill(self) -> None:
        if self.proc is not None and self.proc.is_alive():
            self.proc.kill()
        if self.proc is not None:
            self.proc.join(5)
        if self.conn is not None:
            self.conn.close()

    def _replace(self) -> None:
        """A fresh worker after one died (in a thread of its own: loading takes seconds); retried every 5 s until
        one starts (meanwhile the others serve); then watched by the loop, which hands it the queue's next job."""
        self.kill()
        self.pid = None
        while not self.pool.closed:
            try:
                self.spawn()
                self.wait_ready(START_TIMEOUT_S)
            except GuardianError as e:
                log.warning("guardian-proxy: %s; trying again in 5 s", e)
                time.sleep(5)
                continue
            log.warning("guardian-proxy: evaluation worker %d replaced (pid %s)", self.index, self.pid)
            try:
                self.pool.loop.call_soon_threadsafe(self._resume)
            except RuntimeError:  # the loop is closed: the pool is going away
                self.kill()
            return

    def _resume(self) -> None:
        if self.pool.closed:
            self.kill()
            return
        self.watch()
        self.pool._dispatch()

    # -- on the pool's loop

    def watch(self) -> None:
        """Put the pipe (non-blocking from now on) and the process sentinel on the pool's loop."""
        if self.watched or self.proc is None or self.conn is None or self.conn.closed:
            return
        loop = self.pool.loop
        self._fd = self.conn.fileno()
        os.set_blocking(self._fd, False)
        self._buf.clear()
        self._out = None
        loop.add_reader(self._fd, self._readable)
        loop.add_reader(self.proc.sentinel, self._exited)
        self.watched = True

    def unwatch(self) -> None:
        if not self.watched:
            return
        self.watched = False
        loop = self.pool.loop
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if loop.is_closed():
            return
        loop.remove_reader(self._fd)
        loop.remove_writer(self._fd)
        loop.remove_reader(self.proc.sentinel)

    def idle(self) -> bool:
        return self.watched and self.job is None

    def send(self, job: _Job) -> None:
        self.job, self.busy_since = job, time.monotonic()
        self._timer = self.pool.loop.call_later(self.pool.hard_limit_s, self._overdue)
        data = frame((job.id, job.raw, job.action))
        try:
            n = os.write(self._fd, data)
        except BlockingIOError:
            n = 0
        except OSError:  # it had died idle: the request goes back to the queue for another worker
            self.job = None
            self.pool._requeue(job)
            self._gone(f"evaluation worker {self.index} exited (code {self.proc.exitcode}) while idle", idle=True)
            return
        if n < len(data):
            self._out = memoryview(data)[n:]
            self.pool.loop.add_writer(self._fd, self._writable)

    def _writable(self) -> None:
        try:
            n = os.write(self._fd, self._out)
        except BlockingIOError:
            return
        except OSError:  # the pipe broke: the sentinel or EOF says why
            n = len(self._out)
        self._out = self._out[n:] if n < len(self._out) else None
        if self._out is None:
            self.pool.loop.remove_writer(self._fd)

    def _readable(self) -> None:
        try:
            data = os.read(self._fd, READ_CHUNK)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._gone(f"worker {self.index} exited (code {self.proc.exitcode})")
            return
        self._buf += data
        for answer in unframe(self._buf):
            self._answered(answer)

    def _answered(self, answer) -> None:
        job = self.job
        if job is None or answer[0] != job.id:
            return  # not the job in flight (never expected: one job at a time)
        self.job, self.busy_since = None, None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        _, decision, statements, extra = answer  # to_wire's (decision, statements) between the job and its extra
        if not job.future.done():  # done: cancelled at its deadline, the fail rules decided it; dropped
            if decision is None:
                job.future.set_exception(WorkerDied(f"worker {self.index} could not send its decision ({extra})"))
            else:
                job.future.set_result((from_wire(decision, statements), extra))
        self.pool._dispatch()

    def _exited(self) -> None:
        self._gone(f"worker {self.index} exited (code {self.proc.exitcode})")

    def _overdue(self) -> None:
        self._timer = None
        if self.proc is not None and self.proc.is_alive():
            self.proc.kill()
        self._gone(f"worker {self.index} was still busy {self.pool.hard_limit_s:.0f} s after it got the request; "
                   "killed")

    def _gone(self, why: str, idle: bool = False) -> None:
        """The worker exited (or was killed): its request gets the fail rules, a replacement is started."""
        if not self.watched:
            return
        self.unwatch()
        job, self.job, self.busy_since = self.job, None, None
        if idle or job is None:
            log.warning("guardian-proxy: %s", why if idle else f"evaluation {why} while idle")
        else:
            log.warning("guardian-proxy: %s; its request gets the fail rules", why)
            if not job.future.done():
                job.future.set_exception(WorkerDied(why))
        if not self.pool.closed:
            threading.Thread(target=self._replace, name=f"guardian-worker-{self.index}-start", daemon=True).start()


def _copy(done: asyncio.Future, out: Future) -> None:
    """An asyncio future's outcome onto a concurrent one (WorkerPool.submit)."""
    if out.done():
        return
    if done.cancelled():
        out.cancel()
    elif done.exception() is not None:
        out.set_exception(done.exception())
    else:
        out.set_result(done.result())


class WorkerPool:
    """N worker processes deciding requests, driven by one event loop: `submit_async(raw, action)` on that loop (the
    proxy's), or `submit(raw, action)` from any other thread (a concurrent Future; a pool used only that way runs
    a loop of its own in a thread). Either gives (Decision, the agent guard's handoff)."""

    def __init__(self, settings, n: int | None = None, hard_limit_s: float | None = None):
        self.settings = settings
        self.n = n or default_count()
        self.hard_limit_s = hard_limit_s or settings.limits.eval_timeout_s * 2 + 10
        self.closed = False
        self.loop: asyncio.AbstractEventLoop | None = None  # the loop that reads the pipes, bound at first use
        self._own: threading.Thread | None = None  # the thread running the pool's own loop, if it has one
        self._jobs: deque[_Job] = deque()  # touched on the loop only
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self.slots = [_Slot(self, i, big_ok=self.n == 1 or i < self.n - 1) for i in range(self.n)]

    def launch(self) -> WorkerPool:
        """Spawn every worker; they load their models in parallel (meanwhile the proxy builds its own gateway)."""
        for s in self.slots:
            if s.proc is None:
                s.spawn()
        return self

    def start(self, timeout: float = START_TIMEOUT_S) -> WorkerPool:
        """Wait for every worker (launched first if not yet) to be ready; GuardianError if one cannot start."""
        self.launch()
        try:
            for s in self.slots:
                s.wait_ready(timeout)
        except GuardianError:
            self.close()
            raise
        return self

    def pids(self) -> list[int | None]:
        return [s.pid for s in self.slots]

    # -- submitting

    def submit_async(self, raw, action=None) -> asyncio.Future:
        """On the running event loop (the first one to call binds the pool to it): a future of `raw`'s
        (Decision, handoff); `action`: its extraction, done already (the event loop's fast path), which the worker
        goes on from. Cancelling it (the deadline) drops the answer."""
        loop = asyncio.get_running_loop()
        if self.loop is not loop:
            with self._lock:
                if self.loop is None or self.loop.is_closed():
                    self._bind(loop)
            if self.loop is not loop:  # bound to another loop (running in another thread)
                return asyncio.wrap_future(self.submit(raw, action))
        return self._queue(raw, action).future

    def submit(self, raw, action=None) -> Future:
        """From a thread that is not the pool's loop's: a concurrent Future of (Decision, handoff)."""
        if self.closed:
            raise RuntimeError("the worker pool is closed")
        with self._lock:
            if self.loop is None or self.loop.is_closed():
                self._run_own_loop()
            loop = self.loop
        out: Future = Future()

        def queue() -> None:  # on the loop
            if self.closed:  # closed between this call and the loop's turn: as a job queued then
                out.set_exception(WorkerDied("the proxy is shutting down"))
                return
            job = self._queue(raw, action)
            job.future.add_done_callback(lambda f: _copy(f, out))
            out.add_done_callback(lambda f: f.cancelled() and loop.call_soon_threadsafe(job.future.cancel))

        loop.call_soon_threadsafe(queue)
        return out

    def _run_own_loop(self) -> None:
        loop = asyncio.new_event_loop()
        self._own = threading.Thread(target=loop.run_forever, name="guardian-workers-loop", daemon=True)
        self._own.start()
        self.loop = loop
        loop.call_soon_threadsafe(self._bind, loop)

    def _bind(self, loop) -> None:
        """The pipes of the workers started so far go on `loop` (called on it). After a loop that was closed (a
        script's `asyncio.run` after another): what waited there is dropped (nobody can await it any more), an answer
        still due is read and dropped, and a worker that was handed half a request is killed (replaced)."""
        self.loop = loop
        self._jobs.clear()
        for s in self.slots:
            if s.watched:
                s.watched, s._timer, s.job, s.busy_since = False, None, None, None
                if s._out is not None and s.proc is not None:
                    s.proc.kill()  # the sentinel says so on the new loop: replaced
        if not self.closed:
            for s in self.slots:
                if s.pid is not None:
                    s.watch()

    def _queue(self, raw, action) -> _Job:
        if self.closed:
            raise RuntimeError("the worker pool is closed")
        job = _Job(raw, is_big(raw), action, self.loop.create_future(), next(self._ids))
        self._jobs.append(job)
        self._dispatch()
        return job

    def _requeue(self, job: _Job) -> None:
        """A job that never reached a worker (it had died) goes back to the head of the queue."""
        self._jobs.appendleft(job)

    def _take(self, big_ok: bool) -> _Job | None:
        """The oldest job a worker may take (a big body only if `big_ok`); jobs cancelled while queued (their
        deadline passed: the fail rules decided them) are dropped."""
        for i, job in enumerate(self._jobs):
            if job.future.done():
                continue
            if big_ok or not job.big:
                del self._jobs[i]
                return job
        while self._jobs and self._jobs[0].future.done():
            self._jobs.popleft()
        return None

    def _dispatch(self) -> None:
        """Each idle worker gets the oldest job it may take."""
        if not self._jobs or self.closed:
            return
        for s in self.slots:
            if s.idle():
                job = self._take(s.big_ok)
                if job is not None:
                    s.send(job)
                if not self._jobs:
                    return

    # -- closing

    def close(self) -> None:
        """Fail what is queued or in flight, stop the loop's watching and end the workers (they exit when their pipe
        closes; killed after 2 s). From any thread."""
        with self._lock:
            self.closed = True
            loop = self.loop
        if loop is not None and not loop.is_closed():
            try:
                here = asyncio.get_running_loop() is loop
            except RuntimeError:
                here = False
            if here or not loop.is_running():
                self._shut()
            else:
                done = threading.Event()

                def shut() -> None:
                    try:
                        self._shut()
                    finally:
                        done.set()

                loop.call_soon_threadsafe(shut)
                done.wait(5)
        for s in self.slots:
            if s.proc is not None and s.proc.is_alive():
                s.proc.terminate()
        deadline = time.monotonic() + 2
        for s in self.slots:
            if s.proc is not None:
                s.proc.join(max(0.0, deadline - time.monotonic()))
            s.kill()
        if self._own is not None and loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(loop.stop)
            self._own.join(5)
            if not loop.is_running():
                loop.close()

    def _shut(self) -> None:
        """On the loop: every job queued or in flight fails (WorkerDied), the pipes leave the loop."""
        gone = WorkerDied("the proxy is shutting down")
        pending = list(self._jobs)
        self._jobs.clear()
        for s in self.slots:
            if s.job is not None:
                pending.append(s.job)
                s.job = None
            s.unwatch()
        for job in pending:
            if not job.future.done():
                try:
                    job.future.set_exception(gone)
                except RuntimeError:  # its loop is closed: nobody waits for it
                    pass


def pool_for(settings) -> WorkerPool | None:
    """The launched (not yet ready) pool `settings.workers` asks for: None = one worker per core, 0 = no pool
    (evaluation in the proxy process's threads)."""
    n = settings.workers if settings.workers is not None else default_count()
    if not n:
        return None
    return WorkerPool(settings, n).launch()
