"""The live view's API over real HTTP to a real Dashboard: filter and search, a filtered event stream, the per-site
view, decoded "what left the machine", plain words before numbers without contradictions, the run options in the
configuration view, and a restart on the same state dir that an open page survives."""

from __future__ import annotations

import json
import queue
import threading
import time

import httpx
import pytest

from guardian_proxy.config import load_settings
from guardian_proxy.dashboard import Dashboard, wording
from guardian_proxy.dashboard.detail import detail_of
from guardian_proxy.dashboard.query import parse
from guardian_proxy.risk import decide
from guardian_proxy.types import Action, Decision, RawRequest, Rewrite, Risk


def risk(R: float, lo: float = 0.15, hi: float = 0.60, tier: str = "high") -> Risk:
    return Risk(Sd=0.8, Mtr=1.0, Mp=1.0, Mb=1.0, MT=1.0, Seff=0.8, R=R, tier=tier, allow_ceiling=lo, deny_floor=hi)


def decision(host: str, action: str, site: str | None = None, cats: dict | None = None, recipient: str = "analytics",
             R: float = 0.3, start: int | None = None, final: int | None = None, rounds: int = 0,
             explanation: str = "", rewrite: Rewrite | None = None, extra: dict | None = None) -> Decision:
    from guardian_proxy.domains import registrable_domain

    return Decision(action=action, six=Action(domain=registrable_domain(host), host=host, categories=cats or {},
                                              recipient=recipient, site=site),
                    risk=risk(R), start_level=start, final_level=final, rounds=rounds,
                    explanation=explanation or f"data to {recipient} → R {R:.2f}", rewrite=rewrite,
                    extra=extra or {})


def raw(host: str, path: str = "/collect", method: str = "POST", body: bytes = b"{}",
        ctype: str = "application/json") -> RawRequest:
    return RawRequest(method=method, url=f"https://{host}{path}", headers=[("content-type", ctype)], body=body)


@pytest.fixture
def dash(tmp_path):
    d = Dashboard(load_settings(state_dir=tmp_path / "state"), port=0, proxy=("127.0.0.1", 8080))
    assert d.start(), d.error
    yield d
    d.stop()


def client(d: Dashboard) -> httpx.Client:
    return httpx.Client(base_url=d.base_url, headers={"X-Guardian-Token": d.guard.token}, timeout=10, trust_env=False)


SHOP = [  # what a page on shop.example talked to, and one request with no page
    ("www.shop.example", "allow", "shop.example", {}, "first_party"),
    ("www.google-analytics.com", "transform", "shop.example", {"contact": 1}, "analytics"),
    ("ads.doubleclick.net", "deny", "shop.example", {"financial": 1, "contact": 1}, "ad_network"),
    ("stats.doubleclick.net", "allow", "shop.example", {"device_id": 2}, "ad_network"),
    ("connect.facebook.net", "allow", "news.example", {"cookie": 1}, "social"),
    ("api.github.com", "allow", None, {}, "service_provider"),
]


def publish_shop(d: Dashboard) -> list[Decision]:
    out = []
    for host, action, site, cats, recipient in SHOP:
        dec = decision(host, action, site, cats, recipient, start=1 if action == "transform" else None,
                       final=1 if action == "transform" else None)
        d.publish(raw(host), dec)
        out.append(dec)
    return out


# ------------------------------------------------------------------ filter and search


