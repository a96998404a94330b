"""Fail rules: what happens to a request when a stage cannot do its job.

Every tier in the factor tables has `fail_mode: closed|open` (defaults: closed for the critical tier
— credentials, financial, health, government IDs — open for the others). A failure never becomes an
exception in the proxy; it becomes a decision with a stated, logged rule:

| failure                                   | stage                   | outcome                                  |
|-------------------------------------------|-------------------------|------------------------------------------|
| detector / model / body-walker exception  | extract                 | tier unknown → the unknown-tier rule     |
| policy store error                        | evidence                | the tier's fail mode                     |
| likelihood model error, LLM timeout       | likelihood              | the tier's fail mode                     |
| risk table lookup error                   | risk                    | the tier's fail mode                     |
| rewrite error                             | transform               | the tier's fail mode                     |
| evaluation past `limits.eval_timeout_s`   | deadline (evaluator)    | the tier's fail mode, unknown-tier rule  |
|                                           |                         | when extraction had not finished         |
| evaluation worker process died or hung    | worker (evaluator)      | the unknown-tier rule (the worker's      |
|                                           |                         | extraction is lost with it)              |
| decision log write error                  | log                     | closed tier: allow/transform become deny |
|                                           |                         | open tier: the decision stands           |
| conversation session / vault error        | session                 | blocked whatever the tier (a chat that   |
|                                           |                         | cannot be pseudonymised does not leave)  |

closed → the request is blocked (403, `rule: <stage>-error-fail-closed`); open → it leaves unchanged
(`rule: <stage>-error-fail-open`). The tier is the one of the most sensitive category found.

Unknown-tier rule (extraction failed, or a deadline hit before it finished): a request that carries
a body or a query string gets the fail mode of the most sensitive tier (closed by default: it could
hold anything); one whose only carrier is the Cookie header gets the tier of the `cookie` category
(open by default); one that carries nothing gets the least sensitive tier's mode.

A log write failure cannot be recorded in the log itself: the proxy keeps running and prints a
warning (at most one per failure kind every 10 s) with the decision id, never the request's values.
Exception messages are never logged (they can quote the input); only the type and the code location.
Upstream failures (refused, reset, timeout, TLS) are not decided here: mitmproxy answers the client
as it always does (502) and the addon prints one warning line per failed flow.
"""

from __future__ import annotations

import logging
import threading
import time
import traceback
from collections import Counter
from urllib.parse import urlsplit

from .config import FactorTables
from .domains import registrable_domain
from .types import Action, Decision, RawRequest

log = logging.getLogger("guardian_proxy")

STAGE_WORDS = {
    "extract": "personal-data detection",
    "evidence": "the policy store",
    "likelihood": "the likelihood model",
    "risk": "risk scoring",
    "decide": "the decision step",
    "transform": "the rewrite",
    "session": "the conversation session",
    "deadline": "evaluation (deadline passed)",
    "worker": "the evaluation worker process",
    "log": "the decision log",
}
WARN_EVERY_S = 10.0
#: stages whose failure blocks the request whatever the tier's fail mode (the pipeline applies the rule
#: after `decision`, e.g. SessionStage.fail_closed): the warning states the block, never "→ allow"
BLOCKED_WHATEVER_THE_TIER = {"session": "a chat that cannot be pseudonymised is blocked by rule"}


class StageFailed(Exception):
    """A stage raised; `stage` names it and `__cause__` holds the original exception."""

    def __init__(self, stage: str, cause: BaseException):
        super().__init__(f"{stage} failed: {type(cause).__name__}")
        self.stage = stage
        self.cause = cause


def run_stage(name: str, fn, *args, **kwargs):
    """Call one stage; any exception becomes `StageFailed(name)` (an inner StageFailed passes through)."""
    try:
        return fn(*args, **kwargs)
    except StageFailed:
        raise
    except Exception as e:
        raise StageFailed(name, e) from e


def where(exc: BaseException) -> str:
    """`file.py:123` of the innermost frame: enough to find the bug, never the message (it may quote input)."""
    tb = traceback.extract_tb(exc.__traceback__) if exc.__traceback__ else []
    if not tb:
        return "?"
    f = tb[-1]
    return f"{f.filename.rsplit('/', 1)[-1]}:{f.lineno}"


