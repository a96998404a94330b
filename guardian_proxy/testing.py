"""Fakes for driving the mitm edge's hooks in-process (as mitmproxy's own `taddons` and `tflow` do for addons).

    from mitmproxy.test import taddons, tflow
    from guardian_proxy.mitm.hooks import GuardianAddon
    from guardian_proxy.testing import FakeGateway, decision, run_hook

    gw = FakeGateway(decision("deny"))
    with taddons.context():
        f = tflow.tflow()
        run_hook(GuardianAddon(gw), "request", f)
        assert f.response.status_code == 403 and gw.seen[0].method == "GET"

No mitmproxy import here (mitm/ is the only package that imports it): the flows come from mitmproxy's `tflow`.
"""

from __future__ import annotations

import asyncio
import inspect

from .types import Action, Decision, RawRequest


class FakeGateway:
    """A gateway that decides every request the same (`decision`), records what it was asked (`seen`) and has no
    event-loop fast path (`evaluate_inline` is None: every request goes through `evaluate`, off the event loop).
    A stage that fails is decided by the evaluator's own fail rules (guardian_proxy/failure.py), not here."""

    def __init__(self, decision: Decision):
        self.decision = decision
        self.seen: list[RawRequest] = []

    def evaluate_inline(self, raw: RawRequest, ticket=None) -> Decision | None:
        return None  # no event-loop fast path: every request goes through `evaluate`

    def evaluate(self, raw: RawRequest, **kw) -> Decision:
        self.seen.append(raw)
        return self.decision


def decision(kind: str = "allow", host: str = "example.com", explanation: str = "because", **kw) -> Decision:
    """A decision of `kind` (allow, transform, deny) for `host`, with an explanation; `kw` as `Decision` takes it."""
    return Decision(action=kind, six=Action(domain=host, host=host), explanation=explanation, **kw)


def run_hook(addon, hook: str, *args):
    """Call one of `addon`'s hooks as mitmproxy would, to its end (an async hook on an event loop of its own)."""
    out = getattr(addon, hook)(*args)
    return asyncio.run(out) if inspect.iscoroutine(out) else out
