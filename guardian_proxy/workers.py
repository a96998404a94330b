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

Workers are spawned, not forked: fork after the models load is unsafe (torch's and OpenMP's thread pools, locks held
by other threads) and `forkserver` makes them children of a server process, not of the proxy (`ps --ppid`). What
each one loads is trimmed instead: no transformers (guardian_proxy/extract/ner.py), and the proxy process itself
loads no torch (Gateway.from_settings(models=False)).

A worker that dies (killed, out of memory, a crash in a native library) is replaced; the request it held is decided
by the fail rules (`rule: worker-error-fail-…`), never lost; the requests still queued go to the other workers. A
worker still busy `hard_limit_s` after its deadline (a runaway model or pattern) is killed and replaced the same way.
"""

from __future__ import annotations

import gc
import itertools
import logging
import math
import multiprocessing
import os
import select
import signal
import threading
import time
from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass, field

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
            conn.send((job, decision, kept))
        except (EOFError, OSError, BrokenPipeError):
            break
        except BaseException as e:  # a decision that cannot be sent back: the proxy applies the fail rules
            try:
                conn.send((job, None, type(e).__name__))
            except (EOFError, OSError):
                break


# ---------------------------------------------------------------------- the proxy's side


@dataclass
class _Job:
    raw: object
    big: bool
    action: object = None  # what the proxy's event loop extracted already (guardian_proxy.types.Action) or None
    future: Future = field(default_factory=Future)
    id: int = 0


class _Slot:
    """One worker process and the thread of the proxy that feeds it (a blocking pipe: no event-loop work)."""

    def __init__(self, pool: WorkerPool, index: int, big_ok: bool):
        self.pool, self.index, self.big_ok = pool, index, big_ok
        self.proc = None
        self.conn = None
        self._poll = None  # select.poll on the pipe and the process sentinel (spawn)
        self.pid: int | None = None
        self.busy_since: float | None = None
        self.thread = threading.Thread(target=self._drive, name=f"guardian-worker-{index}", daemon=True)

    # -- process

    def spawn(self) -> None:
        ctx = multiprocessing.get_context("spawn")
        parent, child = ctx.Pipe()
        self.proc = ctx.Process(target=_serve, args=(self.pool.settings, child), name=f"guardian-worker-{self.index}",
                                daemon=True)
        self.proc.start()
        child.close()
        self.conn = parent
        self._watch()

    def _watch(self) -> None:
        """One poll set on this worker's pipe and process sentinel for its life (not a selector built per request,
        as multiprocessing's `wait` does); none where the platform has no poll."""
        self._poll = None
        if hasattr(select, "poll"):
            self._poll = select.poll()
            self._poll.register(self.conn.fileno(), select.POLLIN)
            self._poll.register(self.proc.sentinel, select.POLLIN)

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

    def replace(self) -> None:
        """A fresh worker after one died; retried every 5 s until one starts (meanwhile the others serve)."""
        self.kill()
        self.pid = None
        while not self.pool.closed:
            try:
                self.spawn()
                self.wait_ready(START_TIMEOUT_S)
                log.warning("guardian-proxy: evaluation worker %d replaced (pid %s)", self.index, self.pid)
                return
            except GuardianError as e:
                log.warning("guardian-proxy: %s; trying again in 5 s", e)
                time.sleep(5)

    # -- feeding it

    def _drive(self) -> None:
        while True:
            job = self.pool.take(self.big_ok)
            if job is None:
                return
            if job.future.cancelled():
                continue  # its deadline passed while it waited: the fail rules decided it already
            try:
                self.conn.send((job.id, job.raw, job.action))
                sent = self.proc.is_alive()
            except (OSError, EOFError):
                sent = False
            if not sent:  # it had died idle: the request goes back to the queue for another worker
                self.pool.requeue(job)
                log.warning("guardian-proxy: evaluation worker %d exited (code %s) while idle", self.index,
                            self.proc.exitcode)
                self.replace()
                continue
            wanted = job.future.set_running_or_notify_cancel()  # False: cancelled meanwhile; its answer is dropped
            self.busy_since = time.monotonic()
            try:
                answer = self._answer(job)
            except WorkerDied as died:
                log.warning("guardian-proxy: %s; its request gets the fail rules", died)
                if wanted:
                    job.future.set_exception(died)
                self.busy_since = None
                self.replace()
                continue
            self.busy_since = None
            if not wanted:
                continue
            _, decision, extra = answer
            if decision is None:
                job.future.set_exception(WorkerDied(f"worker {self.index} could not send its decision ({extra})"))
            else:
                job.future.set_result((decision, extra))

    def _ready(self, timeout: float) -> list:
        """Which of the pipe and the process sentinel are ready within `timeout` s (multiprocessing's `wait`, on
        the worker's own poll set where there is one)."""
        if self._poll is None:
            from multiprocessing.connection import wait

            return wait([self.conn, self.proc.sentinel], timeout)
        fds = {fd for fd, _ in self._poll.poll(max(0, math.ceil(timeout * 1000)))}
        return [x for x, fd in ((self.conn, self.conn.fileno()), (self.proc.sentinel, self.proc.sentinel)) if fd in fds]

    def _answer(self, job: _Job):
        """The worker's answer to `job`; WorkerDied when it exits first or is still busy past the hard limit."""
        limit = self.pool.hard_limit_s
        deadline = time.monotonic() + limit
        while True:
            ready = self._ready(max(0.0, deadline - time.monotonic()))
            if self.conn in ready:
                try:
                    answer = self.conn.recv()
                except (EOFError, OSError):
                    raise WorkerDied(f"worker {self.index} exited (code {self.proc.exitcode})") from None
                if answer[0] == job.id:
                    return answer
                continue  # the answer to an earlier job whose wait was cut short: not this one's
            if ready:  # only the process sentinel: it died
                raise WorkerDied(f"worker {self.index} exited (code {self.proc.exitcode})")
            raise WorkerDied(f"worker {self.index} was still busy {limit:.0f} s after it got the request; killed")


