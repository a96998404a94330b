"""The decision feed (guardian_proxy/state/decisions.py): every line the log gets reaches the fleet's view, for
both back ends (local: the log is the feed; redis: one stream shared by every gateway), from several processes;
publishing never blocks or fails a request, Redis down or slow included; the dashboard shows the fleet."""

from __future__ import annotations

import json
import logging
import multiprocessing
import socket
import threading
import time

import pytest

from guardian_proxy.config import load_factor_tables, load_settings
from guardian_proxy.decision_log import DecisionLog, read_all
from guardian_proxy.evaluator import write_line
from guardian_proxy.pipeline import Gateway
from guardian_proxy.state import StateUnavailable, feed_for, new_key, open_feed, redis_client
from guardian_proxy.types import Action, Decision, RawRequest

RAW_EMAIL = "john.smith@example.com"


def state_kwargs(backend: str, tmp_path, request, name: str = "a", **state) -> dict:
    """load_settings keyword arguments (picklable, for a spawned process) for gateway `name` on `backend`."""
    kw: dict = {"state_dir": str(tmp_path / ("state" if backend == "local" else f"state-{name}"))}
    st = {"gateway_id": f"gw-{name}", **state}
    if backend == "redis":
        server = request.getfixturevalue("redis_server")
        key_file = tmp_path / "fleet.key"
        if not key_file.exists():
            key_file.write_text(new_key())
            key_file.chmod(0o600)
        st.update(backend="redis", url=st.get("url", server.url), prefix=request.getfixturevalue("redis_prefix"),
                  key_file=str(key_file))
    kw["state"] = st
    return kw


def gateway(settings) -> Gateway:
    """A Gateway with no stages (`write_line` needs none), its log and feed built as `from_settings` builds them."""
    dlog = DecisionLog(settings.decision_log)
    dlog.feed = feed_for(settings)
    return Gateway(settings, load_factor_tables(), None, None, None, None, decision_log=dlog)


def decision(i: int, action: str = "allow", host: str = "shop.example.com") -> tuple[RawRequest, Decision]:
    req = RawRequest(method="POST", url=f"https://{host}/orders/{i}", body=b"{}",
                     headers=[("content-type", "application/json")])
    d = Decision(action=action, six=Action(domain="example.com", host=host, categories={"contact": 1}),
                 explanation=f"decision {i} for {RAW_EMAIL}")
    return req, d


def flush(g: Gateway) -> None:
    feed = g.decision_log.feed
    if feed is not None:
        assert feed.flush(10)


@pytest.fixture(params=["local", "redis"])
def backend(request) -> str:
    return request.param


# ------------------------------------------------------------------ one process


def test_write_line_hands_the_logged_record_to_the_feed(backend, tmp_path, request):
    s = load_settings(**state_kwargs(backend, tmp_path, request))
    g = gateway(s)
    done = [write_line(g, *decision(i, action)) for i, action in enumerate(("allow", "deny", "transform"))]
    flush(g)
    logged = list(read_all(s.decision_log))
    fed = list(open_feed(s).records())
    assert [r["id"] for r in logged] == [d.id for d in done] == [r["id"] for r in fed]
    assert [r["gateway"] for r in fed] == ["gw-a"] * 3
    assert [{k: v for k, v in r.items() if k != "gateway"} for r in fed] == logged  # the log's very record
    assert RAW_EMAIL not in json.dumps(fed) and "[EMAIL_ADDRESS]" in fed[0]["explanation"]
    assert open_feed(s).count() == 3
    assert [r["id"] for r in open_feed(s).recent(2)] == [d.id for d in done[1:]]
    assert [r["action"] for r in open_feed(s).recent(5, lambda r: r["action"] == "deny")] == ["deny"]
    assert set(open_feed(s).gateways()) == {"gw-a"}


def test_the_local_back_end_publishes_nothing_more(tmp_path):
    s = load_settings(state_dir=tmp_path / "state")
    assert feed_for(s) is None  # the JSONL log is the whole feed
    g = Gateway(s, load_factor_tables(), None, None, None, None, decision_log=DecisionLog(s.decision_log))
    write_line(g, *decision(1))  # a log without a feed (tests, older callers) writes as before
    assert len(list(read_all(s.decision_log))) == 1


