"""The evaluator: where a request is evaluated, its deadline, its fail rule and its one decision line.

    Evaluator.evaluate(raw, inline=…, log=…)
      1 inline    the event loop's fast path (`Gateway.evaluate_inline`): a request whose only text is its URL path
                  is extracted there; with nothing personal in it, it is decided there (tens of µs)
      2 worker    else a worker process (guardian_proxy/workers.py) gets the request and what the fast path
                  extracted already (never extracted twice) …
        thread    … or, without workers, a thread of this process; bodies above BIG_BODY_BYTES are evaluated apart
                  (their own thread pool; not by the last worker), so a few 100 KB free-text bodies (seconds of
                  NER each) never hold up the small requests
      3 fail rule past `limits.eval_timeout_s`, when a worker dies, or on a bug outside the stages: the fail rules
                  (guardian_proxy/failure.py) with the tier of what was extracted by then (the `Ticket`), else the
                  unknown-tier rule; an answer that comes after the deadline is dropped
      4 the line  the request's one decision line (`write_line`), written here, on the event loop, for every route:
                  what is logged is the decision that is applied (a worker that dies can neither lose nor repeat a
                  line); a fail-rule decision is always logged

`Gateway.evaluate` stays the synchronous in-process entry (the CLI, benchmarks, a worker): the stages, and with
`log=True` the same `write_line`. Nothing here imports mitmproxy: the request hooks (guardian_proxy/mitm) call
`Evaluator.evaluate`.
"""

from __future__ import annotations

import asyncio
import functools
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from .decision_log import record
from .types import Action, Decision, RawRequest

#: bodies above this many bytes are evaluated apart from the small ones (the big-body rule, one place)
BIG_BODY_BYTES = 16 * 1024
#: the deadline when no settings say it (`limits.eval_timeout_s`)
DEFAULT_TIMEOUT_S = 60.0

#: whether a decision gets its line: always, never (the caller's own choice), or as a predicate of the decision
LogRule = bool | Callable[[Decision], bool]


def is_big(req) -> bool:
    """The big-body rule: evaluated on the big-body thread pool, and not by the last worker process."""
    return len(req.body) > BIG_BODY_BYTES


class Ticket:
    """One request's evaluation as the evaluator and the thread or worker deciding it share it: how far extraction
    got (`action`: the fail rules at the deadline take its tier, and a worker goes on from it instead of extracting
    again), and `claim()`, which lets exactly one decision line be written for it."""

    def __init__(self, action: Action | None = None):
        self.action: Action | None = action
        self._claimed = False
        self._lock = threading.Lock()

    def claim(self) -> bool:
        with self._lock:
            if self._claimed:
                return False
            self._claimed = True
            return True


def write_line(gateway, req: RawRequest, decision: Decision, ticket: Ticket | None = None) -> Decision:
    """Append the decision's line to the gateway's decision log: the one place a line is written. Once per request
    (a `ticket` already claimed is not logged again); a write error never propagates (closed tiers turn it into a
    block). What is logged is what was done: after a write error the final decision (the block, with its rule) is
    the one handed to the log, written once the log can be written again.

    The log's `feed` (guardian_proxy/state/decisions.py; None for the local back end) is handed each record the
    log was handed, the deferred final one included: queued there, never waited for."""
    dlog = getattr(gateway, "decision_log", None)  # None: no log (warm-up, a test's gateway)
    if dlog is None or (ticket is not None and not ticket.claim()):
        return decision
    try:
        rec = record(req, decision)
        dlog.write(rec)
    except Exception as e:
        rec = None
        decision = gateway.failures.after_log_error(req, decision, e)
        defer = getattr(dlog, "defer", None)
        if defer is not None:
            try:
                rec = record(req, decision)
                defer(rec)
            except Exception:  # never propagates (after_log_error has warned already)
                rec = None
    feed = getattr(dlog, "feed", None)
    if feed is not None and rec is not None:
        feed.publish(rec)
    return decision


class Evaluator:
    """Decides each request through a gateway (guardian_proxy.pipeline.Gateway, or a fake with its methods):
    inline, in a worker process (`processes`: a started guardian_proxy.workers.WorkerPool) or in a thread; within the
    deadline, else by the fail rules; with its one line. `gateway` may be None until `attach` (a proxy loaded by
    mitmproxy builds it after start-up); the thread pools exist from the start."""

    def __init__(self, gateway=None, processes=None, threads: int | None = None, timeout_s: float | None = None):
        self.gateway = None
        self.processes = None
        self.timeout_s = DEFAULT_TIMEOUT_S if timeout_s is None else timeout_s
        n = threads or max(2, os.cpu_count() or 2)
        # two pools sized to the cores: large bodies (seconds of NER and rewriting for 100 KB of text) never
        # occupy the threads that small requests need, so a few slow requests cannot stall the rest
        self.pool = ThreadPoolExecutor(max_workers=n, thread_name_prefix="guardian")
        self.big_pool = ThreadPoolExecutor(max_workers=n, thread_name_prefix="guardian-big")
        if gateway is not None:
            self.attach(gateway, processes, timeout_s)

    def attach(self, gateway, processes=None, timeout_s: float | None = None) -> None:
        """The gateway (and worker pool) to evaluate with; the deadline is `timeout_s`, else the settings'."""
        self.gateway, self.processes = gateway, processes
        settings = getattr(gateway, "settings", None)
        if timeout_s is not None:
            self.timeout_s = timeout_s
        elif settings is not None:
            self.timeout_s = settings.limits.eval_timeout_s

    async def evaluate(self, raw: RawRequest, inline: bool = False, log: LogRule = True) -> Decision:
        """The decision for a request (or one WebSocket or raw-stream message), applied as returned. With `inline`,
        a request with no body, query, cookie or free-text header is tried on the event loop first. `log`: whether
        it gets its line (a predicate: on the decision); a fail-rule decision always does."""
        gw = self.gateway
        ticket = Ticket()
        try:
            decision = gw.evaluate_inline(raw, ticket) if inline else None
            if decision is None and self.processes is not None:
                fut = self.processes.submit_async(raw, ticket.action)  # its pipe is read on this loop
                decision, kept = await asyncio.wait_for(fut, self.timeout_s)
                if kept is not None and gw.agents is not None:  # the reply's guard needs it in this process
                    gw.agents.keep(decision.id, kept)
            elif decision is None:
                pool = self.big_pool if is_big(raw) else self.pool
                fut = asyncio.get_running_loop().run_in_executor(
                    pool, functools.partial(gw.evaluate, raw, ticket=ticket, log=False))
                decision = await asyncio.wait_for(fut, self.timeout_s)
        except Exception as e:  # the deadline (TimeoutError), a worker that died, a bug outside the stages
            decision = self.fail_rule(raw, e, ticket)
        if "fail_stage" in decision.extra or (log(decision) if callable(log) else log):
            decision = write_line(gw, raw, decision, ticket)
        return decision

    def fail_rule(self, raw: RawRequest, exc: BaseException, ticket: Ticket | None = None) -> Decision:
        """The fail rules' decision (not logged) for an evaluation that raised outside a stage (a worker that died:
        its `stage` is "worker") or passed its deadline (TimeoutError): the tier of what `ticket` says was
        extracted by then, else the unknown-tier rule."""
        return self.gateway.failures.raised(raw, exc, ticket.action if ticket is not None else None)

    def close(self) -> None:
        """Stop the thread pools (queued evaluations are cancelled) and the worker processes."""
        self.pool.shutdown(wait=False, cancel_futures=True)
        self.big_pool.shutdown(wait=False, cancel_futures=True)
        if self.processes is not None:
            self.processes.close()
