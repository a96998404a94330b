"""A user's `deny --once` rule and the browser's CORS preflight: the preflight (OPTIONS with Origin and
Access-Control-Request-Method) only asks whether the call may follow. It sees whether the rule applies, and is
answered by it, without spending it; the call that follows is what the rule is for (before: the preflight spent
the once rule and the real POST went out)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from guardian_proxy.cli import app
from guardian_proxy.config import load_settings
from guardian_proxy.overrides import is_preflight
from guardian_proxy.pipeline import Gateway
from guardian_proxy.types import RawRequest

TRACKER = "www.google-analytics.com"
ORIGIN = "https://shop.example"
URL = f"https://{TRACKER}/g/collect?v=2"
PREFLIGHT = [("origin", ORIGIN), ("access-control-request-method", "POST"),
             ("access-control-request-headers", "content-type"), ("sec-fetch-mode", "cors")]
CALL = [("origin", ORIGIN), ("content-type", "application/json"), ("sec-fetch-mode", "cors")]
BODY = b'{"cid":"555.1","page":"/cart"}'


def rows(state) -> list[dict]:
    r = CliRunner().invoke(app, ["overrides", "--json", "--state-dir", str(state)])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_is_preflight_needs_origin_and_the_asked_method():
    assert is_preflight(RawRequest(method="OPTIONS", url=URL, headers=PREFLIGHT))
    assert not is_preflight(RawRequest(method="OPTIONS", url=URL, headers=[("origin", ORIGIN)]))
    assert not is_preflight(RawRequest(method="POST", url=URL, headers=PREFLIGHT))


def test_a_preflight_is_denied_by_a_once_rule_without_spending_it(tmp_path):
    cfg = tmp_path / "config.yaml"
    cfg.write_text(f"state_dir: {tmp_path}\ndetector: {{ner: false}}\n")
    gw = Gateway.from_settings(load_settings(cfg), with_log=False)
    r = CliRunner().invoke(app, ["deny", TRACKER, "--once", "--state-dir", str(tmp_path)])
    assert r.exit_code == 0, r.output
    pre = gw.evaluate(RawRequest(method="OPTIONS", url=URL, headers=PREFLIGHT))
    assert pre.action == "deny" and pre.override and "once" in pre.override
    pre2 = gw.evaluate(RawRequest(method="OPTIONS", url=URL, headers=PREFLIGHT))  # a retried preflight too
    assert pre2.action == "deny"
    call = gw.evaluate(RawRequest(method="POST", url=URL, headers=CALL, body=BODY))
    assert call.action == "deny" and call.override and "once" in call.override
    again = gw.evaluate(RawRequest(method="POST", url=URL, headers=CALL, body=BODY))
    assert again.override is None  # spent by the POST
    assert gw.evaluate(RawRequest(method="OPTIONS", url=URL, headers=PREFLIGHT)).override is None
    gw.overrides.flush()
    (row,) = rows(tmp_path)
    assert row["state"] == "spent" and row["matched"] == 1


@pytest.mark.slow
def test_through_the_proxy_the_preflight_and_the_post_are_both_blocked_and_the_post_spends_the_rule(tmp_path):
    import httpx

    from tests.support.proxy_process import start_proxy
    from tests.support.upstream import start_upstream

    state = tmp_path / "state"
    r = CliRunner().invoke(app, ["deny", TRACKER, "--once", "--state-dir", str(state)])
    assert r.exit_code == 0, r.output
    up = start_upstream()
    px = start_proxy(tmp_path, up.port, extra=["--dashboard-port", "0"])
    try:
        url = f"http://{TRACKER}/g/collect?v=2"
        with httpx.Client(proxy=px.url, timeout=60, trust_env=False) as c:
            pre = c.request("OPTIONS", url, headers=dict(PREFLIGHT))
            assert pre.status_code == 204 and pre.headers["x-guardian-blocked"] == "preflight", pre.headers
            assert "POST" in pre.headers["access-control-allow-methods"]
            call = c.post(url, content=BODY, headers=dict(CALL))
            assert call.status_code in (204, 403) and call.headers.get("x-guardian-blocked"), call.headers
            assert not [x for x in up.received if "/g/collect" in x.path]  # neither left the machine
            (row,) = rows(state)
            assert row["state"] == "spent", row  # by the POST: the preflight before it left the rule for it
            after = c.post(url, content=BODY, headers=dict(CALL))
            assert "x-guardian-blocked" not in after.headers  # spent: the next call is decided as before the rule
        lines = [x for x in px.log_lines() if x.get("host") == TRACKER]
        assert [(x.get("method"), x.get("action")) for x in lines][:2] == [("OPTIONS", "deny"), ("POST", "deny")]
    finally:
        px.stop()
        up.close()
