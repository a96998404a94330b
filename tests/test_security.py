"""Security properties: loopback-only by default (a remote bind needs --allow-remote and --proxyauth),
private state (dirs 0700, files 0600), no raw personal value at rest (canary test over every path), every
regex linear on 100 KB hostile input, decompression and nesting limits.

The canary test sends unique fake values through every path that exists — allow, transform, deny,
unparsed, query strings and cookies, chat JSON and streams (session + vault), the dashboard's API, and
the error paths (evaluation deadline, upstream refused) — then greps every file the proxy wrote (state
dir, CA dir, its output) and every dashboard response. To cover a new path, add a request to
`main_run_paths` (or a dashboard endpoint to DASHBOARD_READS).
"""

import gzip
import json
import os
import queue
import stat
import subprocess
import sys
import threading
import time
import zlib
from http.server import ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote, quote_plus

import httpx
import pytest
from typer.testing import CliRunner

from guardian_proxy import codec
from guardian_proxy.bodies import BodyLimits, parse_body
from guardian_proxy.config import Settings
from guardian_proxy.errors import BodyTooLarge
from tests.support.llm_server import LLMServer
from tests.support.llm_server import _handler as llm_handler
from tests.support.proxy_process import free_port, start_proxy

ROOT = Path(__file__).resolve().parents[1]

# ------------------------------------------------------------------ canary values (fake, unique)

NAME = "Zebediah Quarrington"
EMAIL = "zq.canary.7731@example.net"
PHONE = "415-555-0187"
SSN = "537-28-4411"
CARD = "4929 1830 2764 5512"
STREET = "4417 Quillfeather Lane"
API_KEY = "sk-canary-9f8e7d6c5b4a39281706"
CANARIES = [NAME, EMAIL, PHONE, SSN, CARD, STREET, API_KEY]


def forms(value: str) -> set[str]:
    """The ways a value could be written down: as is, lower case, URL/JSON-encoded, digits only, name parts."""
    out = {value, value.lower(), quote_plus(value), quote(value, safe=""), json.dumps(value)[1:-1]}
    digits = "".join(c for c in value if c.isdigit())
    if len(digits) >= 9:
        out.add(digits)
    out.update(p for p in value.split() if len(p) >= 7 and p.isalpha())  # "Zebediah", "Quarrington"
    return {f for f in out if len(f) >= 6}


def leaks(text: bytes, where: str) -> list[str]:
    found = []
    low = text.lower()
    for v in CANARIES:
        for f in forms(v):
            if f.encode().lower() in low:
                found.append(f"{where}: {f!r}")
    return found


def scan_tree(root: Path, skip: set[Path]) -> list[str]:
    out = []
    for p in sorted(root.rglob("*")):
        if p.is_file() and p not in skip:
            out += leaks(p.read_bytes(), str(p.relative_to(root)))
    return out


# ------------------------------------------------------------------ loopback only


def test_loopback_is_the_default_and_remote_needs_two_flags(tmp_path):
    from guardian_proxy.cli import app

    assert Settings().host == "127.0.0.1" and Settings().allow_remote is False
    r = CliRunner().invoke(app, ["run", "--host", "0.0.0.0", "--state-dir", str(tmp_path)])
    assert r.exit_code != 0 and "--allow-remote" in r.output
    r = CliRunner().invoke(app, ["run", "--host", "192.0.2.10", "--allow-remote", "--state-dir", str(tmp_path)])
    assert r.exit_code != 0 and "--proxyauth" in r.output


@pytest.mark.slow
def test_remote_bind_with_proxyauth_requires_credentials(tmp_path):
    from tests.support.upstream import start_upstream

    up = start_upstream()
    px = start_proxy(tmp_path, up.port, extra=["--host", "0.0.0.0", "--allow-remote", "--proxyauth", "alice:s3cret",
                                               *dashboard_off()])
    try:
        r = httpx.get("http://www.example.org/", proxy=px.url, timeout=30)
        assert r.status_code == 407 and len(up.received) == 0
        r = httpx.get("http://www.example.org/", proxy=f"http://alice:wrong@127.0.0.1:{px.port}", timeout=30)
        assert r.status_code == 407
        r = httpx.get("http://www.example.org/", proxy=f"http://alice:s3cret@127.0.0.1:{px.port}", timeout=30)
        assert r.status_code == 200 and len(up.received) == 1
    finally:
        px.stop()
        up.close()
    assert "s3cret" not in px.output.read_text() and not scan_tree(px.state_dir, set())


