"""Fail rules per tier (guardian_proxy/failure.py): stage exceptions, LLM timeouts, policy store errors,
log write errors and the evaluation deadline become stated, logged decisions, never exceptions."""

import asyncio
import json
import logging
import os
import time
from pathlib import Path

import httpx
import pytest

from guardian_proxy.config import load_factor_tables
from guardian_proxy.decision_log import DecisionLog
from guardian_proxy.errors import BackendError, PolicyError
from guardian_proxy.evaluator import Evaluator, Ticket
from guardian_proxy.failure import FailureRules, StageFailed, run_stage
from guardian_proxy.pipeline import Gateway
from guardian_proxy.types import Action, RawRequest

CARD = "4111 1111 1111 1111"
CANARY = "Quillon Vexmarrow"


def post(url, body, **headers):
    h = [("content-type", "application/json")] + list(headers.items())
    return RawRequest(method="POST", url=url, headers=h, body=json.dumps(body).encode())


CARD_TO_ADS = post("http://ads.doubleclick.net/collect", {"pan": CARD})  # critical tier
CONTACT_TO_SP = post("http://support.zendesk.com/api/tickets",  # sensitive tier → transform normally
                     {"text": "Please call John Smith back at john.smith@example.com"},
                     **{"user-agent": "Dalvik/2.1.0 (Linux; U; Android 14; Pixel 8)"})  # an app's SDK (from curl: the user's own addressee)
CARD_FIRST_PARTY = post("http://shop.example.com/checkout", {"pan": CARD},  # critical tier → transform normally
                        origin="http://shop.example.com", **{"sec-fetch-user": "?1"})
PLAIN_GET = RawRequest(method="GET", url="http://www.example.org/")


class Hangs:
    """A stage that answers as `inner` does, `seconds` late (past an evaluation deadline)."""

    def __init__(self, inner, seconds: float):
        self.inner, self.seconds = inner, seconds

    def _late(self, name, *a, **kw):
        time.sleep(self.seconds)
        return getattr(self.inner, name)(*a, **kw)

    def extract(self, *a, **kw):
        return self._late("extract", *a, **kw)

    def estimate(self, *a, **kw):
        return self._late("estimate", *a, **kw)

    def __getattr__(self, name):
        return getattr(self.inner, name)


class Raises:
    def __init__(self, exc):
        self.exc = exc
        self.calls = 0

    def _raise(self, *a, **kw):
        self.calls += 1
        raise self.exc

    retrieve = estimate = transform = extract = _raise


def make(gateway, tmp_path, tables=None, decision_log=None, **stages):
    """A Gateway with the real stages of the session fixture, some replaced by failing ones."""
    parts = dict(extractor=gateway.extractor, evidence=gateway.evidence, likelihood=gateway.likelihood,
                 transformer=gateway.transformer)
    parts.update(stages)
    log = decision_log or DecisionLog(tmp_path / "decisions.jsonl")
    return Gateway(gateway.settings, tables or gateway.tables, decision_log=log, **parts)


def transform_l(gateway, req) -> float:
    """A likelihood that puts `req` in its tier's transform band with the current factor tables."""
    for lk in (0.5, 0.3, 0.7, 0.2, 0.9, 0.15, 1.0, 0.1, 0.05):
        if gateway.evaluate(req, likelihood=lk, log=False).action == "transform":
            return lk
    pytest.skip("no likelihood puts this request in the transform band")


def lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()]


# ------------------------------------------------------------------ rules without models


def test_default_fail_modes_per_tier():
    rules = FailureRules(load_factor_tables())
    assert rules.mode("critical") == "closed"
    assert rules.mode("sensitive") == "open" and rules.mode("standard") == "open"
    for cat in ("credentials", "financial", "health", "government_id"):
        assert rules.mode(rules.tables.sensitivity[cat].tier) == "closed", cat


def test_unknown_tier_rule():
    rules = FailureRules(load_factor_tables())
    assert rules.unknown_tier(CARD_TO_ADS) == "critical"  # a body could hold anything
    assert rules.unknown_tier(RawRequest(method="GET", url="http://a.example/?q=1")) == "critical"
    assert rules.unknown_tier(RawRequest(method="GET", url="http://a.example/", headers=[("cookie", "a=b")])) \
        == "standard"  # the cookie category's tier
    assert rules.unknown_tier(PLAIN_GET) == "standard"


