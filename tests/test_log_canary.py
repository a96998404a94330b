"""No value in the decision log, the dashboard or the console (R-NO-RAW-VALUE): every text that comes from the
request passes one masking function (guardian_proxy/logmask.py) before it is written.

The unit tests below feed each path that copied a raw value (host labels, key-less query values, JSON query
strings, the first path segment of an uninspected request, residue in a rewritten body or URL, flow-error lines,
fail-rule warnings, records replayed from an older log) and check the written form. `test_e2e_canary_*` runs a
real proxy with the dashboard on, sends unique canary values through every path, and reads every file under the
state dir, the confdir and the log dir (rotated logs too), the proxy's output and every dashboard answer.
"""

from __future__ import annotations

import json
import logging
import random
import socket
import threading
import time
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest

from guardian_proxy.checksums import card_number
from guardian_proxy.decision_log import record, safe_path
from guardian_proxy.types import Action, Decision, RawRequest, Rewrite, Span, TextField

# ------------------------------------------------------------------ canary values: unique per case


class Canaries:
    """Fake values of four kinds, new for each case (`new(label)`), remembered to be looked for everywhere."""

    def __init__(self, seed: int = 19):
        self.rng = random.Random(seed)
        self.values: dict[str, str] = {}  # value → case label

    def email(self, label: str) -> str:
        return self._keep(f"zq.{label.replace('-', '.')}.{self.rng.randrange(10**5, 10**6)}@canary-mail.net", label)

    def ssn(self, label: str) -> str:
        while True:
            v = f"{self.rng.randrange(100, 665)}-{self.rng.randrange(10, 99)}-{self.rng.randrange(1000, 9999)}"
            if v not in self.values:
                return self._keep(v, label)

    def phone(self, label: str) -> str:
        return self._keep(f"415-{self.rng.randrange(200, 999)}-{self.rng.randrange(1000, 9999)}", label)

    def card(self, label: str, sep: str = "") -> str:
        while True:
            d = "4" + "".join(str(self.rng.randrange(10)) for _ in range(14))
            for c in "0123456789":
                if card_number(d + c):
                    d += c
                    break
            if d not in {v.replace(" ", "").replace("-", "") for v in self.values}:
                return self._keep(sep.join(d[i:i + 4] for i in range(0, 16, 4)), label)

    def _keep(self, v: str, label: str) -> str:
        self.values[v] = label
        return v

    def forms(self, v: str) -> set[str]:
        """As is, lower case, URL-encoded (both ways), JSON-escaped, digits only."""
        out = {v, v.lower(), quote_plus(v), quote(v, safe=""), json.dumps(v)[1:-1]}
        digits = "".join(c for c in v if c.isdigit())
        if len(digits) >= 9:
            out.add(digits)
        return out

    def leaks(self, data: bytes | str, where: str) -> list[str]:
        low = (data.encode() if isinstance(data, str) else data).lower()
        return [f"{where}: {f!r} ({label})" for v, label in self.values.items() for f in self.forms(v)
                if f.lower().encode() in low]


def _decision(req: RawRequest, action: Action, kind: str = "allow", **kw) -> Decision:
    return Decision(action=kind, six=action, explanation=kw.pop("explanation", "no personal data found"), **kw)


def _written(req: RawRequest, d: Decision) -> str:
    return json.dumps(record(req, d), ensure_ascii=False)


# ------------------------------------------------------------------ the record's fields


def test_host_labels_are_masked_in_the_record():
    c = Canaries()
    ssn, phone, card = c.ssn("host"), c.phone("host"), c.card("host", "-")
    for host in (f"jane-doe-{ssn}.stats.example-tracker.com", f"u-{phone}.t.example-tracker.com",
                 f"{card}.px.example-tracker.com", f"id{card.replace('-', '')}.px.example-tracker.com"):
        req = RawRequest(method="GET", url=f"http://{host}/collect")
        line = _written(req, _decision(req, Action(domain="example-tracker.com", host=host)))
        assert not c.leaks(line, host), line
        assert "example-tracker.com" in line and "[" in json.loads(line)["host"]


def test_destination_ip_and_plain_hosts_are_kept():
    for host in ("203.0.113.7", "www.example.org", "cdn-eu-3.example.net"):
        req = RawRequest(method="GET", url=f"http://{host}/")
        assert record(req, _decision(req, Action(domain=host, host=host)))["host"] == host