@pytest.mark.parametrize("q, hosts", [
    ("host:doubleclick", ["ads.doubleclick.net", "stats.doubleclick.net"]),
    ("action:blocked", ["ads.doubleclick.net"]),
    ("action:deny", ["ads.doubleclick.net"]),
    ("action:rewritten", ["www.google-analytics.com"]),
    ("category:contact", ["www.google-analytics.com", "ads.doubleclick.net"]),
    ("cat:fin", ["ads.doubleclick.net"]),
    ("recipient:ad_network", ["ads.doubleclick.net", "stats.doubleclick.net"]),
    ('recipient:"ad network"', ["ads.doubleclick.net", "stats.doubleclick.net"]),
    ("site:news.example", ["connect.facebook.net"]),
    ("host:doubleclick -action:blocked", ["stats.doubleclick.net"]),
    ("GITHUB", ["api.github.com"]),
    ("blocked contact", ["ads.doubleclick.net"]),
])
def test_snapshot_filter(dash, q, hosts):
    publish_shop(dash)
    with client(dash) as c:
        r = c.get("/api/snapshot", params={"q": q})
    assert r.status_code == 200, r.text
    snap = r.json()
    assert [d["host"] for d in snap["recent"]] == hosts
    assert snap["matched"] == len(hosts) and snap["stats"]["total"] == len(SHOP)  # the cards count everything


def test_bad_filter_is_a_400_that_says_why(dash):
    with client(dash) as c:
        r = c.get("/api/snapshot", params={"q": "action:maybe"})
        assert r.status_code == 400 and "allowed, rewritten or blocked" in r.json()["error"]
        assert c.get("/api/snapshot").json()["matched"] is None  # no filter: everything, not "0 matching"


def test_event_stream_sends_only_what_the_filter_matches(dash):
    got: queue.Queue = queue.Queue()
    ready = threading.Event()

    def read():
        with client(dash) as c, c.stream("GET", "/api/events", params={"q": "action:blocked"},
                                         timeout=httpx.Timeout(10, read=None)) as r:
            ready.set()
            for line in r.iter_lines():
                if line.startswith("data: "):
                    got.put(json.loads(line[6:]))

    threading.Thread(target=read, daemon=True).start()
    assert ready.wait(5)
    deadline = time.time() + 5
    while dash.hub.subscribers < 1:
        assert time.time() < deadline
        time.sleep(0.02)
    publish_shop(dash)
    first = got.get(timeout=5)
    assert first["host"] == "ads.doubleclick.net" and first["verdict"] == "blocked"
    with pytest.raises(queue.Empty):
        got.get(timeout=0.5)


def test_query_parser_is_the_rule_the_page_uses():
    q = parse('host:shop action:blocked cat:contact "two words" -recipient:social')
    assert q.terms == [("host", "shop", False), ("action", "deny", False), ("category", "contact", False),
                       ("", "two words", False), ("recipient", "social", True)]
    assert not parse("   ") and not parse("host:")  # an empty filter (or key) matches everything
    assert parse("nothing:here").terms == [("", "nothing:here", False)]  # an unknown key is a word


# ------------------------------------------------------------------ per-site view


def test_sites_group_what_each_page_talked_to(dash):
    publish_shop(dash)
    with client(dash) as c:
        sites = c.get("/api/sites").json()["sites"]
        only_blocked = c.get("/api/sites", params={"q": "action:blocked"}).json()["sites"]
    assert [g["site"] for g in sites] == ["shop.example", "news.example", None]
    shop = sites[0]
    assert shop["requests"] == 4 and shop["own_requests"] == 1 and shop["third_parties"] == 2
    assert shop["actions"] == {"allow": 2, "transform": 1, "deny": 1}
    dc = next(t for t in shop["third"] if t["domain"] == "doubleclick.net")
    assert sorted(dc["hosts"]) == ["ads.doubleclick.net", "stats.doubleclick.net"] and dc["requests"] == 2
    assert dc["as_is"] == {"device_id": 2} and dc["blocked"] == {"financial": 1, "contact": 1} and dc["rewritten"] == {}
    ga = next(t for t in shop["third"] if t["domain"] == "google-analytics.com")
    assert ga["rewritten"] == {"contact": 1} and ga["recipient"] == "analytics"
    assert sites[2]["third_parties"] == 1 and sites[2]["own_requests"] == 0  # no page: every destination listed
    assert [g["site"] for g in only_blocked] == ["shop.example"] and only_blocked[0]["third_parties"] == 1


# ------------------------------------------------------------------ plain words, then numbers, no contradictions