def dashboard_off() -> list[str]:
    return ["--dashboard-port", "0"] if "dashboard_port" in Settings.model_fields else []


# ------------------------------------------------------------------ the canary run


class Upstream:
    """The LLM-API server of tests/support/llm_server.py for chat paths; 200 JSON for everything else."""

    def __init__(self):
        self.llm = LLMServer(server=None)  # type: ignore[arg-type]
        base = llm_handler(self.llm)
        self.other: list[bytes] = []
        store = self.other

        class H(base):
            def _plain(self):
                n = int(self.headers.get("content-length") or 0)
                store.append(self.rfile.read(n) if n else b"")
                payload = b'{"ok":true}'
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_POST(self):
                if self.path.split("?")[0].endswith(("/chat/completions", "/responses", "/messages")):
                    return super().do_POST()
                return self._plain()

            do_GET = _plain

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.httpd.daemon_threads = True
        self.llm.server = self.httpd
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def port(self) -> int:
        return self.httpd.server_address[1]

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def bomb(coding: str, size: int = 64 * 1024 * 1024) -> bytes:
    zeros = b"\0" * size
    if coding == "gzip":
        c = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
        return c.compress(zeros) + c.flush()
    if coding == "br":
        import brotli

        return brotli.compress(zeros, quality=5)
    return codec.encode(zeros, coding)


APP = {"user-agent": "Dalvik/2.1.0 (Linux; U; Android 14; Pixel 8)"}  # a phone app's SDK: neither a page nor the user's own client


def main_run_paths(c: httpx.Client) -> dict[str, int]:
    """Every request path that exists, each carrying canary values. Returns {label: status}."""
    person = {"name": NAME, "email": EMAIL, "phone": PHONE, "address": STREET}
    msg = f"Hi, I'm {NAME} ({EMAIL}), I live at {STREET}; call me on {PHONE}."
    chat = f"{msg} My SSN is {SSN}."
    first_party = {"origin": "http://shop.example.com", "sec-fetch-user": "?1"}
    # a phone app's SDK sent these: a request from curl or a script is the user's own client addressing its host
    # (R-ADDRESSED), and from a page a ticket to a support service is the embedded service's norm
    third = {"user-agent": "Dalvik/2.1.0 (Linux; U; Android 14; Pixel 8)"}
    reqs = {
        "allow-first-party": lambda: c.post("http://shop.example.com/contact", json={"email": EMAIL}, headers=first_party),
        "transform-json": lambda: c.post("http://support.zendesk.com/api/tickets", json={"text": msg, "requester": person},
                                                headers=third),
        "transform-form": lambda: c.post("http://support.zendesk.com/api/form", data=person, headers=third),
        "transform-gzip": lambda: c.post("http://support.zendesk.com/api/t", content=gzip.compress(json.dumps(
            {"text": msg}).encode()), headers={"content-type": "application/json", "content-encoding": "gzip", **third}),
        "transform-multipart": lambda: c.post("http://support.zendesk.com/upload", data={"note": msg}, headers=third,
                                              files={"f": ("a.txt", msg.encode(), "text/plain")}),
        "deny-card": lambda: c.post("http://ads.doubleclick.net/collect", json={"pan": CARD, "ssn": SSN, "name": NAME}),
        "deny-query-cookie": lambda: c.get(f"http://ads.doubleclick.net/px?email={quote_plus(EMAIL)}&n={quote_plus(NAME)}",
                                           headers={"cookie": f"uid={quote_plus(EMAIL)}; key={API_KEY}"}),
        "query-get": lambda: c.get(f"http://www.example.org/search?q={quote_plus(msg)}", headers=third),
        "credential": lambda: c.post("http://api.example.org/login", json={"user": EMAIL, "password": API_KEY},
                                          headers=third),
        "unparsed-json": lambda: c.post("http://cdn.example.org/x", content=f'{{"note": "{msg}", '.encode(),
                                        headers={"content-type": "application/json", **third}),
        "invalid-utf8": lambda: c.post("http://cdn.example.org/y", content=msg.encode() + b"\xff\xfe" + msg.encode(),
                                       headers={"content-type": "text/plain", **third}),
        "chat-json": lambda: c.post("http://api.openai.com/v1/chat/completions", json={
            "model": "gpt-4o", "messages": [{"role": "user", "content": chat}]}),
        "chat-stream": lambda: c.post("http://api.openai.com/v1/chat/completions", json={
            "model": "gpt-4o", "stream": True, "messages": [{"role": "user", "content": chat}]}),
        "chat-anthropic-stream": lambda: c.post("http://api.anthropic.com/v1/messages", json={
            "model": "claude", "max_tokens": 50, "stream": True, "messages": [{"role": "user", "content": chat}]}),
        "chat-gzip-stream": lambda: c.post("http://api.openai.com/v1/chat/completions", headers={"x-test-gzip": "1"},
                                           json={"model": "gpt-4o", "stream": True,
                                                 "messages": [{"role": "user", "content": f"{chat} again"}]}),
    }
    return {label: send().status_code for label, send in reqs.items()}


