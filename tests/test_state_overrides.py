"""Overrides behind the state interface (docs/design/scaling.md): several processes (worker processes, the
CLI, the dashboard) and, with Redis, several gateways share one list; a change is seen at the next request
(Redis: within CHECK_S), a once rule is spent exactly once across them, counts add up, Redis down keeps the
last good list. The same test body runs on both back ends where it can."""

from __future__ import annotations

import json
import logging
import multiprocessing
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from guardian_proxy import state
from guardian_proxy.cli import app
from guardian_proxy.config import Override, load_settings
from guardian_proxy.errors import ConfigError
from guardian_proxy.overrides import DashboardOverrides, OverrideStore, find_override
from guardian_proxy.state.overrides_redis import CHECK_S
from guardian_proxy.types import Action

runner = CliRunner()
BACKENDS = ["local", "redis"]


def action(host="ads.example") -> Action:
    return Action(domain=host, host=host, categories={}, recipient="ad_network")


def settings_kwargs(tmp_path: Path, backend: str, request) -> dict:
    kw: dict = {"state_dir": str(tmp_path / "state")}
    if backend == "redis":
        server = request.getfixturevalue("redis_server")
        key_file = tmp_path / "vault.key"
        if not key_file.exists():
            key_file.write_text(state.new_key())
            key_file.chmod(0o600)
        kw["state"] = {"backend": "redis", "url": server.url, "prefix": request.getfixturevalue("redis_prefix"),
                       "key_file": str(key_file)}
    return kw


@pytest.fixture(params=BACKENDS)
def kw(request, tmp_path) -> dict:
    return settings_kwargs(tmp_path, request.param, request)


def seen_within(fn, limit: float) -> float:
    """Seconds until fn() is true; fails past `limit`."""
    t0 = time.monotonic()
    while not fn():
        assert time.monotonic() - t0 < limit, "not seen in time"
        time.sleep(0.01)
    return time.monotonic() - t0


def lag(store: OverrideStore) -> float:
    return CHECK_S + 0.5 if store.backend.shared else 0.05  # local: the next request; Redis: CHECK_S


# --------------------------------------------------------------------------- seen by every process


def test_a_change_made_by_one_store_is_seen_by_another_at_its_next_request(kw):
    s = load_settings(**kw)
    a, b = OverrideStore.for_settings(s), OverrideStore.for_settings(s)
    assert find_override(b.current(), action()) is None
    rule = a.add_rule(Override(action="deny", domain="ads.example"))
    if not b.backend.shared:  # local: the very next request
        assert find_override(b.current(), action()) is not None
    seen_within(lambda: find_override(b.current(), action()) is not None, lag(b))
    a.remove(rule.id)
    seen_within(lambda: find_override(b.current(), action()) is None, lag(b))


def test_config_overrides_still_apply_first_and_the_store_wins(kw):
    s = load_settings(**kw, overrides=[{"action": "deny", "domain": "ads.example"}])
    a, b = OverrideStore.for_settings(s), OverrideStore.for_settings(s)
    assert find_override(b.current(), action()).action == "deny"
    a.add_rule(Override(action="allow", domain="ads.example"))
    seen_within(lambda: find_override(b.current(), action()).action == "allow", lag(b))
    assert [r["source"] for r in b.rows()] == ["config", "store"]
    with pytest.raises(ConfigError, match="config file"):
        a.remove(b.rows()[0]["id"])


def test_a_once_rule_is_spent_once_across_stores_and_listed_spent_everywhere(kw):
    s = load_settings(**kw)
    a, b = OverrideStore.for_settings(s), OverrideStore.for_settings(s)
    rule = a.add_rule(Override(action="allow", domain="ads.example", once=True))
    seen_within(lambda: len(b.current()) == 1, lag(b))
    la, lb = a.current(), b.current()
    got = [find_override(la, action()), find_override(lb, action()), find_override(la, action())]
    assert sum(o is not None for o in got) == 1
    a.flush()
    b.flush()
    c = OverrideStore.for_settings(s)  # a third process: sees it spent, and does not get it
    (row,) = c.rows()
    assert row["id"] == rule.id and row["state"] == "spent" and row["spent"] and row["matched"] == 1
    assert find_override(c.current(), action()) is None