def test_run_stage_names_the_stage_and_keeps_the_cause():
    with pytest.raises(StageFailed) as e:
        run_stage("evidence", Raises(PolicyError("store gone"))._raise)
    assert e.value.stage == "evidence" and isinstance(e.value.cause, PolicyError)
    inner = StageFailed("likelihood", BackendError("x"))
    with pytest.raises(StageFailed) as e:
        run_stage("decide", Raises(inner)._raise)
    assert e.value.stage == "likelihood"  # the innermost stage is reported


def test_ticket_is_claimed_once():
    t = Ticket()
    assert t.claim() and not t.claim() and not t.claim()


def test_warnings_are_rate_limited_and_never_quote_the_message(caplog):
    rules = FailureRules(load_factor_tables())
    exc = ValueError(f"bad input near {CANARY}")
    with caplog.at_level(logging.WARNING, logger="guardian_proxy"):
        for _ in range(20):
            rules.decision(CARD_TO_ADS, "extract", exc)
    assert rules.counts["extract:ValueError"] == 20
    assert len(caplog.records) == 1
    assert CANARY not in caplog.text and "ValueError" in caplog.text


# ------------------------------------------------------------------ the real gateway with one failing stage

slow = pytest.mark.slow


@slow
@pytest.mark.parametrize("stage,exc", [
    ("evidence", PolicyError("policy store unreadable")),
    ("likelihood", BackendError("LLM timed out after 20 s")),
    ("likelihood", TimeoutError()),
    ("likelihood", RuntimeError("CUDA out of memory")),
])
def test_stage_failure_follows_the_tier(gateway, tmp_path, stage, exc):
    g = make(gateway, tmp_path, **{stage: Raises(exc)})
    d = g.evaluate(CARD_TO_ADS)
    assert d.action == "deny" and d.rule == f"{stage}-error-fail-closed"
    d2 = g.evaluate(CONTACT_TO_SP)
    assert d2.action == "allow" and d2.rule == f"{stage}-error-fail-open" and d2.rewrite is None
    logged = lines(g.decision_log.path)
    assert [x["rule"] for x in logged] == [d.rule, d2.rule]
    assert logged[0]["fail_tier"] == "critical" and logged[1]["fail_tier"] == "sensitive"
    assert logged[0]["categories"].get("financial") == 1  # extraction worked: the log still says what was there
    assert f"error:{stage}" in logged[0]["flags"]


@slow
def test_transform_failure_and_a_configured_closed_tier(gateway, tmp_path):
    lc, ls = transform_l(gateway, CARD_FIRST_PARTY), transform_l(gateway, CONTACT_TO_SP)
    g = make(gateway, tmp_path, transformer=Raises(KeyError("span")))
    assert g.evaluate(CARD_FIRST_PARTY, likelihood=lc).rule == "transform-error-fail-closed"
    assert g.evaluate(CONTACT_TO_SP, likelihood=ls).action == "allow"
    tables = gateway.tables.model_copy(deep=True)
    tables.tiers["sensitive"].fail_mode = "closed"  # what a user's factor table can say
    g2 = make(gateway, tmp_path / "b", tables=tables, transformer=Raises(KeyError("span")))
    d = g2.evaluate(CONTACT_TO_SP, likelihood=ls)
    assert d.action == "deny" and d.rule == "transform-error-fail-closed"


@slow
def test_detector_failure_uses_the_unknown_tier_rule(gateway, tmp_path):
    g = make(gateway, tmp_path, extractor=Raises(RuntimeError("spaCy worker died")))
    assert g.evaluate(CONTACT_TO_SP).action == "deny"  # body, tier unknown → most sensitive tier → closed
    assert g.evaluate(RawRequest(method="GET", url="http://a.example/s?q=x")).action == "deny"
    d = g.evaluate(PLAIN_GET)
    assert d.action == "allow" and d.rule == "extract-error-fail-open"
    d = g.evaluate(RawRequest(method="GET", url="http://a.example/", headers=[("cookie", "sid=1")]))
    assert d.action == "allow"
    assert [x["fail_tier"] for x in lines(g.decision_log.path)] == ["critical", "critical", "standard", "standard"]


