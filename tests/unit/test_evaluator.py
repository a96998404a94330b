"""The evaluator (guardian_proxy/evaluator.py): where a request is evaluated (inline, thread, worker), its deadline,
its fail rule and its one decision line. Driven with a fake gateway (its methods as the Gateway has them, the real
fail rules and decision log) and, for the hand-off of the event loop's extraction, with the real Gateway."""

from __future__ import annotations

import asyncio
import json
import threading
import time

import pytest

from guardian_proxy.config import load_factor_tables, load_settings
from guardian_proxy.decision_log import DecisionLog, read
from guardian_proxy.evaluator import BIG_BODY_BYTES, Evaluator, Ticket, is_big, write_line
from guardian_proxy.failure import FailureRules
from guardian_proxy.types import Action, Decision, RawRequest
from guardian_proxy.workers import WorkerDied

CARD_TO_ADS = RawRequest(method="POST", url="http://ads.doubleclick.net/collect", body=b'{"pan": "4111111111111111"}',
                         headers=[("content-type", "application/json")])
PLAIN_GET = RawRequest(method="GET", url="http://www.example.org/")
MAIL_IN_PATH = RawRequest(method="GET", url="http://www.example.org/u/jane%40example.com")


def card_action() -> Action:
    return Action(domain="doubleclick.net", host="ads.doubleclick.net", categories={"financial": 1})


def contact_action() -> Action:
    return Action(domain="example.org", host="www.example.org", categories={"contact": 1})


def allow(raw: RawRequest, **kw) -> Decision:
    return Decision(action="allow", six=Action(domain="x.example", host=raw.host), explanation="ok", **kw)


class Gate:
    """The gateway's side as the evaluator calls it: `evaluate_inline` (the event loop), `evaluate` (a thread),
    `failures`, `decision_log`, `agents`, `settings`. `inline(raw, ticket)` and `decide(raw, ticket)` say what
    they do; each call is recorded with the thread it ran on."""

    def __init__(self, tmp_path, inline=None, decide=None, timeout_s: float = 5.0):
        self.settings = load_settings(state_dir=tmp_path, limits={"eval_timeout_s": timeout_s})
        self.decision_log = DecisionLog(tmp_path / "decisions.jsonl")
        self.failures = FailureRules(load_factor_tables())
        self.agents = None
        self.inline = inline or (lambda raw, ticket: None)
        self.decide = decide or (lambda raw, ticket: allow(raw))
        self.calls: list[tuple[str, str, dict]] = []

    def evaluate_inline(self, raw, ticket=None):
        self.calls.append(("inline", threading.current_thread().name, {}))
        return self.inline(raw, ticket)

    def evaluate(self, raw, context=None, likelihood=None, log=True, ticket=None):
        self.calls.append(("evaluate", threading.current_thread().name, {"log": log}))
        return self.decide(raw, ticket)

    def lines(self) -> list[dict]:
        return list(read(self.decision_log.path)) if self.decision_log.path.exists() else []


def run(ev: Evaluator, raw: RawRequest, **kw) -> Decision:
    return asyncio.run(ev.evaluate(raw, **kw))


def test_the_big_body_rule_is_one_size():
    assert not is_big(RawRequest(method="POST", url="http://a.example/", body=b"x" * BIG_BODY_BYTES))
    assert is_big(RawRequest(method="POST", url="http://a.example/", body=b"x" * (BIG_BODY_BYTES + 1)))


def test_deadline_comes_from_the_settings_unless_given(tmp_path):
    assert Evaluator(Gate(tmp_path, timeout_s=7.5)).timeout_s == 7.5
    assert Evaluator(Gate(tmp_path, timeout_s=7.5), timeout_s=0.5).timeout_s == 0.5
    ev = Evaluator()  # a proxy loaded by mitmproxy: the gateway comes later
    assert ev.gateway is None and ev.timeout_s == 60.0
    ev.attach(Gate(tmp_path, timeout_s=3.0))
    assert ev.timeout_s == 3.0


def test_inline_decision_is_made_on_the_event_loop_and_logged_once(tmp_path):
    g = Gate(tmp_path, inline=lambda raw, t: allow(raw))
    ev = Evaluator(g)
    d = run(ev, PLAIN_GET, inline=True)
    assert [c[0] for c in g.calls] == ["inline"] and g.calls[0][1] == "MainThread"
    assert [x["id"] for x in g.lines()] == [d.id]
    ev.close()


