"""Learned policies behind the state interface (docs/design/scaling.md): a policy one process learns or is
given reaches every other store built from the same settings at its next lookup (Redis: within CHECK_S, on
every gateway), unchanged entries keep what they loaded, Redis down keeps the last good policies."""

from __future__ import annotations

import json
import logging
import multiprocessing
import time

import pytest
from typer.testing import CliRunner

from guardian_proxy import state
from guardian_proxy.cli import app
from guardian_proxy.config import load_settings
from guardian_proxy.policy.store import PolicyStore, policy_index
from guardian_proxy.state.policies_redis import CHECK_S
from guardian_proxy.types import Statement
from tests.test_state_overrides import _dead, seen_within, settings_kwargs

runner = CliRunner()


def st(text: str, practice: str = "collect") -> Statement:
    return Statement(id="x", domain="x", practice=practice, text=text, data_categories=["contact"])


@pytest.fixture(params=["local", "redis"])
def kw(request, tmp_path) -> dict:
    return settings_kwargs(tmp_path, request.param, request)


@pytest.fixture
def redis_kw(request, tmp_path) -> dict:
    return settings_kwargs(tmp_path, "redis", request)


def lag(store: PolicyStore) -> float:
    return CHECK_S + 0.5 if store.backend.check_s else 0.05


def test_a_policy_learned_in_one_store_is_retrieved_by_the_other_at_its_next_call(kw):
    s = load_settings(**kw)
    a, b = PolicyStore.for_settings(s), PolicyStore.for_settings(s)
    assert b.find("example.org") is None
    a.add("example.org", [st("We collect your email address.")], {"title": "Privacy", "origin": "https://x/p"})
    if not b.backend.check_s:  # local: the very next call
        assert b.find("example.org") is not None
    seen_within(lambda: b.find("example.org") is not None, lag(b))
    p = b.find("example.org")
    assert p.source == "user" and [x.text for x in p.statements] == ["We collect your email address."]
    # a second document for the domain, from the other store: merged, seen by the first
    b.add("example.org", [st("We share it.", "share")], {"title": "Terms", "origin": "https://x/t"})
    seen_within(lambda: a.find("example.org").count == 2, lag(a))
    assert [x.text for x in a.find("example.org").statements] == ["We collect your email address.", "We share it."]


def test_unchanged_policies_keep_what_they_loaded_when_another_is_learned(kw):
    s = load_settings(**kw)
    a, b = PolicyStore.for_settings(s), PolicyStore.for_settings(s)
    a.add("one.example", [st("We collect your email address.")], {"title": "t", "origin": "o"})
    seen_within(lambda: b.find("one.example") is not None, lag(b))
    one = b.find("one.example")
    assert policy_index(one) is not None  # statements read, retrieval index built
    a.add("two.example", [st("We sell your data.", "sell")], {"title": "t", "origin": "o"})
    seen_within(lambda: b.find("two.example") is not None, lag(b))
    assert b.find("one.example") is one


def _learn(kw: dict) -> None:
    """Another process (the proxy, learning from a browsed page)."""
    PolicyStore.for_settings(load_settings(**kw)).add(
        "learned.example", [st("We collect your phone number.")], {"title": "Privacy", "origin": "https://l/p",
                                                                   "kind": "learned"})


@pytest.mark.slow
def test_a_policy_learned_by_another_process_reaches_this_ones_evidence_stage(kw):
    from guardian_proxy.policy import EvidenceStage

    stage = EvidenceStage.for_settings(load_settings(**kw))
    assert stage.store.find("learned.example") is None
    ctx = multiprocessing.get_context("spawn")
    p = ctx.Process(target=_learn, args=(kw,))
    p.start()
    p.join(120)
    assert p.exitcode == 0
    seen_within(lambda: stage.store.find("learned.example") is not None, lag(stage.store))
    assert stage.store.user_policy("learned.example").documents[0]["kind"] == "learned"


def test_cli_policy_add_and_list_use_the_configured_back_end(kw, tmp_path):
    cfg = tmp_path / "config.yaml"
    cfg.write_text(json.dumps(kw))
    doc = tmp_path / "p.md"
    doc.write_text("# Privacy Policy\n\nWe collect your email address to send you newsletters.\n"
                   "We share your information with advertising partners.\n")
    gateway = PolicyStore.for_settings(load_settings(cfg))
    r = runner.invoke(app, ["policy", "add", "example.org", str(doc), "--config", str(cfg)])
    assert r.exit_code == 0, r.output
    rows = json.loads(runner.invoke(app, ["policy", "list", "--json", "--config", str(cfg)]).stdout)
    assert any(x["domain"] == "example.org" and x["source"] == "user" for x in rows)
    seen_within(lambda: gateway.find("example.org") is not None, lag(gateway))


# --------------------------------------------------------------------------- Redis


def test_redis_down_keeps_the_last_good_policies_with_one_warning(redis_kw, caplog):
    s = load_settings(**redis_kw)
    store = PolicyStore.for_settings(s)
    store.add("example.org", [st("We collect your email address.")], {"title": "t", "origin": "o"})
    assert store.find("example.org").statements
    store.backend.settings = _dead(s)
    with caplog.at_level(logging.WARNING, logger="guardian_proxy.policy"):
        for _ in range(4):
            store._checked = float("-inf")
            t0 = time.monotonic()
            assert store.find("example.org") is not None
            assert time.monotonic() - t0 < 2 * 0.3 + 0.2
    assert len([r for r in caplog.records if "keeping the last good user policies" in r.getMessage()]) == 1
    with pytest.raises(state.StateUnavailable):
        store.add("other.example", [st("x")], {"title": "t", "origin": "o"})


def test_redis_policy_keys_hold_no_domain(redis_kw):
    s = load_settings(**redis_kw)
    store = PolicyStore.for_settings(s)
    store.add("secret-site.example", [st("We collect your email address.")], {"title": "t", "origin": "o"})
    store.append_log({"domain": "secret-site.example", "statements": 1})
    keys = {k.decode() for k in state.redis_client(s).keys(s.state.prefix + ":*")}
    assert len(keys) == 4 and not any("secret" in k for k in keys), keys
    assert {k.rsplit(":", 1)[-1] for k in keys if ":st:" not in k} == {"index", "gen", "learned"}


@pytest.mark.slow
def test_lookup_check_cost_per_call(kw, capsys):
    s = load_settings(**kw)
    store = PolicyStore.for_settings(s)
    store.add("example.org", [st("We collect your email address.")], {"title": "t", "origin": "o"})
    store.find("example.org")
    n = 20_000
    t0 = time.perf_counter()
    for _ in range(n):
        store.find("example.org")
    per = (time.perf_counter() - t0) / n * 1e6
    with capsys.disabled():
        print(f"\n[{s.state.backend}] policy change check per lookup: {per:.2f} µs")
    assert per < 200