class WorkerPool:
    """N worker processes deciding requests. `submit(raw, action)` → a Future of (Decision, the agent guard's
    handoff)."""

    def __init__(self, settings, n: int | None = None, hard_limit_s: float | None = None):
        self.settings = settings
        self.n = n or default_count()
        self.hard_limit_s = hard_limit_s or settings.limits.eval_timeout_s * 2 + 10
        self.closed = False
        self._jobs: deque[_Job] = deque()
        self._cv = threading.Condition()
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
        for s in self.slots:
            s.thread.start()
        return self

    def pids(self) -> list[int | None]:
        return [s.pid for s in self.slots]

    def submit(self, raw, action=None) -> Future:
        """Queue `raw` for the next free worker; `action`: its extraction, done already (the event loop's fast
        path), which the worker goes on from."""
        job = _Job(raw, is_big(raw), action, id=next(self._ids))
        with self._cv:
            if self.closed:
                raise RuntimeError("the worker pool is closed")
            self._jobs.append(job)
            self._cv.notify_all()
        return job.future

    def requeue(self, job: _Job) -> None:
        """A job that never reached a worker (it had died) goes back to the head of the queue."""
        with self._cv:
            if self.closed:
                job.future.cancel()
                return
            self._jobs.appendleft(job)
            self._cv.notify_all()

    def take(self, big_ok: bool) -> _Job | None:
        """The oldest job this worker may take (blocks); None once the pool closes."""
        with self._cv:
            while True:
                if self.closed:
                    return None
                for i, job in enumerate(self._jobs):
                    if big_ok or not job.big:
                        del self._jobs[i]
                        return job
                self._cv.wait()

    def close(self) -> None:
        """Stop feeding the workers and end them (they exit when their pipe closes; killed after 2 s)."""
        with self._cv:
            self.closed = True
            pending = list(self._jobs)
            self._jobs.clear()
            self._cv.notify_all()
        for job in pending:
            if job.future.set_running_or_notify_cancel():
                job.future.set_exception(WorkerDied("the proxy is shutting down"))
        for s in self.slots:
            if s.proc is not None and s.proc.is_alive():
                s.proc.terminate()
        deadline = time.monotonic() + 2
        for s in self.slots:
            if s.proc is not None:
                s.proc.join(max(0.0, deadline - time.monotonic()))
            s.kill()


def pool_for(settings) -> WorkerPool | None:
    """The launched (not yet ready) pool `settings.workers` asks for: None = one worker per core, 0 = no pool
    (evaluation in the proxy process's threads)."""
    n = settings.workers if settings.workers is not None else default_count()
    if not n:
        return None
    return WorkerPool(settings, n).launch()
