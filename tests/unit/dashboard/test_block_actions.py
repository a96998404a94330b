"""The 403 block page (mitm/blocking.py blocked_response, kind "page") and what its buttons do on the
dashboard (R-BLOCK-ANSWER, R-OVERRIDE): a link to the decision, "Allow once" / "for 1 hour" / "always" posting
to the dashboard with a per-decision grant, never a bare cross-origin POST. The Chromium run is
tests/test_block_page_browser.py."""

from __future__ import annotations

import re
import time
from html import unescape
from types import SimpleNamespace

import httpx
import pytest
from mitmproxy.test import taddons, tflow

from guardian_proxy.config import load_settings
from guardian_proxy.dashboard import Dashboard
from guardian_proxy.dashboard.block_actions import GRANT_TTL_S, grants_of
from guardian_proxy.mitm.blocking import apply_decision, blocked_response
from guardian_proxy.mitm.hooks import GuardianAddon
from guardian_proxy.overrides import OverrideStore, find_override
from guardian_proxy.types import Action, Decision

NAV = {"sec-fetch-mode": "navigate", "sec-fetch-dest": "document", "sec-fetch-site": "none",
       "accept": "text/html"}
URL = "https://www.blocked.example/article?id=7"


@pytest.fixture
def dash(tmp_path):
    d = Dashboard(load_settings(state_dir=tmp_path / "state"), port=0)
    assert d.start(), d.error
    yield d
    d.stop()


def decision() -> Decision:
    return Decision(action="deny", six=Action(domain="blocked.example", host="www.blocked.example",
                                              recipient="unknown_third_party", basis="user"),
                    explanation="a <b>user</b> rule")


def flow(headers: dict):
    f = tflow.tflow()
    f.request.url = URL
    f.request.headers.clear()
    for k, v in headers.items():
        f.request.headers[k] = v
    return f


def grant_of(page: bytes) -> str:
    m = re.search(rb"name='grant' value='([^']+)'", page)
    assert m, page
    return unescape(m.group(1).decode())


def post(d: Dashboard, grant: str | None, choice: str = "once", **headers):
    form = {"for": choice, **({"grant": grant} if grant is not None else {})}
    h = {"Origin": "null", **headers}
    with httpx.Client(base_url=d.base_url, trust_env=False, timeout=10) as c:
        return c.post("/block/allow", data=form, headers=h, follow_redirects=False)


def store(d: Dashboard) -> OverrideStore:
    return OverrideStore(d.settings.state_dir / "overrides.yaml")


# --------------------------------------------------------------------------- the page


def test_page_links_to_the_decision_and_offers_three_buttons(dash):
    r = blocked_response(decision(), flow(NAV), dashboard=dash)
    body = r.content
    assert r.status_code == 403 and b"Blocked by guardian-proxy" in body
    assert b"&lt;b&gt;user&lt;/b&gt;" in body  # the explanation stays text
    assert f"{dash.base_url}/block/view?grant=".encode() in body and b"id='guardian-decision'" in body
    for label in (b"Allow once", b"Allow this site for 1 hour", b"Always allow this site"):
        assert label in body
    assert f"action='{dash.base_url}/block/allow'".encode() in body
    assert dash.guard.token.encode() not in body  # the dashboard's token never leaves the dashboard
    csp = r.headers["content-security-policy"]
    assert "sandbox allow-forms" in csp and "allow-same-origin" not in csp and "frame-ancestors 'none'" in csp
    assert r.headers["x-frame-options"] == "DENY" and r.headers["cache-control"] == "no-store"


def test_no_dashboard_no_link_and_no_buttons():
    body = blocked_response(decision(), flow(NAV)).content  # no mitmproxy master, no dashboard
    assert b"Blocked by guardian-proxy" in body and b"/block/" not in body and b"<form" not in body
    assert b"guardian-proxy allow blocked.example --once" in body  # what to do instead


