"""End to end (R-ADDRESSED): a real `guardian-proxy run`, a local TLS upstream answering for a
shop and for a known analytics host (`--redirect-upstream`), and real clients (curl, httpx, Node's fetch).

A request no page made (no Origin, Referer or Fetch Metadata) is the user's own client addressing that host: a
login or a contact form sent by curl or httpx reaches the shop byte for byte, as the same login from a browser
does; the same form posted by httpx to a tracker is still not let out as it is. The decision log says why, in
words that do not claim a page made it.
"""

import os
import shutil
import ssl
import subprocess
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from tests.support.proxy_process import start_proxy
from tests.support.upstream import start_upstream

pytestmark = pytest.mark.slow

SHOP = "www.shop-example.com"
TRACKER = "www.google-analytics.com"
EMAIL = "maria.lindqvist@example.com"
PASSWORD = "Tr0ub4dor&3-horse"
LOGIN = f"email={quote(EMAIL)}&password={quote(PASSWORD)}".encode()
CONTACT = (f"name=Maria+Lindqvist&email={quote(EMAIL)}&phone=%2B46+70+123+45+67"
           "&message=Where+is+my+order+ORD-1001%3F").encode()
FORM = "application/x-www-form-urlencoded"
NODE_DIR = Path(__file__).parent / "node"


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    d = tmp_path_factory.mktemp("addressed")
    up = start_upstream(tls_dir=d, names=[SHOP, TRACKER])
    px = start_proxy(d, up.port)
    yield up, px
    px.stop()
    up.close()


def _last_line(px, path):
    return [x for x in px.log_lines() if x.get("path", "").startswith(path)][-1]


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_curl_login_reaches_the_shop_byte_for_byte(stack):
    up, px = stack
    n = len(up.received)
    out = subprocess.run(["curl", "-sS", "--proxy", px.url, "--cacert", str(px.ca), "-d", LOGIN.decode(),
                          f"https://{SHOP}/login"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert '"ok": true' in out.stdout
    got = up.received[n]
    assert got.path == "/login" and got.body == LOGIN  # not `password=[PASSWORD_1]`
    line = _last_line(px, "/login")
    assert line["action"] == "allow" and line["recipient"] == "first_party"
    assert "page made" not in line["explanation"].replace("no page made", "")


def test_httpx_contact_form_and_login_reach_the_shop_byte_for_byte(stack):
    up, px = stack
    for path, body in (("/contact", CONTACT), ("/account/login", LOGIN)):
        n = len(up.received)
        r = httpx.post(f"https://{SHOP}{path}", content=body, headers={"content-type": FORM}, proxy=px.url,
                       verify=ssl.create_default_context(cafile=str(px.ca)))
        assert r.status_code == 200
        assert up.received[n].body == body  # not placeholders
    line = _last_line(px, "/contact")
    assert line["action"] == "allow" and line["recipient"] == "first_party"


@pytest.mark.skipif(shutil.which("node") is None or not (NODE_DIR / "node_modules" / "undici").is_dir(),
                    reason="node or tests/node/node_modules absent (make test installs them)")
def test_a_node_scripts_fetch_login_reaches_the_shop_byte_for_byte(stack):
    """Node's fetch (undici) sends `Sec-Fetch-Mode: cors` on every request, with no Origin, Referer, Sec-Fetch-Site
    or -Dest: a script, not a page, so the same rule as curl's applies."""
    up, px = stack
    n = len(up.received)
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    env["NODE_EXTRA_CA_CERTS"] = str(px.ca)
    out = subprocess.run(["node", str(NODE_DIR / "fetch.mjs"), px.url, f"https://{SHOP}/login", LOGIN.decode()],
                         cwd=NODE_DIR, env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("200") and '"ok": true' in out.stdout
    got = up.received[n]
    assert got.headers.get("sec-fetch-mode") == "cors" and "origin" not in got.headers  # what undici sends
    assert got.path == "/login" and got.body == LOGIN
    line = _last_line(px, "/login")
    assert line["action"] == "allow" and line["recipient"] == "first_party"


def test_browser_login_passes_as_before(stack):
    up, px = stack
    n = len(up.received)
    r = httpx.post(f"https://{SHOP}/login", content=LOGIN, proxy=px.url, verify=ssl.create_default_context(cafile=str(px.ca)), headers={
        "content-type": FORM, "origin": f"https://{SHOP}", "referer": f"https://{SHOP}/login",
        "sec-fetch-site": "same-origin", "sec-fetch-mode": "navigate", "sec-fetch-dest": "document",
        "sec-fetch-user": "?1"})
    assert r.status_code == 200 and up.received[n].body == LOGIN


def test_the_same_email_to_a_tracker_is_not_let_out(stack):
    up, px = stack
    n = len(up.received)
    body = f"v=1&tid=UA-12345-1&cid=555.666&t=event&ec=signup&uid={quote(EMAIL)}".encode()
    r = httpx.post(f"https://{TRACKER}/collect", content=body, headers={"content-type": FORM}, proxy=px.url,
                   verify=ssl.create_default_context(cafile=str(px.ca)))
    arrived = up.received[n:]
    assert all(EMAIL not in x.body.decode(errors="replace") and quote(EMAIL) not in x.body.decode(errors="replace")
               for x in arrived)
    if not arrived:  # blocked
        assert r.status_code in (204, 403)
    line = _last_line(px, "/collect")
    assert line["recipient"] == "analytics" and line["action"] in ("deny", "transform")