DASHBOARD_READS = ["/", "/api/snapshot", "/api/stats", "/api/config", "/api/overrides"]


def dashboard_checks(url: str, decision_ids: list[str]) -> list[str]:
    """Read every dashboard endpoint (and each decision's detail) and scan the answers; check that
    cross-site and token-less requests are refused."""
    base, _, token = url.partition("/?token=")
    out = []
    with httpx.Client(base_url=base, headers={"X-Guardian-Token": token}, timeout=30) as d:
        for path in DASHBOARD_READS + [f"/api/decision/{i}" for i in decision_ids]:
            r = d.get(path)
            assert r.status_code in (200, 404), (path, r.status_code)
            out += leaks(r.content, f"dashboard {path}")
        evil = {"Origin": "http://evil.example", "Content-Type": "application/json"}
        r = d.post("/api/overrides", json={"action": "allow", "domain": "evil.example"}, headers=evil)
        assert r.status_code == 403, "a cross-site override must be refused"
    r = httpx.post(base + "/api/overrides", json={"action": "allow", "domain": "evil.example"}, timeout=30)
    assert r.status_code == 403, "an override without the token header must be refused"
    r = httpx.get(base + "/api/snapshot", timeout=30)
    assert r.status_code == 401, "reads need the token"
    return out


def check_modes(state: Path) -> list[str]:
    bad = []
    for p in [state, *state.rglob("*")]:
        mode = stat.S_IMODE(p.stat().st_mode)
        if p.is_dir() and mode & 0o077:
            bad.append(f"dir {p.relative_to(state.parent)} {oct(mode)}")
        elif p.is_file() and mode & 0o077:
            bad.append(f"file {p.relative_to(state.parent)} {oct(mode)}")
    return bad