class BrokenLog(DecisionLog):
    def write(self, rec):
        raise OSError(28, "No space left on device")


@slow
def test_log_write_failure_blocks_closed_tiers_and_never_raises(gateway, tmp_path, caplog):
    lc, ls = transform_l(gateway, CARD_FIRST_PARTY), transform_l(gateway, CONTACT_TO_SP)
    g = make(gateway, tmp_path, decision_log=BrokenLog(tmp_path / "d.jsonl"))
    with caplog.at_level(logging.WARNING, logger="guardian_proxy"):
        card = g.evaluate(CARD_FIRST_PARTY, likelihood=lc)  # would be a transform
        contact = g.evaluate(CONTACT_TO_SP, likelihood=ls)
        plain = g.evaluate(PLAIN_GET)
    assert card.action == "deny" and card.rule == "log-error-fail-closed" and card.rewrite is None
    assert "was: transform" in card.explanation
    assert contact.action == "transform" and contact.rule is None  # open tier: the decision stands
    assert plain.action == "allow"
    assert "decision log" in caplog.text and card.id in caplog.text
    assert g.failures.counts["log:OSError"] == 3


@slow
def test_deadline_decision_and_single_log_line(gateway, tmp_path):
    g = make(gateway, tmp_path, likelihood=Hangs(gateway.likelihood, 2.0))  # extraction finishes, a later stage hangs
    ev = Evaluator(g, timeout_s=0.5)
    d = asyncio.run(ev.evaluate(CARD_TO_ADS))
    assert d.action == "deny" and d.rule == "deadline-error-fail-closed"
    ev.pool.shutdown(wait=True)  # the thread finishes after the deadline: its answer is dropped, no second line
    t = Ticket()
    assert t.claim()  # a request whose line is written already: evaluating it again writes none
    late = g.evaluate(CARD_TO_ADS, ticket=t)
    assert late.action == "deny" and late.rule is None
    g2 = make(gateway, tmp_path, extractor=Hangs(gateway.extractor, 2.0))  # deadline before extraction finished
    ev2 = Evaluator(g2, timeout_s=0.2)
    assert asyncio.run(ev2.evaluate(CONTACT_TO_SP)).action == "deny"  # unknown tier, a body: closed
    ev2.pool.shutdown(wait=True)
    assert [x["rule"] for x in lines(g.decision_log.path)] == ["deadline-error-fail-closed"] * 2


# ------------------------------------------------------------------ end to end: real proxy process


@slow
@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full to make log writes fail")
def test_e2e_full_disk_log_and_upstream_errors(tmp_path):
    from tests.support.proxy_process import free_port, start_proxy
    from tests.support.upstream import start_upstream

    up = start_upstream()
    px = start_proxy(tmp_path, up.port, extra=["--log", "/dev/full"])
    try:
        r = httpx.post("http://shop.example.com/checkout", proxy=px.url, json={"pan": CARD},
                       headers={"origin": "http://shop.example.com", "sec-fetch-user": "?1"})
        assert r.status_code == 403 and "decision log could not be written" in r.json()["reason"]
        n = len(up.received)
        r = httpx.post("http://support.zendesk.com/api/tickets", proxy=px.url, headers={"user-agent": "Dalvik/2.1.0 (Linux; U; Android 14; Pixel 8)"},
                       json={"text": "Please call John Smith back at john.smith@example.com"})
        assert r.status_code == 200 and len(up.received) == n + 1  # open tier: still rewritten and sent
        assert "john.smith@example.com" not in up.received[-1].body.decode()
        assert httpx.get("http://www.example.org/", proxy=px.url).status_code == 200
        assert px.proc.poll() is None
    finally:
        px.stop()
        up.close()
    closed = free_port()  # nothing listens there: the upstream refuses
    (tmp_path / "b").mkdir()
    px2 = start_proxy(tmp_path / "b", closed)
    try:
        r = httpx.get("http://www.example.org/refused", proxy=px2.url)
        assert r.status_code == 502  # as mitmproxy answers it
        d = px2.log_lines()[-1]
        assert d["action"] == "allow"
    finally:
        px2.stop()
    out = px2.output.read_text()
    assert "flow error" in out and d["id"] in out