def test_keyless_and_json_query_values_are_masked():
    c = Canaries()
    email, card, ssn = c.email("keyless"), c.card("json-query"), c.ssn("json-query")
    urls = [f"http://px.example.com/pixel?{email}", f"http://px.example.com/pixel?{quote(email)}&ev=view",
            "http://px.example.com/c?" + quote(json.dumps({"email": email, "pan": card, "ssn": ssn})),
            "http://px.example.com/c?" + json.dumps({"email": email, "pan": card}),
            f"http://px.example.com/c?ev=1&{ssn}"]
    for url in urls:
        p = safe_path(url, Action(domain="example.com", host="px.example.com"))
        assert not c.leaks(p, url), p
    assert safe_path("http://x.example/c?uid=42&ev=view&a[b]=1") == "/c?uid=&ev=&a[b]="
    assert safe_path(f"http://x.example/p?{email}") == "/p?[EMAIL_ADDRESS]="


def test_first_segment_of_an_uninspected_request_is_masked():
    c = Canaries()
    binary = Action(domain="example.com", host="up.example.com", flags=["unparsed", "binary"], body_format="binary")
    for seg in (c.phone("seg"), c.ssn("seg"), c.card("seg", "-"), c.email("seg"), f"user-{c.ssn('seg')}"):
        for url in (f"http://up.example.com/{seg}/x", f"http://up.example.com/{seg}"):
            req = RawRequest(method="POST", url=url, body=b"\x00\x01\x02", headers=[("content-type", "x/y")])
            line = _written(req, _decision(req, binary))
            assert not c.leaks(line, url), line


def test_residue_in_an_inspected_path_is_masked():
    c = Canaries()
    phone = c.phone("path")
    path = f"/u/{phone}/orders"
    a = Action(domain="x.example", host="x.example", fields=[TextField(path="path:", text=path)])  # nothing found
    assert safe_path(f"http://x.example{path}", a) == "/u/[PHONE_NUMBER]/orders"
    email = c.email("path")
    raw = f"/u/{quote(email)}/orders"
    a = Action(domain="x.example", host="x.example", fields=[TextField(path="path:", text=raw)],
               spans=[Span(path="path:", start=3, end=3 + len(quote(email)), entity="EMAIL_ADDRESS",
                           category="contact")])
    assert safe_path(f"http://x.example{raw}", a) == "/u/[EMAIL_ADDRESS]/orders"  # spans still name the type


def test_explanation_override_and_extras_are_masked():
    c = Canaries()
    email, ssn = c.email("expl"), c.ssn("expl")
    req = RawRequest(method="POST", url="http://x.example/")
    d = _decision(req, Action(domain="x.example", host="x.example"), "deny", rule="signed-request",
                  explanation=f"blocked: cannot sign again: bad header value {email}", override=f"always deny {ssn}",
                  extra={"files_unread": [f"scan-{ssn}.pdf"], "note": {email: 1}})
    line = _written(req, d)
    assert not c.leaks(line, "record"), line
    rec = json.loads(line)
    assert rec["id"] == d.id and rec["rule"] == "signed-request" and "[EMAIL_ADDRESS]" in rec["explanation"]


# ------------------------------------------------------------------ the dashboard


def test_dashboard_detail_masks_residue_in_the_rewritten_form():
    from guardian_proxy.dashboard.detail import detail_of

    c = Canaries()
    phone, card, email = c.phone("rewrite"), c.card("rewrite", " "), c.email("rewrite")
    body = json.dumps({"note": f"call me on {phone}", "pan": card}).encode()
    req = RawRequest(method="POST", url="http://support.example.com/api/t", body=body,
                     headers=[("content-type", "application/json")])
    rw = Rewrite(body=body, url=f"http://support.example.com/api/t?to={quote_plus(email)}&pan={quote_plus(card)}",
                 span_counts={"PERSON": 1})
    d = _decision(req, Action(domain="example.com", host="support.example.com"), "transform", rewrite=rw)
    det = detail_of(req, d)
    text = json.dumps(det, ensure_ascii=False)
    assert not c.leaks(text, "detail"), text
    assert "[PHONE_NUMBER]" in det["rewritten"]["body"] and det["rewritten"]["path"].startswith("/api/t?to=")


