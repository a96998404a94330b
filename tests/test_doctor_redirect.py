"""`guardian-proxy doctor` for a proxy started with `--redirect-upstream` (docs/usage.md, docs/cli.md: a way
of trying it out): the runtime file records the redirect, and the doctor sends its test request to that
address instead of reporting "request through the proxy: FAIL" and advising to delete runtime.json."""

from __future__ import annotations

import json
import os

import pytest
from typer.testing import CliRunner

from guardian_proxy import runtime
from guardian_proxy.cli import app
from guardian_proxy.cli.doctor import proxy_checks
from guardian_proxy.config import load_settings
from tests.support.proxy_process import free_port
from tests.support.upstream import start_upstream


def checks(state, rt) -> dict:
    return {c.name: c for c in proxy_checks(load_settings(state_dir=state, dashboard_port=0), rt)}


def test_runtime_record_carries_the_noted_redirect(tmp_path):
    try:
        runtime.note(("127.0.0.1", 9999))
        runtime.write(tmp_path, runtime.info([("127.0.0.1", 8080)], "regular", None, "/c", "/c/ca.pem"))
        assert runtime.read(tmp_path)["redirect_upstream"] == ["127.0.0.1", 9999]
    finally:
        runtime.note(None)
    assert runtime.info([("127.0.0.1", 8080)], "regular", None, "/c", "/c/ca.pem")["redirect_upstream"] is None


def test_a_redirecting_proxy_is_checked_through_its_target(tmp_path):
    """A server that answers absolute-form requests (as the proxy forwards them) stands for the proxy here; the
    real proxy is the slow test below."""
    up = start_upstream()
    try:
        rt = {"pid": os.getpid(), "listen": [["127.0.0.1", up.port]], "mode": "regular",
              "redirect_upstream": ["127.0.0.1", up.port]}
        c = checks(tmp_path, rt)["request through the proxy"]
        assert c.state == "ok" and f"to 127.0.0.1:{up.port}" in c.detail and "--redirect-upstream" in c.detail, c
        assert "runtime.json" not in c.fix
        assert any("/guardian-proxy-doctor/" in r.path for r in up.received)  # absolute form here
    finally:
        up.close()


def test_a_redirect_target_that_does_not_answer_is_said_so(tmp_path):
    up = start_upstream()
    closed = free_port()  # nothing listens there
    try:
        rt = {"pid": os.getpid(), "listen": [["127.0.0.1", up.port]], "mode": "regular",
              "redirect_upstream": ["127.0.0.1", closed]}
        c = checks(tmp_path, rt)["request through the proxy"]
        assert c.state == "fail" and f"--redirect-upstream 127.0.0.1:{closed}, which does not answer" in c.detail
        assert "runtime.json" not in c.fix and f"start the server at 127.0.0.1:{closed}" in c.fix
    finally:
        up.close()


@pytest.mark.slow
def test_doctor_says_ok_for_a_real_proxy_with_redirect_upstream(tmp_path):
    from tests.support.proxy_process import start_proxy

    up = start_upstream()
    px = start_proxy(tmp_path, up.port, extra=["--dashboard-port", "0"])  # start_proxy passes --redirect-upstream
    try:
        assert runtime.read(px.state_dir)["redirect_upstream"] == ["127.0.0.1", up.port]
        r = CliRunner().invoke(app, ["doctor", "--json", "--state-dir", str(px.state_dir), "--dashboard-port", "0"])
        c = {x["name"]: x for x in json.loads(r.stdout)["checks"]}
        t = c["request through the proxy"]
        assert t["state"] == "ok", t
        assert f"to 127.0.0.1:{up.port}" in t["detail"] and "runtime.json" not in t["fix"]
        assert any(x.path.startswith("/guardian-proxy-doctor/") for x in up.received)  # it went there, through
        assert any(x.get("host") == "127.0.0.1" for x in px.log_lines())  # the gateway decided on it
    finally:
        px.stop()
        up.close()