@slow
def test_e2e_evaluation_deadline(tmp_path):
    from tests.support.proxy_process import start_proxy
    from tests.support.upstream import start_upstream

    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("limits: {eval_timeout_s: 0.001}\n")  # every pooled evaluation misses it
    up = start_upstream()
    px = start_proxy(tmp_path, up.port, extra=["--config", str(cfg)])
    try:
        # a card: closed whether the deadline hits before extraction (tier unknown) or after (critical tier)
        # 40 KB of text to read: the evaluation outlasts 1 ms whatever the machine's speed (a short one may not)
        r = httpx.post("http://support.zendesk.com/api/tickets", proxy=px.url,
                       json={"text": f"card {CARD}", "notes": "The meeting moved to Thursday afternoon. " * 1000},
                       headers={"user-agent": "Dalvik/2.1.0 (Linux; U; Android 14; Pixel 8)"})  # an app's SDK: a third party
        assert r.status_code == 403 and "Why: evaluation (deadline passed) failed" in r.json()["reason"]  # words first
        assert httpx.get("http://www.example.org/", proxy=px.url).status_code == 200  # inline: no deadline
        assert len(up.received) == 1
    finally:
        px.stop()
        up.close()
    assert [x["rule"] for x in px.log_lines()] == ["deadline-error-fail-closed", "no-personal-data"]


def test_decision_for_failed_stage_keeps_action_categories():
    rules = FailureRules(load_factor_tables())
    a = Action(domain="x.example", host="x.example", categories={"health": 1, "contact": 2})
    d = rules.decision(CARD_TO_ADS, "likelihood", BackendError("t"), a)
    assert d.action == "deny" and d.extra == {"fail_stage": "likelihood", "fail_tier": "critical", "fail_mode": "closed"}
    a2 = Action(domain="x.example", host="x.example", categories={"contact": 2})
    assert rules.decision(CARD_TO_ADS, "likelihood", BackendError("t"), a2).action == "allow"


# ------------------------------------------------------- the warning says what was done (R-FAIL-TIER)


def test_a_vault_failure_is_reported_as_the_block_it_is(tmp_path, caplog):
    """The conversation session fails closed whatever the tier: the warning must not say `→ allow`."""
    from guardian_proxy.config import load_settings

    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"state_dir: {tmp_path}\ndetector: {{ner: false}}\n")
    gw = Gateway.from_settings(load_settings(cfg), with_log=False)
    (tmp_path / "vault.key").write_bytes(b"bm90IDMyIGJ5dGVz\n")  # base64 of 10 bytes: not a vault key
    chat = post("https://api.openai.com/v1/chat/completions",
                {"model": "gpt-4o", "messages": [{"role": "user", "content": "what is a haiku?"}]},
                authorization="Bearer sk-a")
    with caplog.at_level(logging.WARNING, logger="guardian_proxy"):
        d = gw.evaluate(chat, log=False)
    assert d.action == "deny" and d.rule == "session-error-fail-closed", (d.action, d.rule, d.explanation)
    said = [r.getMessage() for r in caplog.records if "conversation session failed" in r.getMessage()]
    assert said and all("→ deny" in m and "→ allow" not in m for m in said), said
    assert "haiku" not in caplog.text


def test_report_for_a_session_failure_names_the_session_rule(caplog):
    rules = FailureRules(load_factor_tables())
    with caplog.at_level(logging.WARNING, logger="guardian_proxy"):
        d = rules.decision(PLAIN_GET, "session", ValueError("bad key"))
    assert d.action == "allow"  # the tier's mode; the session stage then blocks it (SessionStage.fail_closed)
    msg = caplog.records[-1].getMessage()
    assert "→ deny" in msg and "cannot be pseudonymised" in msg and "bad key" not in msg