def test_dashboard_replay_of_an_older_log_is_masked(tmp_path):
    from guardian_proxy.dashboard.hub import Hub
    from guardian_proxy.dashboard.stats import summarize

    c = Canaries()
    ssn, email = c.ssn("old-log"), c.email("old-log")
    old = {"ts": 1.0, "id": "a1", "method": "GET", "host": f"jane-{ssn}.t.example-tracker.com",
           "path": f"/pixel?{email}=", "action": "allow", "explanation": f"about {email}", "categories": {}}
    hub = Hub()
    hub.seed([old])
    text = json.dumps([hub.snapshot(), hub.detail("a1")])
    assert not c.leaks(text, "hub"), text
    assert not c.leaks(json.dumps(summarize([old]).to_dict()), "stats")


# ------------------------------------------------------------------ the console


def test_flow_error_line_masks_the_host_and_message(caplog):
    from mitmproxy.test import tflow

    from guardian_proxy.mitm.hooks import GuardianAddon

    c = Canaries()
    ssn = c.ssn("flow-error")
    host = f"jane-doe-{ssn}.stats.example-tracker.com"
    f = tflow.tflow(err=True)
    f.request.host = host
    f.request.headers["host"] = host
    f.error.msg = f"Connection to {host} refused"
    addon = GuardianAddon(gateway=None)
    try:
        with caplog.at_level(logging.WARNING, logger="guardian_proxy"):
            addon.error(f)
    finally:
        addon.done()
    assert "flow error" in caplog.text and not c.leaks(caplog.text, "console"), caplog.text


def test_fail_rule_warnings_are_masked(caplog):
    from guardian_proxy.config import load_factor_tables
    from guardian_proxy.failure import FailureRules

    c = Canaries()
    email, ssn = c.email("warning"), c.ssn("warning")
    rules = FailureRules(load_factor_tables())
    req = RawRequest(method="POST", url=f"http://u-{ssn}.t.example-tracker.com/x", body=b"{}")
    with caplog.at_level(logging.WARNING, logger="guardian_proxy"):
        rules.decision(req, "extract", ValueError(f"bad value {email}"))
        logging.getLogger("guardian_proxy.dashboard").warning("dashboard: could not publish %s", email)
        try:
            raise ValueError(f"cannot parse {email}")
        except ValueError:
            logging.getLogger("guardian_proxy").exception("policy learning failed for %s", "x.example")
    assert "personal-data detection failed" in caplog.text
    assert not c.leaks(caplog.text, "console"), caplog.text


# ------------------------------------------------------------------ end to end: a real proxy, every path


def _dashboard_url(output: Path, timeout: float = 30) -> str:
    deadline = time.time() + timeout
    while time.time() < deadline:
        for ln in output.read_text(errors="replace").splitlines():
            if ln.startswith("dashboard: http"):
                return ln.split(" ", 1)[1].strip()
        time.sleep(0.2)
    raise AssertionError("the dashboard did not start:\n" + output.read_text(errors="replace"))


def _dashboard_reads(url: str, ids: list[str]) -> dict[str, bytes]:
    """Every endpoint the dashboard serves (guardian_proxy/dashboard/server.py), each decision's detail, and the
    SSE stream for a moment."""
    import httpx

    base, _, token = url.partition("/?token=")
    out: dict[str, bytes] = {}
    with httpx.Client(base_url=base, headers={"X-Guardian-Token": token}, timeout=30) as d:
        for path in ["/", "/proxy.pac", "/api/snapshot", "/api/stats", "/api/config", "/api/overrides",
                     "/static/app.js", *[f"/api/decision/{i}" for i in ids]]:
            r = d.get(path)
            assert r.status_code in (200, 404), (path, r.status_code)
            out[path] = r.content
    return out


def _events(url: str, send, seconds: float = 3.0) -> bytes:
    """What the SSE stream carries while `send()` runs."""
    import httpx

    base, _, token = url.partition("/?token=")
    got = bytearray()
    ready = threading.Event()

    def read():
        try:
            with httpx.stream("GET", base + "/api/events", headers={"X-Guardian-Token": token}, timeout=seconds + 5) as r:
                ready.set()
                t0 = time.time()
                for chunk in r.iter_bytes():
                    got.extend(chunk)
                    if time.time() - t0 > seconds:
                        break
        except Exception:
            ready.set()

    t = threading.Thread(target=read, daemon=True)
    t.start()
    ready.wait(10)
    send()
    t.join(seconds + 10)
    return bytes(got)