def test_redis_keys_hold_no_values_and_the_stream_is_capped(tmp_path, request):
    s = load_settings(**state_kwargs("redis", tmp_path, request, recent_decisions=50))
    g = gateway(s)
    for i in range(600):
        write_line(g, *decision(i))
    flush(g)
    r = redis_client(s)
    keys = sorted(k.decode() for k in r.scan_iter(match=s.state.prefix + ":*"))
    assert keys == [f"{s.state.prefix}:decisions", f"{s.state.prefix}:decisions:gateways"]
    n = open_feed(s).count()
    assert 50 <= n < 250, n  # MAXLEN ~: trimmed by whole stream nodes (100 entries each)
    newest = open_feed(s).recent(1)[0]
    assert newest["path"].startswith("/orders/") and newest == list(open_feed(s).records())[-1]


# ------------------------------------------------------------------ several processes, several gateways


def _gateway_process(kwargs: dict, n: int, action: str) -> None:
    s = load_settings(**kwargs)
    g = gateway(s)
    for i in range(n):
        write_line(g, *decision(i, action))
    flush(g)


@pytest.mark.slow
def test_two_processes_write_and_every_reader_sees_both(backend, tmp_path, request):
    """local: two processes of one gateway append to its log; redis: two gateways (own state dirs) share the
    stream. A reader built from either settings sees all the decisions, each with the gateway that made it."""
    ka, kb = state_kwargs(backend, tmp_path, request, "a"), state_kwargs(backend, tmp_path, request, "b")
    if backend == "local":
        kb["state"]["gateway_id"] = "gw-a"  # the same gateway, a second process
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_gateway_process, args=(ka, 40, "allow")),
             ctx.Process(target=_gateway_process, args=(kb, 40, "deny"))]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    for kw in (ka, kb):
        feed = open_feed(load_settings(**kw))
        recs = list(feed.records())
        assert len(recs) == 80 and feed.count() == 80
        by_action = {a: [r for r in recs if r["action"] == a] for a in ("allow", "deny")}
        assert len(by_action["allow"]) == len(by_action["deny"]) == 40
        if backend == "redis":
            assert {r["gateway"] for r in by_action["allow"]} == {"gw-a"}
            assert {r["gateway"] for r in by_action["deny"]} == {"gw-b"}
            assert set(feed.gateways()) == {"gw-a", "gw-b"}
        assert len(feed.recent(10, lambda r: r["action"] == "deny")) == 10


def test_follow_sees_what_another_writer_publishes(backend, tmp_path, request):
    ka = state_kwargs(backend, tmp_path, request, "a")
    kb = state_kwargs(backend, tmp_path, request, "b")
    if backend == "local":
        kb = ka
    reader = open_feed(load_settings(**ka))
    if backend == "local":
        write_line(gateway(load_settings(**ka)), *decision(0))  # the log exists before it is followed
    got, stop = [], threading.Event()

    def run():
        for rec in reader.follow(stop):
            got.append(rec)
            if len(got) >= 3:
                return

    t = threading.Thread(target=run, daemon=True)
    t.start()
    time.sleep(0.5)  # following from now on
    g = gateway(load_settings(**kb))
    ids = [write_line(g, *decision(i, "deny")).id for i in range(3)]
    flush(g)
    t.join(10)
    stop.set()
    assert [r["id"] for r in got] == ids
    assert {r["gateway"] for r in got} == {"gw-a" if backend == "local" else "gw-b"}


# ------------------------------------------------------------------ Redis down or slow


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_redis_down_drops_from_the_feed_with_one_warning_never_blocking(tmp_path, request, caplog):
    url = f"redis://127.0.0.1:{_free_port()}/0"  # nothing listens there
    s = load_settings(**state_kwargs("redis", tmp_path, request, url=url, timeout_s=0.2))
    g = gateway(s)
    caplog.set_level(logging.WARNING, logger="guardian_proxy.state")
    t0 = time.perf_counter()
    done = [write_line(g, *decision(i)) for i in range(300)]
    spent = time.perf_counter() - t0
    assert all(d.action == "allow" for d in done) and len(list(read_all(s.decision_log))) == 300
    assert spent < 1.0, spent  # the log's writes, never a wait on Redis
    flush(g)
    feed = g.decision_log.feed
    assert feed.dropped == 300 and feed.published == 0
    warnings = [r for r in caplog.records if "decision feed" in r.getMessage()]
    assert len(warnings) == 1 and "not published" in warnings[0].getMessage()
    t0 = time.perf_counter()
    with pytest.raises(StateUnavailable):
        open_feed(s).recent(5)
    assert time.perf_counter() - t0 < 2.0


