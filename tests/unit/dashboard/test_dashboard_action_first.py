"""The dashboard and the block page put the action first (docs/dashboard.md): the detail view's one plain
sentence, the stand-ins that left shown as themselves (marked) and never an original value, the Overrides
tab's facts, the live table's switch and the Sites view's preflight count, the histogram by decision, the
block page's words and its link into the dashboard's own detail view. In-process; the Chromium run is
test_dashboard_action_first_browser.py."""

from __future__ import annotations

import json

from guardian_proxy.dashboard import wording
from guardian_proxy.dashboard.detail import detail_of
from guardian_proxy.types import Action, Decision, RawRequest, Rewrite

ORIGINAL_EMAIL = "jane.doe@gmail.com"
ORIGINAL_PHONE = "+1 415 867 5309"


def _transform(body: dict, out: dict, url_q: str = "", out_q: str = "", spans=None) -> tuple[RawRequest, Decision]:
    req = RawRequest(method="POST", url=f"https://api.segment.io/v1/t{url_q}",
                     headers=[("content-type", "application/json")], body=json.dumps(body).encode())
    rw = Rewrite(body=json.dumps(out).encode(), url=f"https://api.segment.io/v1/t{out_q}",
                 span_counts=spans or {"EMAIL_ADDRESS": 1})
    d = Decision(action="transform", six=Action(domain="segment.io", host="api.segment.io", recipient="analytics",
                                                site="shop.example", categories={"contact": 1}),
                 rewrite=rw, start_level=2, final_level=2)
    return req, d


def test_the_sentence_names_the_data_the_destination_and_the_page():
    req, d = _transform({"email": ORIGINAL_EMAIL}, {"email": "kmiller@example.com"})
    det = detail_of(req, d)
    assert det["sentence"] == ("Your e-mail address was replaced with a stand-in before it went to segment.io "
                               "(analytics), sent by shop.example.")


def test_stand_ins_that_left_are_shown_marked_and_originals_never():
    req, d = _transform({"email": ORIGINAL_EMAIL, "phone": ORIGINAL_PHONE, "n": 1},
                        {"email": "kmiller@example.com", "phone": "+1 415 555 0142", "other": "bob@gmail.com"},
                        url_q="?u=jane.doe%40gmail.com", out_q="?u=kmiller%40example.com",
                        spans={"EMAIL_ADDRESS": 2, "PHONE_NUMBER": 1})
    det = detail_of(req, d)
    rw = det["rewritten"]
    assert {"type": "EMAIL_ADDRESS", "value": "kmiller@example.com"} in rw["standins"]
    assert {"type": "PHONE_NUMBER", "value": "+1 415 555 0142"} in rw["standins"]
    assert ["kmiller@example.com", "EMAIL_ADDRESS"] in rw["body_parts"]
    assert rw["query_parts"] == [["u", [["kmiller@example.com", "EMAIL_ADDRESS"]]]]
    # a real-looking value the rewrite left is not a stand-in: still masked
    assert "bob@gmail.com" not in json.dumps(det) and "[EMAIL_ADDRESS]" in rw["body"]
    dumped = json.dumps(det)
    assert ORIGINAL_EMAIL not in dumped and "867 5309" not in dumped and "8675309" not in dumped
    assert det["sentence"].startswith("Your 2 e-mail addresses and phone number were replaced with stand-ins")


def test_a_fiction_value_that_was_already_in_the_original_is_not_called_a_stand_in():
    req, d = _transform({"email": "test@example.com"}, {"email": "test@example.com"})
    rw = detail_of(req, d)["rewritten"]
    assert rw["standins"] == [] and "test@example.com" not in rw["body"]


def test_block_and_allow_sentences():
    rec = {"action": "deny", "host": "t.broker.example", "domain": "broker.example", "recipient": "data_broker",
           "site": "shop.example"}
    assert wording.sentence(rec, {"EMAIL_ADDRESS": 1}) == (
        "Your e-mail address, sent by shop.example to a data broker (broker.example), was stopped before it left "
        "this machine.")
    rec = {"action": "allow", "host": "cdn.example", "recipient": "service_provider"}
    assert wording.sentence(rec, {}) == ("This request to cdn.example (service provider), sent by an app or tool "
                                         "(no web page), went as it was; no personal data was found in it.")
    rec = {"action": "deny", "host": "www.blocked.example", "domain": "blocked.example", "recipient": "first_party",
           "override": "deny blocked.example (user rule)"}
    assert wording.sentence(rec, {}).endswith("was stopped before it left this machine; no personal data was found "
                                              "in it. Your rule decided it: deny blocked.example (user rule).")
    assert wording.data_words({}, {"contact": 2, "health": 1}) == "your contact details and health details"


# --------------------------------------------------------------------------- the block page

NAV = {"sec-fetch-mode": "navigate", "sec-fetch-dest": "document", "sec-fetch-site": "none", "accept": "text/html"}


def _nav_flow(tflow):
    f = tflow.tflow()
    f.request.url = "https://t.broker.example/collect"
    f.request.headers.clear()
    for k, v in NAV.items():
        f.request.headers[k] = v
    return f


def _blocked():
    from guardian_proxy.types import Span, TextField

    a = Action(domain="broker.example", host="t.broker.example", recipient="data_broker", site="shop.example",
               categories={"contact": 1},
               fields=[TextField(path="json:$.email", text="x")],
               spans=[Span(path="json:$.email", entity="EMAIL_ADDRESS", category="contact", start=0, end=1, text="x")])
    return Decision(action="deny", six=a, explanation="contact → data_broker for marketing → R 0.91 ≥ 0.60")


