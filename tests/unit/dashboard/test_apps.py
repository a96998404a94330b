"""The per-app view (guardian_proxy/dashboard/apps.py): decisions grouped by the program that sent them, over real
HTTP to a real Dashboard (`/api/apps`, the live filter applied) and as a pure grouping; the override the Apps tab's
buttons make names the program."""

from __future__ import annotations

import shlex

import pytest

from guardian_proxy.dashboard.apps import Apps, group_by_app, identity
from guardian_proxy.dashboard.query import parse
from tests.unit.dashboard.test_dashboard_live import client, dash, decision, raw  # noqa: F401 (dash: a fixture)

AGENT = {"name": "python3 agent.py", "pid": 978, "exe": "/usr/bin/python3.11", "kind": "tool"}
AGENT2 = {"name": "python3 agent.py", "pid": 979, "exe": "/usr/bin/python3.11", "kind": "tool"}
CURL = {"name": "curl", "pid": 977, "exe": "/usr/bin/curl", "kind": "tool"}
CHROMIUM = {"name": "chromium", "pid": 501, "exe": "/usr/lib/chromium/chromium", "kind": "browser"}
REMOTE = {"name": "remote"}
NO_PERMISSION = {"name": "unknown", "why": "no-permission"}

#: (host, action, site, categories, recipient, app, method)
MADE = [
    ("api.openai.com", "transform", None, {"identity": 1, "contact": 1}, "ai_service", AGENT, "POST"),
    ("api.openai.com", "allow", None, {}, "ai_service", AGENT2, "POST"),
    ("t.broker.example", "deny", None, {"contact": 1}, "data_broker", AGENT, "POST"),
    ("px.tracker.example", "deny", None, {"device_id": 1}, "ad_network", CURL, "GET"),
    ("www.shop.example", "allow", "shop.example", {}, "first_party", CHROMIUM, "GET"),
    ("api.segment.io", "transform", "shop.example", {"contact": 1}, "analytics", CHROMIUM, "POST"),
    ("api.segment.io", "allow", "shop.example", {}, "analytics", CHROMIUM, "OPTIONS"),  # a CORS preflight
    ("www.example.org", "allow", None, {}, "unknown_third_party", REMOTE, "GET"),
    ("www.example.org", "allow", None, {"contact": 1}, "unknown_third_party", NO_PERMISSION, "POST"),
    ("old.example", "allow", None, {}, "unknown_third_party", None, "GET"),  # a record without the field
]


def records() -> list[dict]:
    return [{"ts": 1000.0 + i, "id": f"r{i}", "host": h, "action": a, "site": s, "categories": c, "recipient": r,
             "method": m, **({"app": app} if app else {})} for i, (h, a, s, c, r, app, m) in enumerate(MADE)]


def by_app(groups: list[dict]) -> dict:
    return {g["label"]: g for g in groups}


def test_grouping_per_program():
    groups = group_by_app(records())
    # programs found first (the busiest first), then those that cannot be known, then records without the field
    assert [g["app"] for g in groups] == ["python3 agent.py", "chromium", "curl", "remote", "unknown", None]
    agent = groups[0]
    assert agent["known"] and agent["kind"] == "tool" and agent["exe"] == "/usr/bin/python3.11"
    assert agent["processes"] == 2  # two runs of the script, one program
    assert agent["requests"] == 3 and agent["with_data"] == 2
    assert agent["actions"] == {"allow": 1, "transform": 1, "deny": 1}
    assert agent["rewritten"] == {"identity": 1, "contact": 1} and agent["blocked"] == {"contact": 1}
    assert agent["as_is"] == {} and agent["sites"] == {}
    assert agent["recipients"] == {"ai_service": 2, "data_broker": 1}
    assert [d["domain"] for d in agent["destinations"]] == ["openai.com", "broker.example"]
    openai = agent["destinations"][0]
    assert openai["hosts"] == ["api.openai.com"] and openai["requests"] == 2 and openai["recipient"] == "ai_service"
    assert openai["actions"] == {"allow": 1, "transform": 1, "deny": 0} and openai["rewritten"] == {"identity": 1,
                                                                                                    "contact": 1}
    assert agent["rule_app"] == "python3 agent.py" and agent["filter"] == 'app:"python3 agent.py"'
    chromium = groups[1]
    assert chromium["requests"] == 2 and chromium["preflights"] == 1  # the preflight is counted apart
    assert chromium["sites"] == {"shop.example": 2} and chromium["kind"] == "browser"
    assert [d["domain"] for d in chromium["destinations"]] == ["segment.io", "shop.example"]
    assert chromium["destinations"][0]["requests"] == 1