class _Hang:
    """An upstream that accepts and never answers (a request that times out)."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.conns: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def port(self) -> int:
        return self.sock.getsockname()[1]

    def _accept(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(conn)

    def close(self):
        for s in [*self.conns, self.sock]:
            s.close()


def _scan_files(c: Canaries, roots: list[Path]) -> tuple[list[str], int]:
    found, n = [], 0
    for root in roots:
        for p in sorted(root.rglob("*")):
            if p.is_file():
                n += 1
                found += c.leaks(p.read_bytes(), str(p))
    return found, n


def _send_main_paths(client, c: Canaries) -> dict[str, int]:
    """One request per path, each with values of its own."""
    import httpx

    def json_body(label):
        return {"text": f"Please call me on {c.phone(label)} or mail {c.email(label)}; card {c.card(label, ' ')}",
                "ssn": c.ssn(label)}

    tracker = "stats.example-tracker.com"
    third = {"user-agent": "Dalvik/2.1.0 (Linux; U; Android 14; Pixel 8)"}  # a phone app's SDK (curl or a script: the user's own addressee)
    reqs = {
        "host-labels": lambda: client.get(f"http://jane-doe-{c.ssn('host-labels')}.{tracker}/collect"),
        "host-labels-card": lambda: client.get(f"http://{c.card('host-labels-card', '-')}.px.{tracker}/c"),
        "keyless-query": lambda: client.get(f"http://www.example.org/pixel?{c.email('keyless-query')}"),
        "keyless-query-ssn": lambda: client.get(f"http://www.example.org/pixel?ev=1&{c.ssn('keyless-query-ssn')}"),
        "json-query": lambda: client.get("http://www.example.org/c?" + quote(json.dumps(
            {"email": c.email("json-query"), "pan": c.card("json-query"), "tel": c.phone("json-query")}))),
        "first-segment-binary": lambda: client.post(
            f"http://upload.example.org/{c.phone('first-segment-binary')}/blob", content=bytes(range(256)) * 4,
            headers={"content-type": "application/octet-stream"}),
        "first-segment-binary-email": lambda: client.post(
            f"http://upload.example.org/{c.email('first-segment-binary-email')}/x", content=b"\x89PNG\r\n\x1a\n" * 8,
            headers={"content-type": "application/octet-stream"}),
        "headers": lambda: client.get("http://www.example.org/h", headers={
            "x-user-email": c.email("headers"), "referer": f"http://shop.example.com/u?tel={c.phone('headers')}"}),
        "cookie": lambda: client.get("http://www.example.org/k", headers={
            "cookie": f"uid={quote_plus(c.email('cookie'))}; ssn={c.ssn('cookie')}"}),
        "json-rewritten": lambda: client.post("http://support.zendesk.com/api/tickets", json=json_body("json-rewritten"),
                                              headers=third),
        "form": lambda: client.post("http://support.zendesk.com/api/form", headers=third, data={
            "email": c.email("form"), "phone": c.phone("form"), "ssn": c.ssn("form")}),
        "blocked": lambda: client.post("http://ads.doubleclick.net/collect", json={
            "pan": c.card("blocked"), "ssn": c.ssn("blocked"), "email": c.email("blocked")}),
        "blocked-query": lambda: client.get(
            f"http://ads.doubleclick.net/px?email={quote_plus(c.email('blocked-query'))}&tel={c.phone('blocked-query')}"),
    }
    out = {}
    for label, send in reqs.items():
        try:
            out[label] = send().status_code
        except httpx.HTTPError as e:
            out[label] = type(e).__name__
    return out


@pytest.mark.slow
def test_e2e_canary_no_value_in_log_dashboard_or_console(tmp_path):
    import httpx

    from tests.support.proxy_process import start_proxy
    from tests.support.upstream import start_upstream

    c = Canaries()
    up = start_upstream()
    cfg = tmp_path / "config.yaml"
    cfg.write_text("log_max_bytes: 3000\nlog_backups: 20\n")  # rotates every few lines
    px = start_proxy(tmp_path, up.port, extra=["--config", str(cfg)], dashboard=True)
    dash: dict[str, bytes] = {}
    try:
        url = _dashboard_url(px.output)
        with httpx.Client(proxy=px.url, timeout=60) as client:
            statuses = {}
            events = _events(url, lambda: statuses.update(_send_main_paths(client, c)))
        ids = [x["id"] for x in _all_lines(px.log_path)]
        dash = _dashboard_reads(url, ids)
        dash["/api/events"] = events
        assert statuses["blocked"] == 403 and statuses["json-rewritten"] == 200, statuses
        up.close()  # the upstream now refuses: flow errors
        first_party = {"origin": "http://shop.example.com", "sec-fetch-site": "same-site", "sec-fetch-mode": "cors"}
        with httpx.Client(proxy=px.url, timeout=60) as client:
            r = client.get(f"http://u-{c.phone('refused')}.shop.example.com/r", headers=first_party)
            assert r.status_code in (403, 502)
            r = client.post("http://support.zendesk.com/api/t", json={"text": f"call {c.phone('refused-post')}"})
            assert r.status_code == 502
        dash.update({f"after {k}": v for k, v in _dashboard_reads(url, [x["id"] for x in _all_lines(px.log_path)]).items()})
    finally:
        px.stop()
        up.close()
    assert "flow error" in px.output.read_text()
    actions = {x["action"] for x in _all_lines(px.log_path)}
    assert {"allow", "transform", "deny"} <= actions, actions

    # a request that times out: the upstream never answers, and the evaluation deadline (second run)
    hang = _Hang()
    cfg2 = tmp_path / "deadline.yaml"
    cfg2.write_text("log_max_bytes: 3000\nlog_backups: 20\nlimits: {eval_timeout_s: 0.001}\n")
    (tmp_path / "run2").mkdir()
    px2 = start_proxy(tmp_path / "run2", hang.port, extra=["--config", str(cfg2), "--state-dir", str(px.state_dir),
                                                           "--dashboard-port", "0"])
    try:
        with httpx.Client(proxy=px2.url, timeout=httpx.Timeout(60, read=3)) as client:
            # answered by the proxy (no short read). The request comes from this test's own client, so evaluated in
            # time it would be the user's own request to the site it addresses, allowed to the upstream that never
            # answers: 40 KB of text to read makes evaluation outlast the 1 ms deadline whatever the machine's speed
            r = client.post("http://support.zendesk.com/api/tickets", json={
                "text": f"{c.email('deadline')} {c.ssn('deadline')} {c.card('deadline', ' ')}",
                "notes": "The meeting with the regional team moved to Thursday afternoon. " * 640}, timeout=60)
            assert r.status_code == 403 and "deadline" in r.json()["reason"]
            try:  # contact data fails open at the deadline: it goes to the upstream, which never answers
                r = client.get(f"http://u-{c.phone('timeout')}.shop.example.com/u/{quote(c.email('timeout'))}",
                               headers=first_party)
                timed_out = False
            except httpx.ReadTimeout:
                timed_out = True
            time.sleep(1)
    finally:
        px2.stop()
        hang.close()
    assert timed_out or r.status_code == 403

    rotated = sorted(px.state_dir.glob("decisions.jsonl.*"))
    assert rotated, "the log should have rotated"
    found, n = _scan_files(c, [px.state_dir, px.confdir, px2.confdir])
    found += c.leaks(px.output.read_bytes(), "proxy output") + c.leaks(px2.output.read_bytes(), "proxy output 2")
    for path, body in dash.items():
        found += c.leaks(body, f"dashboard {path}")
    assert n > 3 and len(c.values) > 30
    assert not found, "raw values written down:\n" + "\n".join(found)


def _all_lines(path: Path) -> list[dict]:
    from guardian_proxy.decision_log import read_all

    return list(read_all(path))


def test_mask_handlers_masks_lines_from_outside_the_package():
    c = Canaries()
    host = f"u-{c.phone('tls')}.shop.example.com"
    from guardian_proxy.logmask import mask_handlers

    records: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record):
            records.append(self.format(record))

    lg = logging.getLogger("test_log_canary.mitmproxy_like")
    lg.propagate = False
    h = Keep()
    lg.addHandler(h)
    try:
        mask_handlers(lg)
        lg.warning("Client TLS handshake failed. The client does not trust the proxy's certificate for %s", host)
    finally:
        lg.removeHandler(h)
    assert records and not c.leaks("\n".join(records), "handler"), records


@pytest.mark.slow
def test_e2e_canary_tls_handshake_warning(tmp_path):
    import httpx

    from tests.support.proxy_process import start_proxy
    from tests.support.upstream import start_upstream

    c = Canaries()
    up = start_upstream()
    px = start_proxy(tmp_path, up.port, extra=["--dashboard-port", "0"])
    try:
        with pytest.raises(httpx.HTTPError):  # the client does not trust the proxy's CA
            httpx.get(f"https://u-{c.phone('tls')}.shop.example.com/", proxy=px.url, timeout=30)
        time.sleep(1)
    finally:
        px.stop()
        up.close()
    out = px.output.read_bytes()
    assert b"TLS handshake failed" in out
    assert not c.leaks(out, "proxy output")
