"""The dashboard server in-process: who may talk to it, what it serves, the live stream, overrides, and
that no raw personal value reaches any of its answers. (The browser test is test_dashboard_browser.py.)"""

from __future__ import annotations

import asyncio
import json
import queue
import shutil
import socket
import threading
from pathlib import Path

import httpx
import pytest

from guardian_proxy.config import load_settings
from guardian_proxy.dashboard import Dashboard, pac_text
from guardian_proxy.dashboard.hub import Hub
from guardian_proxy.types import RawRequest

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "log"
RAW = ("john.smith@example.com", "John Smith", "4111 1111 1111 1111", "4111111111111111")


@pytest.fixture
def dash(tmp_path):
    s = load_settings(state_dir=tmp_path / "state", proxyauth="user:pw-Zq81x")
    d = Dashboard(s, port=0, proxy=("127.0.0.1", 8080), mode="regular")
    assert d.start(), d.error
    yield d
    d.stop()


def client(d: Dashboard, token: bool = True, **headers) -> httpx.Client:
    h = {"X-Guardian-Token": d.guard.token} if token else {}
    return httpx.Client(base_url=d.base_url, headers={**h, **headers}, timeout=10, trust_env=False)


class Events:
    """A real SSE reader on its own thread."""

    def __init__(self, d: Dashboard):
        self.q: queue.Queue = queue.Queue()
        self.c = client(d)
        self.ready = threading.Event()
        threading.Thread(target=self._run, daemon=True).start()
        assert self.ready.wait(5)

    def _run(self):
        try:
            with self.c.stream("GET", "/api/events", timeout=httpx.Timeout(10, read=None)) as r:
                self.ready.set()
                event = None
                for line in r.iter_lines():
                    if line.startswith("event: "):
                        event = line[7:]
                    elif line.startswith("data: ") and event == "decision":
                        self.q.put(json.loads(line[6:]))
        except httpx.HTTPError:
            pass

    def next(self, timeout: float = 5.0) -> dict:
        return self.q.get(timeout=timeout)


# ------------------------------------------------------------------ who may talk to it


def test_page_needs_the_token_then_a_strict_cookie(dash):
    with client(dash, token=False) as c:
        assert c.get("/").status_code == 401
        r = c.get(f"/?token={dash.guard.token}")
        assert r.status_code == 303 and r.headers["location"] == "/"
        cookie = r.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and f"_{dash.port}=" in cookie
        page = c.get("/")  # the client keeps the cookie
        assert page.status_code == 200 and dash.guard.token in page.text
        assert "default-src 'self'" in page.headers["content-security-policy"]
        assert page.headers["x-frame-options"] == "DENY" and page.headers["referrer-policy"] == "no-referrer"
    with client(dash, token=False) as c:
        assert c.get("/?token=wrong").status_code == 401
        assert c.get("/api/snapshot").status_code == 401


@pytest.mark.parametrize("headers, why", [
    ({"Host": "evil.example:80"}, "unexpected Host"),  # DNS rebinding
    ({"Origin": "http://evil.example"}, "cross-site"),
    ({"Sec-Fetch-Site": "cross-site"}, "cross-site"),
])
def test_cross_site_requests_are_refused_even_with_the_token(dash, headers, why):
    with client(dash, **headers) as c:
        r = c.get("/api/snapshot")
        assert r.status_code == 403 and why in r.json()["error"]
        r = c.post("/api/overrides", json={"action": "allow", "domain": "x.example"})
        assert r.status_code == 403
    assert not (dash.settings.state_dir / "overrides.yaml").exists()


def test_writes_need_the_token_header_not_just_the_cookie(dash):
    with client(dash, token=False) as c:
        c.get(f"/?token={dash.guard.token}")
        r = c.post("/api/overrides", json={"action": "deny", "domain": "x.example"})
        assert r.status_code == 403  # a cross-site form would carry the cookie (if at all), never the header
        assert c.options("/api/overrides").status_code == 403  # no CORS preflight is ever granted
    with client(dash) as c:
        r = c.post("/api/overrides", content=b'{"action": "deny", "domain": "x.example"}',
                   headers={"content-type": "text/plain"})
        assert r.status_code == 415  # the content type a no-cors form could send


def test_same_origin_page_requests_pass(dash):
    with client(dash, Origin=dash.base_url, **{"Sec-Fetch-Site": "same-origin"}) as c:
        assert c.get("/api/stats").status_code == 200
    with client(dash, Host=f"localhost:{dash.port}") as c:
        assert c.get("/api/stats").status_code == 200