def test_a_redis_that_never_answers_costs_at_most_the_timeout(tmp_path, request):
    with socket.socket() as silent:  # accepts connections (the backlog) and never says a word
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)
        url = f"redis://127.0.0.1:{silent.getsockname()[1]}/0"
        s = load_settings(**state_kwargs("redis", tmp_path, request, url=url, timeout_s=0.3))
        feed = open_feed(s)
        for call in (feed.count, lambda: feed.recent(3), feed.last_id, lambda: feed.read_after("0-0")):
            t0 = time.perf_counter()
            with pytest.raises(StateUnavailable):
                call()
            assert time.perf_counter() - t0 < 1.5
        g = gateway(s)
        t0 = time.perf_counter()
        write_line(g, *decision(1))
        assert time.perf_counter() - t0 < 0.1
        assert g.decision_log.feed.flush(5) and g.decision_log.feed.dropped == 1


def test_a_full_queue_drops_instead_of_waiting(tmp_path, request, monkeypatch):
    from guardian_proxy.state import decisions_redis

    monkeypatch.setattr(decisions_redis, "QUEUE_MAX", 5)
    s = load_settings(**state_kwargs("redis", tmp_path, request))
    feed = open_feed(s)
    release = threading.Event()
    real_send = feed._send
    monkeypatch.setattr(feed, "_send", lambda batch: (release.wait(10), real_send(batch)))
    for i in range(50):
        feed.publish({"id": str(i), "ts": i, "action": "allow"})
    assert feed.dropped >= 30  # the queue (5) and what the thread holds; the rest never waited
    release.set()
    assert feed.flush(10)
    assert feed.count() == 50 - feed.dropped == feed.published


# ------------------------------------------------------------------ the dashboard shows the fleet


def test_the_dashboard_shows_every_gateway_of_the_fleet(tmp_path, request):
    import httpx

    from guardian_proxy.dashboard import Dashboard

    ka, kb = state_kwargs("redis", tmp_path, request, "a"), state_kwargs("redis", tmp_path, request, "b")
    other = gateway(load_settings(**kb))
    earlier = write_line(other, *decision(0, "deny", "ads.tracker.example"))
    flush(other)
    d = Dashboard(load_settings(**ka), port=0)
    assert d.start(), d.error
    try:
        c = httpx.Client(base_url=d.base_url, headers={"X-Guardian-Token": d.guard.token}, timeout=10,
                         trust_env=False)
        snap = c.get("/api/snapshot").json()
        assert snap["gateway"] == "gw-a" and [r["id"] for r in snap["recent"]] == [earlier.id]  # seeded
        assert snap["recent"][0]["gateway"] == "gw-b"
        req, mine = decision(1, "transform")
        d.publish(req, mine)  # this gateway's own, with its detail
        later = write_line(other, *decision(2, "deny", "ads.tracker.example"))
        flush(other)
        deadline = time.time() + 10
        while time.time() < deadline and later.id not in [r["id"] for r in d.hub.snapshot()["recent"]]:
            time.sleep(0.05)
        snap = c.get("/api/snapshot").json()
        assert [(r["id"], r["gateway"]) for r in snap["recent"]] == [(earlier.id, "gw-b"), (mine.id, "gw-a"),
                                                                     (later.id, "gw-b")]
        stats = c.get("/api/stats").json()
        assert stats["total"] == 3 and stats["actions"]["deny"] == 2
        assert stats["gateways"] == {"gw-b": {"total": 2, "allow": 0, "transform": 0, "deny": 2},
                                     "gw-a": {"total": 1, "allow": 0, "transform": 1, "deny": 0}}
        remote = c.get(f"/api/decision/{later.id}").json()
        assert remote["elsewhere"] == "gw-b" and "gw-b" in remote["note"] and "factors" not in remote
        assert "elsewhere" not in c.get(f"/api/decision/{mine.id}").json()
        assert c.get("/api/snapshot", params={"q": "host:tracker"}).json()["matched"] == 2
        assert c.get("/api/config").json()["fleet"]["gateway"] == "gw-a"
        everything = json.dumps([snap, stats, remote])
        assert RAW_EMAIL not in everything
    finally:
        d.stop()


def test_the_dashboard_starts_on_its_own_log_when_redis_is_down(tmp_path, request):
    from guardian_proxy.dashboard import Dashboard

    url = f"redis://127.0.0.1:{_free_port()}/0"
    s = load_settings(**state_kwargs("redis", tmp_path, request, url=url, timeout_s=0.2))
    g = gateway(s)
    mine = write_line(g, *decision(1))
    d = Dashboard(s, port=0)
    t0 = time.perf_counter()
    assert d.start(), d.error
    try:
        assert time.perf_counter() - t0 < 3
        assert [r["id"] for r in d.hub.snapshot()["recent"]] == [mine.id]
    finally:
        t0 = time.perf_counter()
        d.stop()
        assert time.perf_counter() - t0 < 3