@pytest.mark.parametrize("R, band, text", [
    (0.60, "deny", "R 0.60 is in the block band: at the deny floor 0.60"),
    (0.5996, "transform", "R 0.5996 is in the rewrite band: above the allow ceiling 0.15 and below the deny floor 0.60"),
    (0.604, "deny", "R 0.604 is in the block band: above the deny floor 0.60"),
    (0.15, "allow", "R 0.15 is in the allow band: at the allow ceiling 0.15"),
    (0.1504, "transform", "R 0.1504 is in the rewrite band"),
    (0.40, "transform", "R 0.40 is in the rewrite band"),
    (0.05, "allow", "R 0.05 is in the allow band: below the allow ceiling 0.15"),
])
def test_a_boundary_value_reads_as_the_band_decide_puts_it_in(R, band, text):
    r = risk(R)
    assert decide(r)[0] == band
    assert wording.band_words(r).startswith(text)


def test_escalation_names_both_levels_and_why():
    rec = {"action": "transform", "start_level": 1, "final_level": 2, "rounds": 2,
           "explanation": "contact data to an analytics service for analytics in a request the page made; policy "
                          "vague → R 0.10 ≤ allow ceiling 0.15 (high tier), but identifiers never go to an "
                          "analytics service as they are → rewrite from L1",
           "anonymize": {"upgrade_cues": {"email_domain": 1}, "upgrades": 1}}
    assert wording.verdict(rec) == "rewritten at L2 (asked for L1)"
    assert wording.levels_words(rec) == ("asked for L1, rewritten at L2 after the guesser re-identified the person "
                                         "from email domain (1 raise in 2 guessing rounds)")
    assert wording.why(rec).startswith("contact data to an analytics service") and "→" not in wording.why(rec)
    p = wording.plain(rec, risk(0.10))
    assert p["rule"].startswith("identifiers never reach a tracker") and p["numbers"].startswith("R 0.10 is in the allow")
    same = {**rec, "final_level": 1, "rounds": 1}
    assert wording.verdict(same) == "rewritten at L1"
    assert "could not re-identify" in wording.levels_words(same)
    blocked = {"action": "deny", "explanation": "x → R 0.9 ≥ deny floor 0.6 (high tier); blocked: the request is signed"}
    assert wording.why(blocked) == "x; blocked: the request is signed"


def test_rows_carry_the_verdict_and_plain_reason(dash):
    d = decision("www.google-analytics.com", "transform", "shop.example", {"contact": 1}, start=1, final=3, rounds=3,
                 explanation="contact data to an analytics service → R 0.30 in the rewrite band (0.15–0.60) → "
                             "rewrite from L1")
    dash.publish(raw("www.google-analytics.com"), d)
    with client(dash) as c:
        row = c.get("/api/snapshot").json()["recent"][-1]
        detail = c.get(f"/api/decision/{d.id}").json()
    assert row["verdict"] == "rewritten at L3 (asked for L1)" and row["why"] == "contact data to an analytics service"
    assert row["site"] == "shop.example"
    assert detail["plain"]["verdict"] == row["verdict"] and detail["plain"]["levels"].startswith("asked for L1, rewritten at L3")
    assert detail["plain"]["numbers"].startswith("R 0.30 is in the rewrite band")


# ------------------------------------------------------------------ what left the machine, decoded