def test_the_block_pages_reason_names_the_data_and_the_page_then_the_numbers(tmp_path):
    from mitmproxy.test import tflow

    from guardian_proxy.mitm.blocking import blocked_response

    f = _nav_flow(tflow)
    body = blocked_response(_blocked(), f).content.decode()
    reason = body.index("id='guardian-reason'")
    assert ("Your e-mail address, sent by shop.example to a data broker (broker.example), was stopped before it "
            "left this machine.") in body
    assert "R 0.91 ≥ 0.60" in body and body.index("R 0.91") > reason  # the words first, then the numbers


def test_see_this_decision_opens_the_dashboards_own_detail_view(tmp_path):
    import re
    from html import unescape

    import httpx
    from mitmproxy.test import tflow

    from guardian_proxy.config import load_settings
    from guardian_proxy.dashboard import Dashboard
    from guardian_proxy.decision_log import record
    from guardian_proxy.mitm.blocking import blocked_response

    dash = Dashboard(load_settings(state_dir=tmp_path / "state"), port=0)
    assert dash.start(), dash.error
    try:
        d = _blocked()
        req = RawRequest(method="POST", url="https://t.broker.example/collect", body=b'{"email":"a@b.c"}')
        dash.hub.publish(record(req, d), detail_of(req, d))
        f = _nav_flow(tflow)
        page = blocked_response(d, f, dashboard=dash).content.decode()
        link = unescape(re.search(r"id='guardian-decision' href='([^']+)'", page).group(1))
        with httpx.Client(trust_env=False) as c:
            r = c.get(link, headers={"Sec-Fetch-Site": "cross-site"})
            assert r.status_code == 200 and "Your e-mail address, sent by shop.example" in r.text
            there = unescape(re.search(r"http-equiv='refresh' content='0;url=([^']+)'", r.text).group(1))
            assert there.endswith(f"#decision={d.id}") and there.startswith("/?token=")
            # the refresh is the dashboard's own page moving on: same-origin, the token sets the cookie
            r2 = c.get(dash.base_url + there.split("#")[0], headers={"Sec-Fetch-Site": "same-origin"},
                       follow_redirects=True)
            assert r2.status_code == 200 and "guardian-token" in r2.text
            det = c.get(f"{dash.base_url}/api/decision/{d.id}").json()
            assert det["sentence"].startswith("Your e-mail address, sent by shop.example")
    finally:
        dash.stop()


# --------------------------------------------------------------------------- the live table, Sites, the histogram


def _summary(host, action="allow", categories=None, method="GET", site="shop.example", r=None):
    return {"host": host, "action": action, "categories": categories or {}, "method": method, "site": site,
            "ts": 1.0, **({"R": r} if r is not None else {})}


def test_the_switch_hides_requests_that_carried_no_personal_data():
    from guardian_proxy.dashboard.query import parse

    keep = parse("data:yes")
    assert keep(_summary("a.example", categories={"contact": 1}))
    assert not keep(_summary("update.browser.example"))
    assert keep(_summary("b.example", categories={"unparsed": 1}))  # unknown content is never hidden
    assert parse("data:no")(_summary("update.browser.example"))
    import pytest

    with pytest.raises(ValueError):
        parse("data:maybe")


def test_cors_preflights_are_counted_apart_in_sites():
    from guardian_proxy.dashboard.sites import group_by_site

    rows = [_summary("api.tracker.example", method="OPTIONS"), _summary("api.tracker.example", method="OPTIONS"),
            _summary("api.tracker.example", "deny", {"contact": 1}, method="POST"),
            _summary("cdn.other.example", method="OPTIONS")]
    (g,) = group_by_site(rows)
    assert g["requests"] == 1 and g["preflights"] == 3
    assert [t["domain"] for t in g["third"]] == ["tracker.example"]  # only-preflight third parties are not listed
    assert g["third"][0]["requests"] == 1 and g["third"][0]["preflights"] == 2


def test_the_histogram_is_split_by_decision():
    from guardian_proxy.dashboard.stats import summarize

    h = summarize([_summary("a", "allow", r=0.05), _summary("b", "transform", r=0.45),
                   _summary("c", "deny", r=0.42), _summary("d", "deny", r=0.95)]).to_dict()["risk_histogram"]
    assert h["counts"][4] == 2 and h["by_action"]["transform"][4] == 1 and h["by_action"]["deny"][4] == 1
    assert h["by_action"]["allow"][0] == 1 and h["by_action"]["deny"][9] == 1


# --------------------------------------------------------------------------- the Overrides tab's facts


def test_the_overrides_list_has_term_end_matches_and_owner_apart(tmp_path):
    from guardian_proxy.config import load_settings
    from guardian_proxy.overrides import DashboardOverrides

    ov = DashboardOverrides(load_settings(state_dir=tmp_path / "state"))
    assert ov.entries() == []  # the page shows its empty-state text
    ov.add("allow", "tracker.example", term="1h")
    ov.add("deny", "broker.example", term="once")
    rows = {r["domain"]: r for r in ov.entries()}
    one_h = rows["tracker.example"]
    assert one_h["created"] and one_h["expires"] and one_h["matched"] == 0 and "last_matched" in one_h
    assert rows["broker.example"]["once"] is True and rows["broker.example"]["state"] == "active"


def test_a_decision_of_an_earlier_run_gets_its_sentence_from_the_log_record():
    from guardian_proxy.dashboard.hub import Hub

    h = Hub()
    h.seed([{"id": "abc", "action": "deny", "host": "t.broker.example", "recipient": "data_broker",
             "site": "shop.example", "categories": {"contact": 1}}])
    assert h.detail("abc")["sentence"] == ("Your contact details, sent by shop.example to a data broker "
                                           "(t.broker.example), were stopped before they left this machine.")