def test_counts_of_several_stores_add_up(kw):
    s = load_settings(**kw)
    a, b = OverrideStore.for_settings(s), OverrideStore.for_settings(s)
    rule = a.add_rule(Override(action="deny", domain="ads.example"))
    seen_within(lambda: len(b.current()) == 1, lag(b))
    for store, n in ((a, 3), (b, 4), (a, 2)):
        cur = store.current()
        for _ in range(n):
            assert find_override(cur, action()) is not None
        store.flush()
    assert OverrideStore.for_settings(s).counts()[rule.id]["matched"] == 9


def test_the_cli_and_the_dashboard_write_to_the_configured_back_end(kw, tmp_path):
    cfg = tmp_path / "config.yaml"
    cfg.write_text(json.dumps(kw))  # JSON is YAML
    s = load_settings(cfg)
    gateway = OverrideStore.for_settings(s)
    r = runner.invoke(app, ["deny", "ads.example", "--config", str(cfg)])
    assert r.exit_code == 0, r.output
    assert gateway.where in r.output
    seen_within(lambda: find_override(gateway.current(), action()) is not None, lag(gateway))
    DashboardOverrides(s).add("allow", "shop.example", term="1h")
    seen_within(lambda: find_override(gateway.current(), action("shop.example")) is not None, lag(gateway))
    r = runner.invoke(app, ["overrides", "--json", "--config", str(cfg)])
    rows = json.loads(r.stdout)
    assert [x["domain"] for x in rows] == ["ads.example", "shop.example"]
    assert runner.invoke(app, ["overrides", "--remove", rows[0]["id"], "--config", str(cfg)]).exit_code == 0
    seen_within(lambda: find_override(gateway.current(), action()) is None, lag(gateway))


# --------------------------------------------------------------------------- processes


def _race(kw: dict, n: int, barrier, out) -> None:
    """A worker process: its own store on the same settings; claims the once rule and the counted rule."""
    store = OverrideStore.for_settings(load_settings(**kw))
    cur = store.current()
    barrier.wait()
    once = sum(find_override(cur, action("once.example")) is not None for _ in range(n))
    for _ in range(n):
        find_override(cur, action())
    store.flush()
    out.put(once)


@pytest.mark.slow
def test_two_processes_race_for_a_once_rule_one_request_gets_it_and_counts_add_up(kw):
    s = load_settings(**kw)
    store = OverrideStore.for_settings(s)
    once = store.add_rule(Override(action="allow", domain="once.example", once=True))
    counted = store.add_rule(Override(action="deny", domain="ads.example"))
    ctx = multiprocessing.get_context("spawn")
    barrier, out = ctx.Barrier(2), ctx.Queue()
    procs = [ctx.Process(target=_race, args=(kw, 50, barrier, out)) for _ in range(2)]
    for p in procs:
        p.start()
    got = [out.get(timeout=120) for _ in procs]
    for p in procs:
        p.join()  # the exit is the event (pytest-timeout bounds a hang), not a fixed 30 s
        assert p.exitcode == 0
    assert sum(got) == 1, got
    counts = OverrideStore.for_settings(s).counts()
    assert counts[counted.id]["matched"] == 100
    assert counts[once.id]["matched"] == 1


# --------------------------------------------------------------------------- Redis


@pytest.fixture
def redis_kw(request, tmp_path) -> dict:
    return settings_kwargs(tmp_path, "redis", request)


def _dead(s):
    from tests.support.redis_server import free_port

    st = s.state.model_copy(update={"url": f"redis://127.0.0.1:{free_port()}/0", "timeout_s": 0.3})
    return s.model_copy(update={"state": st})