def test_buttons_only_for_a_navigation_the_browser_attests(dash):
    for headers in ({"accept": "text/html"},  # a non-browser client, or a script where Fetch Metadata is missing
                    {**NAV, "sec-fetch-dest": "iframe"}):  # framed: kind "page", but no buttons
        r = blocked_response(decision(), flow(headers), dashboard=dash)
        assert r.status_code == 403 and b"<form" not in r.content and b"/block/view" in r.content


def test_the_running_addons_dashboard_is_found_by_the_hook(dash):
    addon = GuardianAddon(SimpleNamespace(settings=None), dashboard=dash)
    with taddons.context(addon):
        f = flow(NAV)
        apply_decision(f, decision())
    assert b"/block/allow" in f.response.content


# --------------------------------------------------------------------------- the dashboard's side


def test_allow_once_adds_a_once_rule_and_sends_the_browser_back(dash):
    g = grant_of(blocked_response(decision(), flow(NAV), dashboard=dash).content)
    r = post(dash, g, "once")
    assert r.status_code == 303 and r.headers["location"] == URL
    (rule,) = store(dash).current()
    assert (rule.action, rule.domain, rule.once) == ("allow", "blocked.example", True)
    act = Action(domain="blocked.example", host="www.blocked.example")
    cur = store(dash).current()
    assert find_override(cur, act) is not None and find_override(cur, act) is None  # once, then spent
    assert post(dash, g, "forever").status_code == 409  # a grant is used once
    assert len(store(dash).current()) == 1


@pytest.mark.parametrize("choice,check", [("1h", lambda o: o.expires is not None and not o.once),
                                          ("forever", lambda o: not (o.once or o.expires or o.run))])
def test_the_other_buttons(dash, choice, check):
    g = grant_of(blocked_response(decision(), flow(NAV), dashboard=dash).content)
    assert post(dash, g, choice).status_code == 303
    (rule,) = store(dash).current()
    assert rule.domain == "blocked.example" and check(rule)


def test_no_bare_or_forged_cross_origin_post_is_accepted(dash):
    g = grant_of(blocked_response(decision(), flow(NAV), dashboard=dash).content)
    payload, _, mac = g.partition(".")
    other = grants_of(dash).issue("x", "evil.example", "https://evil.example/")
    cases = [post(dash, None),  # a bare cross-origin form post
             post(dash, payload + "." + mac[::-1]),  # altered proof
             post(dash, other.split(".")[0] + "." + mac),  # another payload with this proof
             post(dash, g, Origin="https://evil.example"),  # someone else's page
             post(dash, g, Host="evil.example:80"),  # DNS rebinding
             post(dash, g, "always-and-forever")]
    assert [r.status_code for r in cases] == [403, 403, 403, 403, 403, 400]
    old = grants_of(dash).issue("d1", "blocked.example", URL, at=time.time() - GRANT_TTL_S - 60)
    assert post(dash, old).status_code == 403
    with httpx.Client(base_url=dash.base_url, trust_env=False) as c:  # not the form: refused
        assert c.post("/block/allow", json={"grant": g, "for": "once"}).status_code == 415
    assert store(dash).current() == []
    assert post(dash, g).status_code == 303  # the real one still works, once


def test_another_dashboards_grant_is_refused(tmp_path, dash):
    other = Dashboard(load_settings(state_dir=tmp_path / "other"), port=0)
    g = grants_of(other).issue("d", "blocked.example", URL)
    assert post(dash, g).status_code == 403


def test_the_link_shows_the_decision_with_its_grant_only(dash):
    d = decision()
    g = grant_of(blocked_response(d, flow(NAV), dashboard=dash).content)
    with httpx.Client(base_url=dash.base_url, trust_env=False) as c:
        r = c.get("/block/view", params={"grant": g}, headers={"Sec-Fetch-Site": "cross-site"})
        assert r.status_code == 200 and d.id in r.text and "Open the dashboard" in r.text
        assert c.get("/block/view", params={"grant": g[:-2] + "xx"}).status_code == 403
        assert c.get("/block/view").status_code == 403