def test_a_thread_decides_without_logging_and_the_evaluator_writes_the_line(tmp_path):
    g = Gate(tmp_path)
    ev = Evaluator(g)
    small = run(ev, CARD_TO_ADS, inline=True)  # a body: the fast path declines, a thread decides
    big = run(ev, RawRequest(method="POST", url="http://a.example/", body=b"x" * (BIG_BODY_BYTES + 1)))
    kinds = [(c[0], c[1].rsplit("_", 1)[0], c[2].get("log")) for c in g.calls]
    assert kinds == [("inline", "MainThread", None), ("evaluate", "guardian", False), ("evaluate", "guardian-big", False)]
    assert [x["id"] for x in g.lines()] == [small.id, big.id]
    ev.close()


def test_the_log_rule_may_be_a_predicate_and_a_fail_rule_decision_is_always_logged(tmp_path):
    def decide(raw, ticket):
        if raw.body == b"boom":
            raise RuntimeError("a bug outside the stages")
        return allow(raw)

    g = Gate(tmp_path, decide=decide)
    ev = Evaluator(g)
    assert run(ev, PLAIN_GET, log=False).action == "allow"
    assert run(ev, PLAIN_GET, log=lambda d: d.action != "allow").action == "allow"
    kept = run(ev, PLAIN_GET, log=lambda d: d.action == "allow")
    failed = run(ev, RawRequest(method="POST", url="http://a.example/", body=b"boom"), log=False)
    assert failed.action == "deny" and failed.rule == "decide-error-fail-closed"  # a body: tier unknown → closed
    assert [x["id"] for x in g.lines()] == [kept.id, failed.id]
    ev.close()


def test_deadline_takes_the_tier_extracted_by_then_and_a_late_answer_is_never_logged(tmp_path):
    finished = threading.Event()

    def slow(raw, ticket):  # extraction finishes, a later stage hangs past the deadline
        ticket.action = card_action() if raw is CARD_TO_ADS else None
        time.sleep(0.6)
        finished.set()
        return allow(raw)

    g = Gate(tmp_path, decide=slow, timeout_s=0.1)
    ev = Evaluator(g)
    d = run(ev, CARD_TO_ADS)
    assert d.action == "deny" and d.rule == "deadline-error-fail-closed" and d.extra["fail_tier"] == "critical"
    assert finished.wait(5)
    finished.clear()
    unknown = run(ev, RawRequest(method="POST", url="http://a.example/", body=b"{}"))  # not extracted: unknown tier
    assert unknown.action == "deny" and unknown.extra["fail_tier"] == "critical"
    ev.pool.shutdown(wait=True)  # the late answers have come back by now
    assert [(x["id"], x["rule"]) for x in g.lines()] == [(d.id, "deadline-error-fail-closed"),
                                                         (unknown.id, "deadline-error-fail-closed")]


class Processes:
    """A worker pool's `submit_async` as the evaluator calls it (on the event loop): records what it was handed,
    answers with `answer`."""

    def __init__(self, answer):
        self.answer = answer
        self.handed: list[tuple[RawRequest, Action | None]] = []
        self.closed = False

    def submit_async(self, raw, action=None) -> asyncio.Future:
        self.handed.append((raw, action))
        fut = asyncio.get_running_loop().create_future()
        result = self.answer(raw, action)
        if isinstance(result, BaseException):
            fut.set_exception(result)
        elif result is not None:
            fut.set_result(result)
        return fut  # None: never answers

    def close(self):
        self.closed = True


def test_a_worker_gets_the_action_the_event_loop_extracted(tmp_path):
    extracted = contact_action()

    def inline(raw, ticket):
        if raw is MAIL_IN_PATH:  # personal data in the path: not decided inline, its extraction kept
            ticket.action = extracted
        return None

    g = Gate(tmp_path, inline=inline)
    procs = Processes(lambda raw, action: (allow(raw), None))
    ev = Evaluator(g, processes=procs)
    d = run(ev, MAIL_IN_PATH, inline=True)
    assert procs.handed == [(MAIL_IN_PATH, extracted)]
    assert [c[0] for c in g.calls] == ["inline"]  # no thread evaluates in worker mode
    run(ev, CARD_TO_ADS, inline=True)
    assert procs.handed[1] == (CARD_TO_ADS, None)  # nothing extracted on the event loop: the worker extracts
    assert len(g.lines()) == 2 and g.lines()[0]["id"] == d.id
    ev.close()
    assert procs.closed