@pytest.mark.slow
def test_canary_values_never_at_rest_and_state_is_private(tmp_path):
    up = Upstream()
    px = start_proxy(tmp_path, up.port, dashboard="dashboard_port" in Settings.model_fields)
    try:
        with httpx.Client(proxy=px.url, timeout=60) as c:
            statuses = main_run_paths(c)
            # decompression bombs and nesting (limits enforced; the proxy stays up)
            big = bomb("gzip")
            r = c.post("http://ads.doubleclick.net/b", content=big,
                       headers={"content-type": "application/json", "content-encoding": "gzip"})
            assert r.status_code == 403  # not inspectable + high-risk destination: blocked by rule
            n = len(up.other)
            r = c.post("http://cdn.example.org/b", content=big, headers={  # from another site's page
                "content-type": "application/json", "content-encoding": "gzip", "origin": "http://www.news-example.org"})
            # not inspectable in full, toward an unknown third party: blocked by rule, never inflated past the limit
            assert r.status_code == 403 and len(up.other) == n
            r = c.post("http://s3.amazonaws.com/bucket/b", content=big,
                       headers={"content-type": "application/json", "content-encoding": "gzip"})
            assert r.status_code == 200 and up.other[n] == big  # a service provider: passes unchanged
            deep = ("[" * 100_000 + "]" * 100_000).encode()
            assert c.post("http://cdn.example.org/d", content=deep, headers={
                "content-type": "application/json", "origin": "http://www.news-example.org"}).status_code == 403
        assert statuses["deny-card"] == 403 and all(s in (200, 403) for s in statuses.values()), statuses
        dash_leaks = []
        m = next((ln for ln in px.output.read_text().splitlines() if ln.startswith("dashboard: http")), None)
        if m:
            dash_leaks = dashboard_checks(m.split(" ", 1)[1].strip(), [x["id"] for x in px.log_lines()])
        assert {x["action"] for x in px.log_lines()} == {"allow", "transform", "deny"}  # every outcome was exercised
        assert len(up.llm.received) >= 3  # the chat paths reached the (fake) model
        up.close()  # from now on the upstream refuses: the error path (502 as mitmproxy answers, a log line)
        with httpx.Client(proxy=px.url, timeout=60) as c:
            r = c.post("http://support.zendesk.com/api/tickets", json={"text": f"Call {NAME} at {EMAIL}"},
                       headers=APP)
            assert r.status_code == 502
            assert c.get(f"http://www.example.org/u/{quote(EMAIL)}/{quote(NAME)}").status_code in (403, 502)
    finally:
        px.stop()
        up.close()
    assert "flow error" in px.output.read_text()

    # the deadline error path: every pooled evaluation misses it and fails by rule
    cfg = tmp_path / "deadline.yaml"
    cfg.write_text("limits: {eval_timeout_s: 0.001}\n")
    (tmp_path / "err").mkdir()
    px2 = start_proxy(tmp_path / "err", free_port(),  # same state dir, its own output file
                      extra=["--config", str(cfg), "--state-dir", str(px.state_dir), *dashboard_off()])
    try:
        with httpx.Client(proxy=px2.url, timeout=60) as c:
            r = c.post("http://support.zendesk.com/api/tickets",  # 40 KB to read: it outlasts 1 ms on any machine
                       json={"text": f"{NAME} {EMAIL} {SSN}", "notes": "The meeting moved to Thursday afternoon. " * 1000})
            assert r.status_code == 403 and "deadline" in r.json()["reason"]
            r = c.get(f"http://www.example.org/u/{quote(EMAIL)}/{quote(NAME)}")  # contact data in the path:
            assert r.status_code in (403, 502)  # sensitive tier fails open (→ refused upstream), or tier unknown
    finally:
        px2.stop()
    assert "deadline-error-fail-closed" in {x.get("rule") for x in px.log_lines()}

    found = scan_tree(tmp_path, skip=set()) + dash_leaks
    assert not found, "raw personal values at rest:\n" + "\n".join(found)
    assert not check_modes(px.state_dir), check_modes(px.state_dir)
    for key in ("mitmproxy-ca.pem", "mitmproxy-ca.p12"):  # the CA private key (mitmproxy writes it)
        p = px.confdir / key
        if p.exists():
            assert not stat.S_IMODE(p.stat().st_mode) & 0o077, key


# ------------------------------------------------------------------ limits


@pytest.mark.parametrize("coding", ["gzip", "deflate", "br", "zstd", "gzip, gzip"])
def test_decompression_bombs_stop_at_the_limit(coding):
    limit = 1 << 20
    if coding == "gzip, gzip":
        data = codec.encode(bomb("gzip", 32 << 20), "gzip")  # a bomb inside a bomb
    else:
        data = bomb(coding, 32 << 20)
    t = time.perf_counter()
    with pytest.raises(BodyTooLarge):
        codec.decode(data, coding, limit)
    assert time.perf_counter() - t < 5
    pb = parse_body(data, "application/json", coding, BodyLimits(max_decoded_bytes=limit))
    assert pb.format == "too_large" and "decompression_limit" in pb.flags