def test_programs_that_cannot_be_known_are_shown_as_procinfo_words_them():
    groups = by_app(group_by_app(records()))
    remote = next(g for g in groups.values() if g["app"] == "remote")
    assert remote["label"].startswith("another machine") and not remote["known"] and remote["exe"] is None
    unknown = next(g for g in groups.values() if g["app"] == "unknown")
    assert unknown["label"].startswith("this machine, program not known: no permission")
    assert unknown["why"] == "no-permission" and unknown["with_data"] == 1
    missing = next(g for g in groups.values() if g["app"] is None)
    assert missing["label"].startswith("not recorded") and missing["filter"] is None and missing["rule_app"] is None
    # each `why` is its own group; every why procinfo states has words
    assert identity({"name": "unknown", "why": "gone"})["label"] != unknown["label"]
    from guardian_proxy.dashboard.apps import WHY

    for why in ("no-permission", "udp", "gone", "not-found", "scan-limit", "unsupported", "timeout", "error"):
        assert why in WHY and "unknown" not in WHY[why]


def test_each_groups_filter_selects_exactly_its_decisions():
    recs = records()
    for g in group_by_app(recs):
        if g["filter"] is None:
            continue
        keep = parse(g["filter"])
        mine = [r for r in recs if keep(r)]
        assert len(mine) == g["requests"] + g["preflights"], g["label"]
        assert {identity(r.get("app"))["label"] for r in mine} == {g["label"]}
    assert shlex.split(identity(AGENT)["filter"]) == ["app:python3 agent.py"]
    odd = {"name": 'my "tool" \\x', "pid": 1}
    assert shlex.split(identity(odd)["filter"]) == ['app:my "tool" \\x'] and parse(identity(odd)["filter"])({"app": odd})


def test_bounded_programs_and_destinations():
    apps = Apps(max_apps=2)
    for i in range(5):
        apps.add({"host": f"h{i}.example", "action": "allow", "app": {"name": f"tool{i}", "pid": i}})
    groups = apps.to_list()
    assert len(groups) == 3 and groups[-1]["label"] == "other programs" and groups[-1]["requests"] == 3
    many = group_by_app(({"host": f"h{i}.example", "action": "allow", "app": CURL} for i in range(60)),
                        destinations=50)
    assert len(many[0]["destinations"]) == 50 and many[0]["more_destinations"] == 10 and many[0]["requests"] == 60


def test_no_value_in_the_view():
    recs = records()
    recs[0]["path"] = "/v1/chat?email=jane.doe@example.com"
    recs[0]["explanation"] = "jane.doe@example.com"
    assert "jane" not in repr(group_by_app(recs))


def publish(d) -> None:
    for host, action, site, cats, recipient, app, method in MADE:
        req = raw(host, method=method)
        d.publish(req.model_copy(update={"app": app}), decision(host, action, site, cats, recipient))


def test_api_apps_groups_the_recent_decisions_and_takes_the_filter(dash):  # noqa: F811 (a fixture)
    publish(dash)
    with client(dash) as c:
        r = c.get("/api/apps")
        assert r.status_code == 200, r.text
        groups = r.json()["apps"]
        blocked = c.get("/api/apps", params={"q": "action:blocked"}).json()["apps"]
        agent_only = c.get("/api/apps", params={"q": "app:agent.py"}).json()["apps"]
        assert c.get("/api/apps", params={"q": "action:nope"}).status_code == 400
        assert c.get("/api/apps", headers={"X-Guardian-Token": "wrong"}).status_code == 401
    assert [g["app"] for g in groups] == ["python3 agent.py", "chromium", "curl", "remote", "unknown", None]
    assert groups[0]["requests"] == 3 and groups[0]["actions"] == {"allow": 1, "transform": 1, "deny": 1}
    assert {g["app"]: g["requests"] for g in blocked} == {"python3 agent.py": 1, "curl": 1}
    assert [g["app"] for g in agent_only] == ["python3 agent.py"]


@pytest.mark.parametrize("app", ["python3 agent.py", "remote"])
def test_an_override_for_one_program_from_the_api(dash, app):  # noqa: F811 (a fixture)
    from guardian_proxy.overrides import OverrideStore

    with client(dash) as c:
        r = c.post("/api/overrides", json={"action": "deny", "domain": "api.openai.com", "app": app, "for": "1h"})
        assert r.status_code == 200, r.text
        rule = r.json()["overrides"][-1]
        assert rule["app"] == app and rule["domain"] == "api.openai.com" and rule["action"] == "deny"
        assert c.post("/api/overrides", json={"action": "deny", "domain": "x.example", "app": 7}).status_code == 400
        assert c.post("/api/overrides", json={"action": "deny", "domain": "x.example",
                                              "app": "x" * 121}).status_code == 400
    [stored] = OverrideStore.for_settings(dash.settings).current()  # what the proxy re-reads
    assert stored.app == app and stored.expires is not None