def test_the_agent_guards_handoff_from_a_worker_is_kept_in_this_process(tmp_path):
    kept_here = {}

    class Agents:
        def keep(self, decision_id, kept):
            kept_here[decision_id] = kept

    g = Gate(tmp_path)
    g.agents = Agents()
    ev = Evaluator(g, processes=Processes(lambda raw, action: (allow(raw), {"tools": ["x"]})))
    d = run(ev, CARD_TO_ADS)
    assert kept_here == {d.id: {"tools": ["x"]}}


def test_a_worker_that_dies_or_never_answers_gets_the_fail_rules_logged(tmp_path):
    g = Gate(tmp_path, timeout_s=0.05)
    ev = Evaluator(g, processes=Processes(lambda raw, action: WorkerDied("worker 0 exited (code -9)")))
    died = run(ev, CARD_TO_ADS)
    assert died.action == "deny" and died.rule == "worker-error-fail-closed"
    got = run(ev, PLAIN_GET)  # no body, no query, no cookie: the least sensitive tier's mode (open)
    assert got.action == "allow" and got.rule == "worker-error-fail-open"
    ev.processes = Processes(lambda raw, action: None)  # a worker that never answers: the deadline
    late = run(ev, CARD_TO_ADS)
    assert late.action == "deny" and late.rule == "deadline-error-fail-closed"
    assert [x["rule"] for x in g.lines()] == ["worker-error-fail-closed", "worker-error-fail-open",
                                              "deadline-error-fail-closed"]


def test_one_line_per_ticket_and_a_log_write_error_blocks_a_closed_tier(tmp_path):
    g = Gate(tmp_path)
    t = Ticket()
    d = Decision(action="allow", six=card_action(), explanation="ok")
    assert write_line(g, CARD_TO_ADS, d, t) is d
    assert write_line(g, CARD_TO_ADS, d, t) is d  # claimed: not logged again
    assert len(g.lines()) == 1

    class Broken:
        path = tmp_path / "never.jsonl"

        def write(self, rec):
            raise OSError("disk full")

    g.decision_log = Broken()
    blocked = write_line(g, CARD_TO_ADS, Decision(action="allow", six=card_action(), explanation="ok"))
    assert blocked.action == "deny" and blocked.rule == "log-error-fail-closed"
    assert write_line(object(), CARD_TO_ADS, d) is d  # a gateway without a log (a test's fake): nothing written


# ---------------------------------------------------------------------- the real Gateway (models: slow)


@pytest.mark.slow
def test_the_real_gateway_extracts_once_from_the_event_loop_to_the_thread(gateway, tmp_path):
    from guardian_proxy.pipeline import Gateway

    calls = []

    class Counting:
        def __init__(self, inner):
            self.inner = inner

        def extract(self, req):
            calls.append(req.url)
            return self.inner.extract(req)

        def __getattr__(self, name):
            return getattr(self.inner, name)

    g = Gateway(gateway.settings, gateway.tables, Counting(gateway.extractor), gateway.evidence, gateway.likelihood,
                gateway.transformer, decision_log=DecisionLog(tmp_path / "decisions.jsonl"))
    ev = Evaluator(g)
    mail = RawRequest(method="GET", url="http://tracker.example-ads.net/u/jane.doe%40example.com/p")
    d = run(ev, mail, inline=True)
    assert calls == [mail.url]  # extracted on the event loop; the thread went on from that extraction
    assert d.six.personal() and d.action in ("deny", "transform")
    plain = run(ev, PLAIN_GET, inline=True)
    assert plain.action == "allow" and calls[-1] == PLAIN_GET.url and len(calls) == 2
    lines = list(read(g.decision_log.path))
    assert [x["id"] for x in lines] == [d.id, plain.id]
    assert "jane" not in json.dumps(lines)
    ev.close()