def test_what_left_is_decoded_and_masked():
    body = json.dumps({"ticket": {"text": "Call [PERSON] at p@mail.example", "tags": ["a"]}}).encode()
    rw = Rewrite(body=body, url="https://support.example.com/api/t?name=%5BPERSON%5D&city=Paris%20Centre&e=j%40x.example",
                 span_counts={"PERSON": 2})
    d = decision("support.example.com", "transform", start=1, final=1, rewrite=rw)
    det = detail_of(raw("support.example.com", "/api/t?name=John", body=b"{}"), d)
    left = det["rewritten"]
    assert left["query"] == [["name", "[PERSON]"], ["city", "Paris Centre"], ["e", "[EMAIL_ADDRESS]"]]
    assert left["body_format"] == "json" and left["body"].startswith('{\n  "ticket": {\n    "text": ')
    assert "p@mail.example" not in left["body"] and "[EMAIL_ADDRESS]" in left["body"]  # still the one mask
    assert det["left"].startswith("The rewritten request below left the machine (2 values replaced, at L1)")
    form = Rewrite(body=b"name=%5BPERSON%5D&msg=hello+there", span_counts={"PERSON": 1})
    det = detail_of(raw("forms.example", body=b"x", ctype="application/x-www-form-urlencoded"),
                    decision("forms.example", "transform", start=2, final=2, rewrite=form))
    assert det["rewritten"]["body"] == "name = [PERSON]\nmsg = hello there" and det["rewritten"]["body_format"] == "form"
    blocked = detail_of(raw("ads.example"), decision("ads.example", "deny"))
    assert blocked["rewritten"] is None and blocked["left"].startswith("Nothing left the machine")
    allowed = detail_of(raw("www.example.org"), decision("www.example.org", "allow"))
    assert allowed["left"].startswith("The request left as it was")


# ------------------------------------------------------------------ configuration: how the proxy was started


def test_config_shows_run_options_from_the_dashboard_or_the_runtime_file(tmp_path):
    s = load_settings(state_dir=tmp_path / "state")
    s.state_dir.mkdir(parents=True)
    (s.state_dir / "runtime.json").write_text(json.dumps(
        {"pid": 1, "listen": [["127.0.0.1", 8080]], "dashboard_url": "http://127.0.0.1:1", "confdir": "/c",
         "ca": "/c/mitmproxy-ca-cert.pem", "version": "x", "started": 1.0, "ssl_insecure": True,
         "redirect_upstream": ["127.0.0.1", 9999]}))
    d = Dashboard(s, port=0, run_options={"ssl_insecure": False})
    assert d.start()
    try:
        with client(d) as c:
            run = c.get("/api/config").json()["run"]
    finally:
        d.stop()
    assert run["ssl_insecure"] is False  # what the dashboard was told wins over the file
    assert run["redirect_upstream"] == "127.0.0.1:9999" and run["ca"] == "/c/mitmproxy-ca-cert.pem"
    assert run["confdir"] == "/c" and run["listen"] == [["127.0.0.1", 8080]]


# ------------------------------------------------------------------ a restart on the same state dir


def test_restart_keeps_the_address_the_cookie_and_the_history(tmp_path):
    s = load_settings(state_dir=tmp_path / "state")
    first = Dashboard(s, port=0)  # the kernel's choice; the restart binds the same port again
    assert first.start()
    port, url = first.port, first.url
    try:
        with httpx.Client(base_url=first.base_url, timeout=10, trust_env=False) as browser:
            assert browser.get(url).status_code == 303  # the cookie is set
            assert browser.get("/api/stats").status_code == 200
    finally:
        first.stop()
    (s.state_dir / "decisions.jsonl").write_text(json.dumps({"ts": 1.0, "id": "abc", "host": "ads.example",
                                                             "action": "deny", "site": "shop.example"}) + "\n")
    second = Dashboard(s, port=port)
    assert second.start()
    try:
        assert second.url == url  # the printed address still works
        with httpx.Client(base_url=second.base_url, timeout=10, trust_env=False) as browser:
            browser.cookies.set(f"guardian_dashboard_{port}", first.guard.token)  # the open tab's cookie
            r = browser.get("/api/snapshot")
            assert r.status_code == 200 and [x["id"] for x in r.json()["recent"]] == ["abc"]
            with browser.stream("GET", "/api/events", timeout=httpx.Timeout(10, read=None)) as ev:
                assert ev.status_code == 200  # the event stream reconnects
    finally:
        second.stop()


def test_config_says_which_run_options_are_not_known(dash):
    with client(dash) as c:
        run = c.get("/api/config").json()["run"]
    assert run["given"] == [] and run["ssl_insecure"] is None  # no runtime file, nothing passed: not "off"