def test_static_assets_and_no_traversal(dash):
    with client(dash, token=False) as c:
        js = c.get("/static/app.js")
        assert js.status_code == 200 and js.headers["content-type"].startswith("text/javascript")
        assert "EventSource" in js.text and "innerHTML" not in js.text
        assert c.get("/static/charts.js").status_code == 200 and c.get("/static/app.css").status_code == 200
        assert c.get("/static/../dashboard/server.py").status_code == 404
        assert c.get("/static/%2e%2e%2fresources.py").status_code == 404
        assert c.get("/nothing").status_code == 404


def test_pac_file_needs_no_token_and_fails_closed(dash):
    with client(dash, token=False) as c:
        r = c.get("/proxy.pac")
    assert r.status_code == 200 and r.headers["content-type"] == "application/x-ns-proxy-autoconfig"
    assert 'return "PROXY 127.0.0.1:8080";' in r.text and "DIRECT\";\n  }" in r.text
    assert "; DIRECT" not in r.text  # no silent bypass when the proxy is down
    assert "PROXY [::1]:9000" in pac_text("::1", 9000) and "PROXY 127.0.0.1:1" in pac_text("0.0.0.0", 1)


def test_busy_port_is_a_warning_never_an_exception(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        d = Dashboard(load_settings(state_dir=tmp_path), port=s.getsockname()[1])
        assert d.start() is False and not d.running
        assert "dashboard not started" in d.error and str(s.getsockname()[1]) in d.error
        d.stop()  # harmless


# ------------------------------------------------------------------ what it serves


def test_config_view_masks_secrets_and_reports_models(dash):
    with client(dash) as c:
        cfg = c.get("/api/config").json()
    assert cfg["settings"]["proxyauth"] == "***" and "pw-Zq81x" not in json.dumps(cfg)
    assert cfg["proxy"] == "127.0.0.1:8080" and cfg["mode"] == "regular" and cfg["pac_url"].endswith("/proxy.pac")
    names = {m["name"]: m for m in cfg["models"]}
    assert {"detector", "likelihood", "llm", "policies", "factor tables"} <= set(names)
    assert all(m["state"] in ("ok", "warn", "fail") for m in cfg["models"])


def test_seeds_recent_history_from_the_log(tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    shutil.copy(FIXTURE / "decisions.jsonl", state / "decisions.jsonl")
    d = Dashboard(load_settings(state_dir=state), port=0)
    assert d.start()
    try:
        with client(d) as c:
            snap = c.get("/api/snapshot").json()
            assert [r["id"][-1] for r in snap["recent"]] == list("456789")
            assert snap["stats"]["actions"] == {"allow": 3, "transform": 1, "deny": 2}
            detail = c.get(f"/api/decision/{snap['recent'][0]['id']}").json()
            assert detail["host"] == "ads.doubleclick.net" and detail["action"] == "deny"
            assert c.get("/api/decision/unknown").status_code == 404
    finally:
        d.stop()


def test_slow_subscriber_is_dropped_not_waited_for():
    hub = Hub(queue_size=2)
    sub = hub.subscribe()
    for i in range(5):
        hub.publish({"id": str(i), "action": "allow", "host": "h", "ts": i})
    assert sub.dropped and hub.subscribers == 0
    assert hub.stats.total == 5 and len(hub.snapshot()["recent"]) == 5


def _post(url, body):  # a phone app's SDK: not the user's own client (curl, a script), whose addressee it would be
    return RawRequest(method="POST", url=url, headers=[("content-type", "application/json"),
                                                      ("user-agent", "Dalvik/2.1.0 (Linux; U; Android 14; Pixel 8)")],
                      body=json.dumps(body).encode())


@pytest.mark.slow
def test_live_decisions_details_and_no_raw_values(dash, gateway):
    events = Events(dash)
    reqs = [_post("https://support.zendesk.com/api/tickets",
                  {"ticket": "Please call John Smith back at john.smith@example.com"}),
            _post("https://ads.doubleclick.net/collect", {"pan": "4111 1111 1111 1111"}),
            RawRequest(method="GET", url="https://www.example.org/?q=John%20Smith")]
    decisions = []
    for r in reqs:
        d = gateway.evaluate(r, log=False)
        dash.publish(r, d)
        decisions.append(d)
    got = [events.next() for _ in reqs]
    assert [g["id"] for g in got] == [d.id for d in decisions]
    assert [g["action"] for g in got][:2] == ["transform", "deny"]
    with client(dash) as c:
        detail = c.get(f"/api/decision/{decisions[0].id}").json()
        deny = c.get(f"/api/decision/{decisions[1].id}").json()
        snap = c.get("/api/snapshot").text
        stats = c.get("/api/stats").json()
    assert detail["six"]["domain"] == "zendesk.com" and detail["six"]["categories"]["contact"] >= 1
    assert set(detail["factors"]) >= {"Sd", "Mtr", "Mp", "Mb", "MT", "Seff", "R", "tier", "allow_ceiling", "deny_floor"}
    assert detail["likelihood"]["path"] and detail["start_level"] and detail["final_level"]
    assert "evidence_detail" in detail and "statements" in detail["evidence_detail"]
    # which recognizer found each span, by field path (docs/design/extraction.md): types, paths and rules,
    # never values
    assert any(line.startswith("EMAIL_ADDRESS at json:$.ticket — ") for line in detail["found_lines"]), \
        detail["found_lines"]
    assert all(" at " in line and " — " in line for line in detail["found_lines"])
    rewritten = detail["rewritten"]
    assert json.loads(rewritten["body"])["ticket"].startswith("Please call ")
    assert deny["rewritten"] is None and deny["factors"]["R"] >= deny["factors"]["deny_floor"]
    assert stats["total"] == 3 and stats["actions"]["deny"] >= 1 and stats["actions"]["transform"] >= 1
    everything = json.dumps([got, detail, deny]) + snap + json.dumps(stats)
    for raw in RAW:
        assert raw not in everything, raw
    assert "John%20Smith" not in everything  # query values are dropped from paths


def test_override_from_the_api_persists_and_reaches_the_gateway_store(dash, tmp_path):
    from guardian_proxy.overrides import OverrideStore

    gateway_store = OverrideStore.for_settings(dash.settings)  # what a running Gateway re-reads
    with client(dash) as c:
        r = c.post("/api/overrides", json={"action": "allow", "domain": "Ads.DoubleClick.net", "category": "financial"})
        assert r.status_code == 200, r.text
        listed = r.json()["overrides"]
        old_keys = ("action", "domain", "category", "number", "source")  # later: id, term, state, counts
        assert {k: listed[-1][k] for k in old_keys} == {"action": "allow", "domain": "ads.doubleclick.net",
                                                        "category": "financial", "number": 1, "source": "store"}
        assert listed[-1]["id"] and listed[-1]["term"] == "forever" and listed[-1]["matched"] == 0
        assert [o.domain for o in gateway_store.current()] == ["ads.doubleclick.net"]
        assert "ads.doubleclick.net" in (dash.settings.state_dir / "overrides.yaml").read_text()
        bad = c.post("/api/overrides", json={"action": "allow", "domain": "x.example", "category": "nonsense"})
        assert bad.status_code == 400 and "category" in bad.json()["error"]
        assert c.post("/api/overrides", json={"action": "level", "domain": "x.example"}).status_code == 400
        r = c.post("/api/overrides/remove", json={"number": 1})
        assert r.status_code == 200 and r.json()["overrides"] == []
        assert gateway_store.current() == []
        assert c.post("/api/overrides/remove", json={"number": 7}).status_code == 400


def test_addon_publishes_each_decision(tmp_path):
    from mitmproxy.test import taddons, tflow

    from guardian_proxy.mitm.hooks import GuardianAddon
    from guardian_proxy.testing import FakeGateway, decision

    gateway = FakeGateway(decision("allow", "example.com", "ok"))
    gateway.settings = load_settings(state_dir=tmp_path)

    class Sink:
        def __init__(self):
            self.got = queue.Queue()

        def publish(self, raw, decision):
            self.got.put((raw, decision))

    sink = Sink()
    with taddons.context():
        a = GuardianAddon(gateway, dashboard=sink)
        f = tflow.tflow()
        f.request.content = b"x"
        asyncio.run(a.request(f))
        raw, decision = sink.got.get(timeout=5)
        assert decision.id == f.metadata["guardian"]["id"] and raw.method == f.request.method
        a.done()


def test_component_status_normalises_stage_answers(tmp_path):
    from guardian_proxy.dashboard import components as comp

    assert comp.normalize("x", {"ok": False, "error": "boom"}) == {"name": "x", "state": "fail", "detail": "boom"}
    assert comp.normalize("x", {"ok": True, "note": "fine"})["state"] == "ok"
    assert comp.normalize("x", {"status": "degraded", "detail": "slow"})["state"] == "warn"
    s = load_settings(state_dir=tmp_path, likelihood={"model_file": str(tmp_path / "none.pt")},
                      llm={"backend": "llama_cpp", "model_path": str(tmp_path / "none.gguf")})
    assert comp.likelihood_status(s)["state"] == "fail" and "none.pt" in comp.likelihood_status(s)["detail"]
    assert comp.llm_status(s)["state"] == "fail"
    fixed = load_settings(state_dir=tmp_path, likelihood={"mode": "fixed"})
    assert comp.likelihood_status(fixed)["state"] == "ok" and comp.llm_status(fixed)["state"] == "ok"
