"""`guardian-proxy dashboard --new-token` (docs/dashboard.md): old addresses stop working at once, in a
running proxy too. An open live stream opened with the old token is ended by the server (one `token` event,
then the end; no decision after the rotation reaches it), and the running proxy's runtime.json names the new
address. The page's side ("token changed — reopen from `guardian-proxy dashboard`") is in
test_dashboard_live_browser.py."""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import threading

import httpx
import pytest
from typer.testing import CliRunner

from guardian_proxy import runtime
from guardian_proxy.cli import app
from guardian_proxy.config import load_settings
from guardian_proxy.dashboard import Dashboard
from guardian_proxy.dashboard.security import TokenFile
from tests.unit.dashboard.test_dashboard_live import decision, raw

END = object()


def read_stream(url: str, headers: dict | None = None) -> tuple[queue.Queue, threading.Event]:
    """Open the event stream in a thread: (each `event`/`data` line, then END when the server ends it; opened)."""
    got: queue.Queue = queue.Queue()
    opened = threading.Event()

    def run():
        try:
            with httpx.Client(timeout=httpx.Timeout(30, read=None), trust_env=False) as c, \
                    c.stream("GET", url, headers=headers or {}) as r:
                got.put(("status", r.status_code))
                opened.set()
                for line in r.iter_lines():
                    if line.startswith(("event: ", "data: ")):
                        got.put(tuple(line.split(": ", 1)))
        except httpx.HTTPError as e:
            got.put(("error", repr(e)))
        finally:
            opened.set()
            got.put(END)

    threading.Thread(target=run, daemon=True).start()
    return got, opened


def take(got: queue.Queue, timeout: float = 30.0) -> list:
    """Everything up to END (the stream's end)."""
    out = []
    while (x := got.get(timeout=timeout)) is not END:
        out.append(x)
    return out


def until(got: queue.Queue, want: tuple, timeout: float = 30.0) -> list:
    out = []
    while (x := got.get(timeout=timeout)) != want:
        assert x is not END, out
        out.append(x)
    return out


@pytest.fixture
def dash(tmp_path):
    d = Dashboard(load_settings(state_dir=tmp_path / "state"), port=0)
    assert d.start(), d.error
    yield d
    d.stop()


def test_an_open_stream_on_the_old_token_is_ended_by_the_server(dash):
    old = dash.guard.token
    got, opened = read_stream(f"{dash.base_url}/api/events", {"X-Guardian-Token": old})
    assert opened.wait(30)
    assert got.get(timeout=5) == ("status", 200)  # subscribed before the answer's head is sent
    dash.publish(raw("before.example"), decision("before.example", "allow"))
    first = until(got, ("event", "decision"))
    assert first == []
    assert json.loads(got.get(timeout=5)[1])["host"] == "before.example"
    TokenFile.for_state_dir(dash.settings.state_dir).rotate()  # what `dashboard --new-token` does
    dash.publish(raw("after.example"), decision("after.example", "deny"))
    rest = take(got)  # the server ends the stream: END comes without closing it from this side
    assert rest[:2] == [("event", "token"), ("data", '{"changed":true}')], rest
    assert not any("after.example" in str(x) for x in rest)  # nothing decided after the rotation reached it
    assert dash.hub.subscribers == 0  # unsubscribed before its connection closed
    with httpx.Client(timeout=10, trust_env=False) as c:  # its reconnect, with the old token: refused
        assert c.get(f"{dash.base_url}/api/events", headers={"X-Guardian-Token": old}).status_code == 401


def test_a_stream_on_the_new_token_keeps_going(dash):
    new = TokenFile.for_state_dir(dash.settings.state_dir).rotate()
    got, opened = read_stream(f"{dash.base_url}/api/events", {"X-Guardian-Token": new})
    assert opened.wait(30) and got.get(timeout=5) == ("status", 200)
    dash.publish(raw("later.example"), decision("later.example", "allow"))
    assert until(got, ("event", "decision")) == []
    assert json.loads(got.get(timeout=5)[1])["host"] == "later.example"


def test_new_token_puts_the_new_address_in_runtime_json(dash):
    state = dash.settings.state_dir
    runtime.write(state, runtime.info([("127.0.0.1", 8080)], "regular", dash.url, "/c", "/c/ca.pem"))
    old = dash.url
    r = CliRunner().invoke(app, ["dashboard", "--state-dir", str(state), "--new-token"])
    assert r.exit_code == 0, r.output
    new = r.stdout.strip()
    assert new != old and new == dash.url
    rec = runtime.read(state)
    assert rec["dashboard_url"] == new and rec["pid"] == os.getpid()  # the proxy's record, its address changed
    assert CliRunner().invoke(app, ["dashboard", "--state-dir", str(state)]).stdout.strip() == new


def test_update_never_writes_a_record_for_no_running_proxy(tmp_path):
    assert runtime.update(tmp_path, dashboard_url="http://x") is None and not runtime.path(tmp_path).exists()


@pytest.mark.slow
def test_a_real_proxy_ends_the_old_stream_and_its_runtime_file_names_the_new_address(tmp_path):
    """`guardian-proxy run` with its dashboard, a decision made through it reaching an open stream, then
    `guardian-proxy dashboard --new-token` as a user runs it: the stream is ended by the server, the next
    decision reaches only a stream opened with the new token, and runtime.json holds the new address."""
    from tests.support.proxy_process import BIN, start_proxy
    from tests.support.upstream import start_upstream

    up = start_upstream()
    px = start_proxy(tmp_path, up.port, dashboard=True)
    try:
        old = px.dashboard_url
        base = old.split("/?", 1)[0]
        assert runtime.read(px.state_dir)["dashboard_url"] == old
        got, opened = read_stream(f"{base}/api/events", {"X-Guardian-Token": old.rsplit("=", 1)[1]})
        assert opened.wait(30) and got.get(timeout=30) == ("status", 200)
        with httpx.Client(proxy=px.url, timeout=60, trust_env=False) as c:
            assert c.get("http://before.example/x").status_code == 200
            until(got, ("event", "decision"), timeout=60)
            assert "before.example" in got.get(timeout=5)[1]
            r = subprocess.run([str(BIN), "dashboard", "--state-dir", str(px.state_dir), "--new-token"],
                               capture_output=True, text=True, timeout=120)
            assert r.returncode == 0, r.stderr
            new = r.stdout.strip()
            assert new != old and re.fullmatch(re.escape(base) + r"/\?token=[\w-]+", new)
            rest = take(got, timeout=60)
            assert rest[:2] == [("event", "token"), ("data", '{"changed":true}')], rest
            assert runtime.read(px.state_dir)["dashboard_url"] == new
            fresh, opened = read_stream(f"{base}/api/events", {"X-Guardian-Token": new.rsplit("=", 1)[1]})
            assert opened.wait(30) and fresh.get(timeout=30) == ("status", 200)
            assert c.get("http://after.example/y").status_code == 200
            until(fresh, ("event", "decision"), timeout=60)
            assert "after.example" in fresh.get(timeout=5)[1]
        with httpx.Client(timeout=10, trust_env=False) as c:
            assert c.get(f"{base}/api/events", headers={"X-Guardian-Token": old.rsplit("=", 1)[1]}).status_code == 401
    finally:
        px.stop()
        up.close()
