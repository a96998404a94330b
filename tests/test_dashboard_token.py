"""The dashboard's token is kept in the state dir (0600, created once, rotatable), and `guardian-proxy dashboard`
prints the running proxy's address with it (from runtime.json, else the configured port), or says in one line
that no proxy is running."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

import httpx
import pytest
from typer.testing import CliRunner

from guardian_proxy.cli import app
from guardian_proxy.config import load_settings
from guardian_proxy.dashboard import Dashboard
from guardian_proxy.dashboard.security import TOKEN_FILE, TokenFile


@pytest.fixture
def state(tmp_path):
    return tmp_path / "state"


def start(state, port: int = 0) -> Dashboard:
    d = Dashboard(load_settings(state_dir=state), port=port)
    assert d.start(), d.error
    return d


def test_token_is_created_once_0600_and_the_same_at_every_start(state):
    a = Dashboard(load_settings(state_dir=state), port=0)
    f = state / TOKEN_FILE
    assert stat.S_IMODE(f.stat().st_mode) == 0o600
    assert f.read_text().strip() == a.guard.token and len(a.guard.token) >= 24
    mtime = f.stat().st_mtime_ns
    b = Dashboard(load_settings(state_dir=state), port=0)
    assert b.guard.token == a.guard.token and f.stat().st_mtime_ns == mtime  # read, not written again


def test_a_loose_mode_is_tightened_and_a_damaged_file_replaced(state):
    state.mkdir(parents=True)
    f = state / TOKEN_FILE
    f.write_text("x" * 30 + "\n")
    f.chmod(0o644)
    assert Dashboard(load_settings(state_dir=state), port=0).guard.token == "x" * 30
    assert stat.S_IMODE(f.stat().st_mode) == 0o600
    f.write_text("not a token!\n")
    new = Dashboard(load_settings(state_dir=state), port=0).guard.token
    assert new != "not a token!" and f.read_text().strip() == new


def test_a_symlink_is_never_followed(state, tmp_path):
    state.mkdir(parents=True)
    target = tmp_path / "elsewhere"
    target.write_text("y" * 30 + "\n")
    (state / TOKEN_FILE).symlink_to(target)
    token = Dashboard(load_settings(state_dir=state), port=0).guard.token
    assert token != "y" * 30 and target.read_text() == "y" * 30 + "\n"  # the link is replaced, its target untouched
    assert not (state / TOKEN_FILE).is_symlink()


def test_a_state_dir_that_cannot_hold_the_file_gives_a_token_for_this_run(tmp_path, caplog):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    d = Dashboard(load_settings(state_dir=blocker / "state"), port=0)
    assert d.guard.token and d.token_file is None and "cannot keep a token" in caplog.text


def test_rotation_takes_effect_at_once_in_a_running_dashboard(state):
    d = start(state)
    try:
        old = d.guard.token
        new = TokenFile.for_state_dir(state).rotate()  # what `guardian-proxy dashboard --new-token` does
        with httpx.Client(base_url=d.base_url, timeout=10, trust_env=False) as c:
            assert c.get("/api/stats", headers={"X-Guardian-Token": old}).status_code == 401
            assert c.get("/api/stats", headers={"X-Guardian-Token": new}).status_code == 200
        assert d.url.endswith(f"token={new}")
    finally:
        d.stop()


# ------------------------------------------------------------------ guardian-proxy dashboard


def cli(*args, **env):
    return CliRunner().invoke(app, ["dashboard", *args], env=env or None)


def write_runtime(state, **kw):
    state.mkdir(parents=True, exist_ok=True)
    data = {"pid": os.getpid(), "listen": [["127.0.0.1", 8080]], "dashboard_url": None, "confdir": "/c",
            "ca": "/c/ca.pem", "version": "0", "started": 0.0, **kw}
    (state / "runtime.json").write_text(json.dumps(data))


def test_prints_the_running_dashboards_address_from_runtime_json(state):
    d = start(state)
    try:
        write_runtime(state, dashboard_url=d.base_url)
        r = cli("--state-dir", str(state))
        assert r.exit_code == 0, r.output
        url = r.stdout.strip()
        assert url == d.url  # the address alone on stdout, for pipes
        with httpx.Client(timeout=10, trust_env=False) as c:
            assert c.get(url).status_code == 303  # and it opens the dashboard
        r = cli("--state-dir", str(state), "--json")
        info = json.loads(r.stdout)
        assert info["url"] == d.url and info["pac_url"] == f"{d.base_url}/proxy.pac" and info["pid"] == os.getpid()
        assert info["listen"] == [["127.0.0.1", 8080]] and info["source"].endswith("runtime.json")
        assert info["token_file"] == str(state / TOKEN_FILE)
    finally:
        d.stop()


def test_open_opens_it_in_the_browser(state, monkeypatch):
    opened = []
    monkeypatch.setattr("webbrowser.open", lambda url: opened.append(url) or True)
    d = start(state)
    try:
        write_runtime(state, dashboard_url=d.url)  # a dashboard_url with a token: the file's token is used
        r = cli("--state-dir", str(state), "--open")
        assert r.exit_code == 0 and opened == [d.url]
    finally:
        d.stop()


def test_falls_back_to_the_configured_port(state, tmp_path):
    d = start(state)
    try:
        cfg = tmp_path / "c.yaml"
        cfg.write_text(f"dashboard_port: {d.port}\n")
        r = cli("--state-dir", str(state), "--config", str(cfg), "--json")
        assert r.exit_code == 0, r.output
        info = json.loads(r.stdout)
        assert info["url"] == d.url and info["source"] == f"configured port {d.port}" and info["pid"] is None
    finally:
        d.stop()


def one_line_error(r, *words):
    assert r.exit_code == 1, r.output
    lines = [x for x in r.output.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), r.output
    for w in words:
        assert w in lines[0], (w, lines[0])


def test_no_proxy_running_is_one_line_and_exit_1(state, tmp_path):
    from tests.support.proxy_process import free_port

    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"dashboard_port: {free_port()}\n")
    one_line_error(cli("--state-dir", str(state), "--config", str(cfg)), "no guardian-proxy is running",
                   "guardian-proxy run")
    cfg.write_text("dashboard_port: 0\n")
    one_line_error(cli("--state-dir", str(state), "--config", str(cfg)), "dashboard is off")


def test_a_stale_runtime_file_or_one_without_a_dashboard(state):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    write_runtime(state, pid=gone.pid, dashboard_url="http://127.0.0.1:1")
    one_line_error(cli("--state-dir", str(state)), f"pid {gone.pid}", "has exited")
    write_runtime(state, dashboard_url=None)
    one_line_error(cli("--state-dir", str(state)), "without a dashboard")


def test_new_token_rotates_and_old_addresses_stop_working(state):
    d = start(state)
    try:
        old = d.url
        write_runtime(state, dashboard_url=d.base_url)
        r = cli("--state-dir", str(state), "--new-token")
        assert r.exit_code == 0, r.output
        new = r.stdout.strip()
        assert new != old and new == d.url and "no longer work" in r.stderr
        with httpx.Client(timeout=10, trust_env=False) as c:
            assert c.get(old).status_code == 401 and c.get(new).status_code == 303
    finally:
        d.stop()


@pytest.mark.slow
def test_a_real_proxy_keeps_its_address_across_a_restart_and_the_command_prints_it(tmp_path):
    """`guardian-proxy run` twice on one state dir: the same dashboard address both times, and `guardian-proxy
    dashboard` prints it while the proxy runs, and says no proxy is running once it stopped."""
    import re

    from tests.support.proxy_process import BIN, start_proxy

    cfg = tmp_path / "c.yaml"
    urls = []
    for i in range(2):  # the first run's dashboard port is the kernel's choice (dashboard=True), kept in the config
        px = start_proxy(tmp_path, extra=["--config", str(cfg)] if i else [], dashboard=not i)
        if not i:
            cfg.write_text(f"dashboard_port: {px.dashboard_base.rsplit(':', 1)[1]}\n")
        try:
            m = re.search(r"dashboard: (\S+)", px.output.read_text())
            assert m, px.output.read_text()
            urls.append(m.group(1))
            r = subprocess.run([str(BIN), "dashboard", "--state-dir", str(px.state_dir), "--config", str(cfg)],
                               capture_output=True, text=True, timeout=60)
            assert r.returncode == 0 and r.stdout.strip() == m.group(1), (r.stdout, r.stderr)
        finally:
            px.stop()
    assert urls[0] == urls[1]
    r = subprocess.run([str(BIN), "dashboard", "--state-dir", str(tmp_path / "state"), "--config", str(cfg)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and r.stderr.startswith("error: no guardian-proxy is running"), r.stderr
