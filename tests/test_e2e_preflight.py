"""A user "deny" rule on a tracker and the browser's CORS preflight (R-BLOCK-ANSWER, R-PREFLIGHT): a tracker
call a page makes with `fetch(..., {method: "POST", headers: {"content-type": "application/json"}})` is
preceded by an OPTIONS preflight. Denied like the call itself, the preflight got the silent 204 without the
Access-Control-Allow-Methods/-Headers a preflight needs, so the browser failed the call with a network error and
the SDK retried. Now a denied preflight is answered by the proxy itself, granting what was asked, so the real call
follows and ends in the same silent 204 as any decided tracker call; nothing reaches the tracker either way."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow

TRACKER = "www.google-analytics.com"
ORIGIN = "https://shop.example"
PREFLIGHT = {"origin": ORIGIN, "access-control-request-method": "POST",
             "access-control-request-headers": "content-type,x-client-id", "sec-fetch-mode": "cors",
             "sec-fetch-dest": "empty", "sec-fetch-site": "cross-site", "referer": f"{ORIGIN}/cart",
             "user-agent": "Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0 Safari/537.36", "accept": "*/*"}


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    from typer.testing import CliRunner

    from guardian_proxy.cli import app
    from tests.support.proxy_process import start_proxy
    from tests.support.upstream import start_upstream

    tmp = tmp_path_factory.mktemp("preflight")
    r = CliRunner().invoke(app, ["deny", TRACKER, "--state-dir", str(tmp / "state")])
    assert r.exit_code == 0, r.output
    up = start_upstream()
    px = start_proxy(tmp, up.port, extra=["--dashboard-port", "0"])
    try:
        yield px, up
    finally:
        px.stop()
        up.close()


def test_a_denied_trackers_preflight_grants_what_the_call_needs_and_the_call_ends_in_a_silent_204(stack):
    import httpx

    px, up = stack
    url = f"http://{TRACKER}/g/collect?v=2"
    with httpx.Client(proxy=px.url, timeout=60, trust_env=False) as c:
        pre = c.request("OPTIONS", url, headers=PREFLIGHT)
        assert 200 <= pre.status_code < 300, (pre.status_code, pre.headers)
        h = pre.headers
        assert h["access-control-allow-origin"] == ORIGIN and h["access-control-allow-credentials"] == "true"
        assert "POST" in [m.strip() for m in h["access-control-allow-methods"].split(",")]
        granted = {x.strip().lower() for x in h["access-control-allow-headers"].split(",")}
        assert {"content-type", "x-client-id"} <= granted
        assert h["x-guardian-blocked"] == "preflight" and h["x-guardian-decision"]
        assert "origin" in h["vary"].lower()
        call = c.post(url, content=b'{"cid":"555.1","email":"jane.doe@gmail.com"}',
                      headers={**{k: v for k, v in PREFLIGHT.items() if not k.startswith("access-control-")},
                               "content-type": "application/json", "x-client-id": "555.1"})
        assert call.status_code == 204 and call.headers["x-guardian-blocked"] == "silent"
        assert call.headers["access-control-allow-origin"] == ORIGIN
    assert not [x for x in up.received if "/g/collect" in x.path]  # neither left the machine
    actions = [(x.get("method"), x.get("action")) for x in px.log_lines() if x.get("host") == TRACKER]
    assert ("OPTIONS", "deny") in actions and ("POST", "deny") in actions


def test_a_plain_options_request_is_no_preflight(stack):
    """OPTIONS without Access-Control-Request-Method (a server-side client asking what a URL allows) is blocked
    like any request by a non-browser client: the JSON 403, nothing granted."""
    import httpx

    px, up = stack
    with httpx.Client(proxy=px.url, timeout=60, trust_env=False) as c:
        r = c.request("OPTIONS", f"http://{TRACKER}/g/collect")
    assert r.status_code == 403 and "access-control-allow-methods" not in r.headers


PAGE = b"""<!doctype html><meta charset="utf-8"><title>shop</title><script>
fetch("https://%s/g/collect?v=2", {method: "POST", credentials: "include", mode: "cors",
      headers: {"content-type": "application/json", "x-client-id": "555.1"},
      body: JSON.stringify({cid: "555.1", email: "jane.doe@gmail.com"})})
  .then((r) => { document.title = "done " + r.status; })
  .catch((e) => { document.title = "network error " + e; });
</script>""" % TRACKER.encode()


def test_in_a_real_browser_the_sdks_call_ends_in_a_204_not_a_network_error(tmp_path):
    """Chromium itself: a page on shop.example (served through the proxy) POSTs JSON to the denied tracker, as an
    analytics SDK does. The fetch resolves with 204 (before: TypeError "Failed to fetch", which SDKs retry)."""
    from pathlib import Path

    from tests.test_dashboard_browser import ARGS, CHROMIUM

    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} not installed (apt-get install -y chromium; .ci/run installs it)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (Python package) not installed")
    from tests.support.proxy_process import start_proxy
    from tests.support.upstream import ClosingHandler, send_body, serve

    seen: list[str] = []

    class Site(ClosingHandler):
        def do_GET(self):  # noqa: N802
            seen.append(f"GET {self.headers.get('host')}{self.path}")
            send_body(self, PAGE, "text/html; charset=utf-8")

        def do_OPTIONS(self):  # noqa: N802  (the tracker's own preflight answer: never reached)
            seen.append(f"OPTIONS {self.headers.get('host')}{self.path}")
            self.send_response(204)
            self.end_headers()

        do_POST = do_OPTIONS

    from typer.testing import CliRunner

    from guardian_proxy.cli import app

    assert CliRunner().invoke(app, ["deny", TRACKER, "--state-dir", str(tmp_path / "state")]).exit_code == 0
    site = serve(Site)
    px2 = start_proxy(tmp_path, site.server_address[1], extra=["--dashboard-port", "0"])
    pw = sync_api.sync_playwright().start()
    try:
        # the call goes over HTTPS as SDKs make it (Chromium upgrades http:// to an HSTS-preloaded host with an
        # internal redirect, which a preflight may not follow); the proxy's CA is not installed in this profile
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=[*ARGS, "--ignore-certificate-errors",
                                                                     f"--proxy-server=http://127.0.0.1:{px2.port}"])
        page = browser.new_page()
        page.goto("http://shop.example/cart", timeout=60_000)
        page.wait_for_function("document.title !== 'shop'", timeout=60_000)
        assert page.title() == "done 204", page.title()
        browser.close()
    finally:
        pw.stop()
        px2.stop()
        site.shutdown()
        site.server_close()
    assert "GET shop.example/cart" in seen and not [x for x in seen if TRACKER in x], seen  # nothing reached it