def test_nesting_limits():
    lim = BodyLimits(max_json_depth=64)
    deep = parse_body(("[" * 100_000 + "]" * 100_000).encode(), "application/json", None, lim)
    assert "unparsed" in deep.flags and not deep.fields
    mid = parse_body(("[" * 200 + '"x"' + "]" * 200).encode(), "application/json", None, lim)
    assert "depth_limit" in mid.flags and "unparsed" in mid.flags
    nested = '"x"'
    for _ in range(12):  # JSON in a string in JSON in a string … stops at a fixed depth (each level doubles escapes)
        nested = json.dumps({"a": nested})
    t = time.perf_counter()
    pb = parse_body(nested.encode(), "application/json", None, lim)
    assert time.perf_counter() - t < 5 and max(f.path.count(">") for f in pb.fields) <= 5
    big = parse_body(b"x" * (lim.max_body_bytes + 1), "text/plain", None, lim)
    assert big.format == "too_large"


# ------------------------------------------------------------------ regexes


def pump(stream, q: queue.Queue) -> None:
    for line in stream:
        q.put(line)
    q.put(None)


@pytest.mark.slow
def test_every_regex_survives_100kb_adversarial_inputs():
    """tests/support/regex_probe.py finds every compiled pattern in guardian_proxy and times it on 100 KB
    hostile inputs (generic units and units built from the pattern's own characters). A pattern that
    runs past PER_PATTERN_S is killed, reported and skipped so the others are still checked."""
    per_input_ms, per_pattern_s = 1500, 60
    skip: list[str] = []
    slow: list[str] = []
    counted = done = 0
    while True:
        proc = subprocess.Popen([sys.executable, "-m", "tests.support.regex_probe", "--skip", *skip], cwd=ROOT,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                env=dict(os.environ, HF_HUB_OFFLINE="1"))
        lines: queue.Queue = queue.Queue()
        threading.Thread(target=pump, args=(proc.stdout, lines), daemon=True).start()
        current = None
        finished = False
        while True:
            try:
                line = lines.get(timeout=per_pattern_s if current else 300)
            except queue.Empty:
                proc.kill()
                proc.wait()
                if current is None:
                    pytest.fail("regex probe did not start")
                slow.append(f"{current['name']} /{current['pattern']}/ ({current['how']}): over {per_pattern_s}s")
                skip.append(str(current["start"]))
                break
            if line is None:
                finished = True
                break
            d = json.loads(line)
            if "count" in d:
                counted = d["count"]
            elif "start" in d:
                current = d
            elif "done" in d:
                done += 1
                if d["ms"] > per_input_ms:
                    slow.append(f"{current['name']} /{current['pattern']}/ ({current['how']}): {d['ms']} ms on "
                                f"{d['input']!r}×100 KB")
                current = None
        if finished:
            proc.wait()
            break
    assert counted > 50 and done + len(skip) >= counted - 1, (counted, done)
    assert not slow, "patterns that are not linear on 100 KB input:\n" + "\n".join(slow)


def test_logged_path_keeps_route_names_only():
    from guardian_proxy.decision_log import safe_path
    from guardian_proxy.types import Action, Span, TextField

    raw = f"/u/{quote(EMAIL)}/{quote(NAME)}/orders/88812345"
    a = Action(domain="x.example", host="x.example", fields=[TextField(path="path:", text=raw)],
               spans=[Span(path="path:", start=3, end=3 + len(quote(EMAIL)), entity="EMAIL_ADDRESS", category="contact")])
    assert safe_path(f"http://x.example{raw}?email={quote(EMAIL)}", a) == "/u/[EMAIL_ADDRESS]/…/orders/…?email="
    never_read = Action(domain="x.example", host="x.example", flags=["error:extract"])
    assert safe_path(f"http://x.example{raw}", never_read) == "/u/…"
    assert safe_path("http://x.example/api/v1/chat/completions", Action(
        domain="x.example", host="x.example", fields=[TextField(path="path:", text="/api/v1/chat/completions")])) \
        == "/api/v1/chat/completions"