class FailureRules:
    def __init__(self, tables: FactorTables):
        self.tables = tables
        ranked = sorted(tables.tiers, key=lambda k: tables.tiers[k].rank)
        self.lowest, self.highest = ranked[0], ranked[-1]
        self.counts: Counter[str] = Counter()  # "<stage>:<ExcType>" → occurrences since start
        self._last_warn: dict[str, float] = {}
        self._lock = threading.Lock()

    # ---------------------------------------------------------------- tiers

    def mode(self, tier: str) -> str:
        t = self.tables.tiers.get(tier)
        return t.fail_mode if t is not None else self.tables.tiers[self.highest].fail_mode

    def tier_of(self, action: Action | None) -> str | None:
        """The tier of the most sensitive category found, None when nothing personal was found."""
        if action is None:
            return None
        cats = [c for c, n in action.categories.items() if n > 0 and c in self.tables.sensitivity]
        if not cats:
            return None
        return max((self.tables.sensitivity[c].tier for c in cats), key=lambda k: self.tables.tiers[k].rank)

    def unknown_tier(self, req: RawRequest) -> str:
        if req.body or urlsplit(req.url).query:
            return self.highest
        if req.header("cookie"):
            cf = self.tables.sensitivity.get("cookie")
            return cf.tier if cf else self.highest
        return self.lowest

    # ---------------------------------------------------------------- decisions

    def decision(self, req: RawRequest, stage: str, exc: BaseException | None, action: Action | None = None) -> Decision:
        """The decision for a request whose evaluation failed in `stage` (after extraction when `action`)."""
        tier = self.tier_of(action) if action is not None else None
        if action is None or (tier is None and stage in ("extract", "deadline", "worker")):
            tier = self.unknown_tier(req)
            basis = "tier unknown"
        else:
            tier = tier or self.lowest
            basis = f"{tier} tier"
        mode = self.mode(tier)
        # the program that sent it goes with the fail decision too: a JSON 403 names it (R-BLOCK-ANSWER)
        six = action if action is not None else Action(domain=registrable_domain(req.host), host=req.host,
                                                       app=req.app)
        six.flags = [*six.flags, f"error:{stage}"]
        kind = "deny" if mode == "closed" else "allow"
        what = type(exc).__name__ if exc is not None else "timeout"
        rule = BLOCKED_WHATEVER_THE_TIER.get(stage)
        self.report(stage, exc, f"{req.method} {req.host} → deny ({rule}; {basis}, fail_mode {mode})" if rule
                    else f"{req.method} {req.host} → {kind} ({basis}, fail_mode {mode})")
        return Decision(
            action=kind, six=six, rule=f"{stage}-error-fail-{mode}",
            explanation=f"{STAGE_WORDS.get(stage, stage)} failed ({what}); {basis} fails {mode}: "
                        f"{'blocked' if kind == 'deny' else 'passed unchanged'} by rule",
            extra={"fail_stage": stage, "fail_tier": tier, "fail_mode": mode},
        )

    def raised(self, req: RawRequest, exc: BaseException, action: Action | None = None) -> Decision:
        """The decision for an evaluation that raised outside a stage (a worker that died: its `stage` is
        "worker"; a bug: "decide") or passed its deadline (TimeoutError: "deadline"), after extraction when
        `action`."""
        stage = "deadline" if isinstance(exc, TimeoutError) else getattr(exc, "stage", "decide")
        return self.decision(req, stage, None if stage == "deadline" else getattr(exc, "cause", exc), action)

    def after_log_error(self, req: RawRequest, d: Decision, exc: BaseException) -> Decision:
        """The decision log could not be written: a closed-tier release becomes a block."""
        if d.action == "deny":
            tier = None
        elif d.risk is not None:
            tier = d.risk.tier
        elif d.extra.get("fail_tier"):
            tier = d.extra["fail_tier"]
        elif d.six.unreadable():
            tier = self.unknown_tier(req)  # not inspected: could hold anything
        else:
            tier = self.tier_of(d.six)
        mode = self.mode(tier) if tier else "open"
        self.report("log", exc, f"decision {d.id} ({d.action}) not logged; "
                                f"{'blocked' if mode == 'closed' else 'kept'} ({tier or 'no personal data'})")
        if mode != "closed":
            return d
        return d.model_copy(update={
            "action": "deny", "rewrite": None, "rule": "log-error-fail-closed",
            "explanation": f"the decision log could not be written ({type(exc).__name__}); {tier} tier fails "
                           f"closed: blocked by rule (was: {d.action})",
            "extra": {**d.extra, "fail_stage": "log", "fail_tier": tier, "fail_mode": mode},
        })

    # ---------------------------------------------------------------- reporting

    def report(self, stage: str, exc: BaseException | None, what: str) -> None:
        key = f"{stage}:{type(exc).__name__ if exc is not None else 'Timeout'}"
        now = time.monotonic()
        with self._lock:
            self.counts[key] += 1
            n = self.counts[key]
            last = self._last_warn.get(key)
            if last is not None and now - last < WARN_EVERY_S:
                return
            self._last_warn[key] = now
        loc = f" at {where(exc)}" if exc is not None else ""
        log.warning("guardian: %s failed%s%s (%d so far): %s", STAGE_WORDS.get(stage, stage),
                    f" with {type(exc).__name__}" if exc is not None else "", loc, n, what)