def test_redis_down_keeps_the_last_good_list_with_one_warning_and_never_blocks(redis_kw, caplog):
    s = load_settings(**redis_kw)
    store = OverrideStore.for_settings(s)
    store.add_rule(Override(action="deny", domain="ads.example"))
    store.add_rule(Override(action="allow", domain="once.example", once=True))
    store.add_rule(Override(action="deny", domain="no.example", once=True))
    assert len(store.current()) == 3
    up = store.backend.settings
    store.backend.settings = _dead(s)  # the server goes away
    with caplog.at_level(logging.WARNING, logger="guardian_proxy.overrides"):
        for _ in range(5):
            store._checked = float("-inf")  # ask at every request, not only every RETRY_S
            t0 = time.monotonic()
            cur = store.current()
            assert time.monotonic() - t0 < 2 * 0.3 + 0.2  # bounded by state.timeout_s
            assert find_override(cur, action()).action == "deny"
    warned = [r for r in caplog.records if "keeping the last good overrides" in r.getMessage()]
    assert len(warned) == 1 and "\n" not in warned[0].getMessage()
    # a once rule cannot be spent: a deny once denies (unspent), an allow once does not apply
    assert find_override(cur, action("no.example")).action == "deny"
    assert find_override(cur, action("once.example")) is None
    with pytest.raises(state.StateUnavailable):
        store.rows()  # the CLI says so (strict)
    assert len(store.rows(strict=False)) == 3  # the dashboard shows the last good list
    with pytest.raises(ValueError, match="not saved"):
        DashboardOverrides(s, store).add("deny", "x.example")
    store.flush()  # counts kept for later, no exception
    store.backend.settings = up  # back
    store._checked = float("-inf")
    assert find_override(store.current(), action("once.example")) is not None  # spendable again, once
    assert find_override(store.current(), action("once.example")) is None


def test_cli_fails_in_one_line_when_redis_is_down(redis_kw, tmp_path):
    from tests.support.redis_server import free_port

    redis_kw["state"]["url"] = f"redis://127.0.0.1:{free_port()}/0"
    cfg = tmp_path / "config.yaml"
    cfg.write_text(json.dumps(redis_kw))
    for args in (["deny", "ads.example"], ["overrides"]):
        r = runner.invoke(app, [*args, "--config", str(cfg)])
        assert r.exit_code == 2 and "did not answer" in r.output and "Traceback" not in r.output, r.output


def test_until_restart_is_refused_on_a_store_shared_by_a_fleet(redis_kw):
    store = OverrideStore.for_settings(load_settings(**redis_kw))
    with pytest.raises(ConfigError, match="--for DURATION"):
        store.add_rule(Override(action="deny", domain="ads.example", run="1:2"))


def test_redis_keys_hold_no_raw_values(redis_kw, redis_server):
    s = load_settings(**redis_kw)
    store = OverrideStore.for_settings(s)
    store.add_rule(Override(action="deny", domain="secret-site.example", once=True))
    find_override(store.current(), action("secret-site.example"))
    store.flush()
    keys = {k.decode() for k in state.redis_client(s).keys(s.state.prefix + ":*")}
    assert keys == {state.key(s, "overrides", p) for p in ("list", "gen", "spent", "counts", "last")}
    assert not any("secret" in k for k in keys)


# --------------------------------------------------------------------------- cost


@pytest.mark.slow
def test_change_check_cost_per_request(kw, capsys):
    """The added cost of `current()` (the change check) per request, printed: local = one stat; Redis = one
    GET at most every CHECK_S (amortised)."""
    s = load_settings(**kw)
    store = OverrideStore.for_settings(s)
    store.add_rule(Override(action="deny", domain="ads.example"))
    store.current()
    n = 20_000
    t0 = time.perf_counter()
    for _ in range(n):
        store.current()
    per = (time.perf_counter() - t0) / n * 1e6
    t0 = time.perf_counter()
    for _ in range(200):
        store._checked = float("-inf")
        store.current()
    ask = (time.perf_counter() - t0) / 200 * 1e6
    with capsys.disabled():
        print(f"\n[{s.state.backend}] change check per request: {per:.2f} µs (a check that asks the back end: "
              f"{ask:.1f} µs)")
    assert per < 200
