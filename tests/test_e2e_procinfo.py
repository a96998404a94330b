"""End to end (which program sent it, docs/usage.md): a real `curl` and a real Python script named agent.py
send requests through a real `guardian-proxy run`; the decision log names each program (its name, pid and
executable, never its arguments), and `guardian-proxy log --app` keeps one program's lines."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from guardian_proxy import procinfo
from tests.support.proxy_process import BIN, start_proxy
from tests.support.upstream import start_upstream

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not procinfo.supported(), reason="needs Linux /proc/net/tcp")]

AGENT = """\
import sys, urllib.request
opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": sys.argv[1]}))
print(opener.open("http://www.example.org/procinfo-agent?q=1", timeout=60).status)
"""


@pytest.fixture(scope="module")
def proxied(tmp_path_factory):
    up = start_upstream()
    px = start_proxy(tmp_path_factory.mktemp("px"), up.port)
    yield up, px
    px.stop()
    up.close()


def _record(px, path):
    recs = [r for r in px.log_lines() if r.get("path", "").startswith(path)]
    assert recs, f"no decision for {path}: {px.log_lines()[-3:]}"
    return recs[-1]


@pytest.mark.skipif(shutil.which("curl") is None, reason="needs curl")
def test_curl_is_named_in_the_decision_log(proxied):
    up, px = proxied
    p = subprocess.run(["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "-x", px.url,
                        "-H", "X-Secret-Arg: jane.doe@example.com", "http://www.example.org/procinfo-curl"],
                       capture_output=True, text=True, timeout=120)
    assert p.stdout == "200", p.stderr
    app = _record(px, "/procinfo-curl")["app"]
    assert app["name"] == "curl" and app["kind"] == "tool" and isinstance(app["pid"], int)
    assert app["exe"].endswith("/curl")
    assert "jane" not in json.dumps(app)


def test_a_python_script_is_named_by_its_script(proxied, tmp_path):
    up, px = proxied
    script = tmp_path / "agent.py"
    script.write_text(AGENT)
    p = subprocess.run([sys.executable, str(script), px.url, "--token", "s3cret"], capture_output=True, text=True,
                       timeout=120)
    assert p.stdout.strip() == "200", p.stderr
    app = _record(px, "/procinfo-agent")["app"]
    assert app["name"].startswith("python") and app["name"].endswith(" agent.py"), app
    assert app["kind"] == "tool" and "s3cret" not in json.dumps(app)
    # `guardian-proxy log --app agent.py` keeps the script's decisions only
    out = subprocess.run([str(BIN), "log", "--log", str(px.log_path), "--json", "--app", "agent.py"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    paths = [json.loads(x)["path"] for x in out.stdout.splitlines() if x.strip()]
    assert paths and all(x.startswith("/procinfo-agent") for x in paths)


@pytest.mark.skipif(shutil.which("curl") is None, reason="needs curl")
def test_a_rule_for_one_program_applies_to_that_program_only(proxied, tmp_path):
    """`guardian-proxy deny www.example.org --app curl` while the proxy runs: curl is refused, the script is not."""
    up, px = proxied
    r = subprocess.run([str(BIN), "deny", "www.example.org", "--app", "curl", "--state-dir", str(px.state_dir)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "app=curl" in r.stdout, r.stdout + r.stderr
    p = subprocess.run(["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "-x", px.url,
                        "http://www.example.org/procinfo-rule-curl"], capture_output=True, text=True, timeout=120)
    assert p.stdout == "403", p.stderr
    script = tmp_path / "agent.py"
    script.write_text(AGENT.replace("procinfo-agent", "procinfo-rule-agent"))
    p = subprocess.run([sys.executable, str(script), px.url], capture_output=True, text=True, timeout=120)
    assert p.stdout.strip() == "200", p.stderr
    assert _record(px, "/procinfo-rule-curl")["override"] == "always deny (domain=www.example.org, app=curl)"
    assert _record(px, "/procinfo-rule-agent")["override"] is None


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="needs chromium")
def test_a_browser_is_named_as_a_browser(proxied, tmp_path):
    """Headless Chromium's page load: its network process is the browser's executable (`chromium`, kind browser)."""
    up, px = proxied
    p = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                        "--disable-background-networking", "--disable-component-update",
                        f"--user-data-dir={tmp_path / 'profile'}", f"--proxy-server={px.url}",
                        "--dump-dom", "http://www.example.org/procinfo-chromium"],
                       capture_output=True, text=True, timeout=180)
    assert p.returncode == 0, p.stderr[-2000:]
    app = _record(px, "/procinfo-chromium")["app"]
    assert app["kind"] == "browser" and app["name"].startswith("chrom"), app


@pytest.mark.skipif(not (os.environ.get("GUARDIAN_NFT_TESTS") == "1" and shutil.which("nft") and shutil.which("curl")
                         and os.geteuid() == 0),
                    reason="changes the firewall: root, nft, curl and GUARDIAN_NFT_TESTS=1")
def test_transparent_mode_names_the_program(tmp_path):
    """`--mode transparent` behind an nft redirect of one TEST-NET address (192.0.2.77:80, nothing else): the
    client socket is still this machine's, and mitmproxy's sockname is its original destination."""
    up = start_upstream()
    px = start_proxy(tmp_path, up.port, extra=["--mode", "transparent"])
    table = f"guardian_test_{os.getpid()}"
    try:
        for rule in (["add", "table", "ip", table],
                     ["add", "chain", "ip", table, "out", "{ type nat hook output priority -100 ; }"],
                     ["add", "rule", "ip", table, "out", "ip", "daddr", "192.0.2.77", "tcp", "dport", "80",
                      "redirect", "to", f":{px.port}"]):
            subprocess.run(["nft", *rule], check=True)
        p = subprocess.run(["curl", "-sS", "-m", "60", "-o", "/dev/null", "-w", "%{http_code}",
                            "-H", "Host: www.example.org", "http://192.0.2.77/procinfo-transparent"],
                           capture_output=True, text=True, timeout=120)
        assert p.stdout == "200", p.stderr
        app = _record(px, "/procinfo-transparent")["app"]
        assert app["name"] == "curl" and app["kind"] == "tool", app
    finally:
        subprocess.run(["nft", "delete", "table", "ip", table])
        px.stop()
        up.close()
