"""End to end (the console, mitmproxy users, the command line: docs/cli.md), real processes:

- `guardian-proxy run` prints one line per rewritten or blocked request (program, method, host, what and why, never
  a value), nothing for an allowed one; `-v` adds the allowed ones; `-q` prints none;
- its worker process is named in `ps` (`/proc/PID/comm`);
- the banner's hints work: `guardian-proxy env` and a `curl -x … --cacert …` line;
- `run --set <bad>` is refused in one line naming the key before any model loads;
- under mitmweb: a blocked flow is marked (comment, marker, `200 Blocked by guardian-proxy` for a pixel), saved
  flows say so; the dashboard moves off the port mitmweb's own interface holds and answers on the one it got.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import time

import httpx
import pytest

from tests.support.mitmdump_process import start_mitm
from tests.support.proxy_process import BIN, start_proxy
from tests.support.upstream import start_upstream

pytestmark = pytest.mark.slow

EMAIL = "jane.doe.1987@gmail.com"
GA = f"http://www.google-analytics.com/collect?v=1&tid=UA-12345-1&cid=555&t=pageview&uid={EMAIL}"
ALLOWED = "http://www.example.org/console-allowed"
_DECIDED = re.compile(r"(?:rewrote|blocked)(?: \(L\d\))?: ")


def _decision_lines(text: str, host: str) -> list[str]:
    return [x for x in text.splitlines() if f"  {host}  " in x]


def _wait_for(what, timeout: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if what():
            return True
        time.sleep(0.1)
    return False


@pytest.fixture(scope="module")
def upstream():
    up = start_upstream()
    yield up
    up.close()


@pytest.fixture(scope="module")
def default_run(upstream, tmp_path_factory):
    px = start_proxy(tmp_path_factory.mktemp("console"), upstream.port)  # one evaluation worker
    yield px
    px.stop()


def test_a_rewritten_or_blocked_request_gets_one_line_an_allowed_one_none(default_run):
    px = default_run
    assert httpx.get(ALLOWED, proxy=px.url, timeout=120).status_code == 200
    r = httpx.get(GA, proxy=px.url, timeout=120)
    assert r.status_code in (200, 204, 403)
    action = [x for x in px.log_lines() if x.get("host") == "www.google-analytics.com"][-1]["action"]
    assert action in ("deny", "transform")
    assert _wait_for(lambda: _decision_lines(px.output.read_text(), "www.google-analytics.com"))
    text = px.output.read_text()
    [line] = _decision_lines(text, "www.google-analytics.com")
    assert re.search(r"^\[\d\d:\d\d:\d\d\.\d{3}\]\[127\.0\.0\.1:\d+\] .+?  GET  www\.google-analytics\.com  ", line), line
    assert _DECIDED.search(line) and "e-mail address" in line, line
    assert ("blocked" if action == "deny" else "rewrote") in line
    assert EMAIL not in text and not re.search(r"\b1987\b", text)
    assert not _decision_lines(text, "www.example.org"), text  # allowed: mitmdump-like silence by default


@pytest.mark.skipif(shutil.which("curl") is None, reason="needs curl")
def test_the_line_names_the_program_and_the_banner_hints_work(default_run, tmp_path):
    px = default_run
    banner = px.output.read_text()
    assert "SSL_CERT_FILE=" not in banner  # curl does not read it: the banner pointed at a variable curl ignores
    assert 'eval "$(guardian-proxy env --state-dir ' in banner
    [hint] = [x for x in banner.splitlines() if "one request: curl -x " in x]
    cmd = hint.split("one request: ", 1)[1].replace("https://example.com/", "http://www.example.net/console-curl")
    p = subprocess.run(cmd + " -sS -o /dev/null -w '%{http_code}' -H 'X-Mail: " + EMAIL + "'", shell=True,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and p.stdout == "200", p.stderr
    # `guardian-proxy env` (the banner's line) gives curl the proxy and a CA bundle it reads (CURL_CA_BUNDLE)
    env = subprocess.run([str(BIN), "env", "--state-dir", str(px.state_dir)], capture_output=True, text=True,
                         timeout=120)
    assert env.returncode == 0 and "CURL_CA_BUNDLE=" in env.stdout and f":{px.port}" in env.stdout, env.stderr
    r = subprocess.run(["curl", "-sS", "-o", "/dev/null", "-x", px.url, "-H", f"X-Mail: {EMAIL}",
                        "http://www.google-analytics.com/collect?v=1&t=event&ea=" + EMAIL],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert _wait_for(lambda: any(x.split("] ", 1)[-1].startswith("curl  GET  www.google-analytics.com")
                                 for x in _decision_lines(px.output.read_text(), "www.google-analytics.com")))


def test_the_worker_process_is_named(default_run):
    px = default_run
    children = subprocess.run(["ps", "-o", "pid=,comm=", "--ppid", str(px.proc.pid)], capture_output=True,
                              text=True, timeout=30).stdout
    assert "guardian wkr 1" in children or "guardian-proxy:" in children, children


def test_verbose_adds_allowed_lines(upstream, tmp_path):
    px = start_proxy(tmp_path, upstream.port, ["-v", "--workers", "0"])
    try:
        assert httpx.get(ALLOWED, proxy=px.url, timeout=120).status_code == 200
        assert _wait_for(lambda: _decision_lines(px.output.read_text(), "www.example.org"))
        [line] = _decision_lines(px.output.read_text(), "www.example.org")
        assert re.search(r"  GET  www\.example\.org  allowed(?:: [a-z ]+)?$", line), line
    finally:
        px.stop()


def test_quiet_prints_no_decision_line(upstream, tmp_path):
    px = start_proxy(tmp_path, upstream.port, ["-q", "--workers", "0"])
    try:
        httpx.get(GA, proxy=px.url, timeout=120)
        assert [x for x in px.log_lines() if x.get("host") == "www.google-analytics.com"]
        px.stop()  # everything it would print is out
        assert not _decision_lines(px.output.read_text(), "www.google-analytics.com"), px.output.read_text()
    finally:
        px.stop()


def test_a_bad_set_is_refused_before_the_models_load(tmp_path):
    t = time.monotonic()
    p = subprocess.run([str(BIN), "run", "--port", "0", "--state-dir", str(tmp_path / "s"), "--dashboard-port", "0",
                        "--set", "upstream_certs=false"], capture_output=True, text=True, timeout=120)
    took = time.monotonic() - t
    assert p.returncode == 2, p.stdout + p.stderr
    assert p.stderr.strip() == ("error: --set upstream_certs=false: no option 'upstream_certs' "
                                "(did you mean upstream_cert, upstream_auth?)"), p.stderr
    assert "loading models" not in p.stdout + p.stderr and took < 60


def _listening(port: int) -> bool:
    import socket

    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def test_mitmweb_marks_a_block_and_the_dashboard_moves_off_its_port(upstream, tmp_path):
    from mitmproxy import io

    from tests.support.proxy_process import free_port

    web = free_port()  # mitmweb's own interface, and the dashboard port asked for: it must move off it
    flows = tmp_path / "flows.mitm"
    m = start_mitm(tmp_path, "--set", f"guardian_redirect_upstream=127.0.0.1:{upstream.port}",
                   "--set", f"guardian_dashboard_port={web}", "--set", f"save_stream_file={flows}",
                   "--web-port", str(web), tool="mitmweb")
    try:
        m.wait_ready()
        said = re.search(r"dashboard port (\d+) is taken \(mitmweb's own interface\?\): the dashboard uses (\d+)",
                         m.text())
        assert said and int(said.group(1)) == web, m.text()
        moved = int(said.group(2))
        assert f"dashboard http://127.0.0.1:{moved}/" in m.text() and _listening(moved)
        assert "--dashboard-port" not in m.text()  # a flag mitmweb does not have
        d = subprocess.run([str(BIN), "deny", "ads.doubleclick.net", "--state-dir", str(m.state_dir)],
                           capture_output=True, text=True, timeout=120)
        assert d.returncode == 0, d.stderr
        pixel = {"sec-fetch-dest": "image", "sec-fetch-mode": "no-cors", "sec-fetch-site": "cross-site",
                 "referer": "http://shop.example/"}
        deadline = time.monotonic() + 60
        while True:  # the override is read when its file changes
            r = httpx.get("http://ads.doubleclick.net/pixel.gif?ev=view", proxy=m.url, headers=pixel, timeout=120)
            if r.headers.get("x-guardian-blocked") or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert r.status_code == 200 and r.headers.get("x-guardian-blocked") == "pixel", r.headers
        assert r.reason_phrase == "Blocked by guardian-proxy"
        assert _wait_for(lambda: "GET  ads.doubleclick.net  blocked: your rule" in m.text()), m.text()
    finally:
        m.stop()
    with flows.open("rb") as f:
        saved = [x for x in io.FlowReader(f).stream() if x.request.host == "ads.doubleclick.net"
                 and x.response is not None and x.response.headers.get("x-guardian-blocked")]
    assert saved, "no blocked flow saved"
    assert saved[-1].marked == ":no_entry:" and saved[-1].comment == "guardian-proxy blocked: your rule"
    assert saved[-1].response.reason == "Blocked by guardian-proxy"
