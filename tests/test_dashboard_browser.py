"""The dashboard in a real headless Chromium (Debian's `chromium`, driven by Playwright with executable_path),
beside a real `guardian-proxy run`: the browser reaches the web through the proxy's PAC file, decisions made
through the proxy appear live, an override click changes the next decision for that domain, a page from
another site cannot read or change anything, and a screenshot is saved as a test artifact
(build/test-artifacts/dashboard*.png, or $GUARDIAN_TEST_ARTIFACTS)."""

from __future__ import annotations

import re

import httpx
import pytest

from tests.support.browser import ARGS, ARTIFACTS, CHROMIUM, launch, sync_api, wait_until  # noqa: F401 (preflight)
from tests.support.proxy_process import start_proxy
from tests.support.upstream import start_upstream

pytestmark = pytest.mark.slow
CARD = "4111 1111 1111 1111"
EMAIL = "john.smith@example.com"


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    sync_api()  # skips without Chromium or Playwright
    tmp = tmp_path_factory.mktemp("dash")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    up = start_upstream()
    px = start_proxy(tmp, up.port, dashboard=True)
    m = re.search(r"dashboard: (http://127\.0\.0\.1:(\d+)/\?token=\S+)", px.output.read_text())
    assert m, px.output.read_text()
    url, port = m.group(1), int(m.group(2))
    try:
        with launch(f"--proxy-pac-url=http://127.0.0.1:{port}/proxy.pac") as browser:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            yield {"up": up, "px": px, "url": url, "base": f"http://127.0.0.1:{port}", "page": page,
                   "browser": browser, "errors": errors}
    finally:
        px.stop()
        up.close()


def via_proxy(px, method, url, **kw):
    return httpx.request(method, url, proxy=px.url, timeout=30, **kw)


def test_decisions_appear_live(stack):
    page, px = stack["page"], stack["px"]
    page.goto(stack["url"])
    page.wait_for_selector("#live.on", timeout=15000)
    assert page.url == stack["base"] + "/"  # the token left the address bar for a cookie
    before = int(page.text_content("#count-total"))
    assert via_proxy(px, "GET", "http://www.example.org/hello").status_code == 200
    assert via_proxy(px, "POST", "http://ads.doubleclick.net/collect", json={"pan": CARD}).status_code == 403
    r = via_proxy(px, "POST", "http://support.zendesk.com/api/tickets", json={"text": f"Call John Smith at {EMAIL}"},
                  headers={"user-agent": "Dalvik/2.1.0 (Linux; U; Android 14; Pixel 8)"})  # a phone app's SDK, not the user's own client
    assert r.status_code == 200
    # no reload: rows arrive over the event stream
    page.wait_for_selector('tr.decision[data-host="ads.doubleclick.net"][data-action="deny"]', timeout=15000)
    page.wait_for_selector('tr.decision[data-host="support.zendesk.com"][data-action="transform"]', timeout=15000)
    page.wait_for_selector('tr.decision[data-host="www.example.org"][data-action="allow"]', timeout=15000)
    wait_until(lambda: int(page.text_content("#count-total")) >= before + 3)  # (CSP forbids wait_for_function)
    assert int(page.text_content("#count-deny")) >= 1
    assert page.locator('#destinations tr[data-host="ads.doubleclick.net"]').count() == 1
    assert page.locator("#chart-risk rect[data-bin]").count() == 10
    assert page.locator("#chart-time rect").count() >= 1
    html = page.content()
    assert CARD not in html and EMAIL not in html and "John Smith" not in html
    assert not stack["errors"], stack["errors"]


def test_the_browser_itself_goes_through_the_pac_proxy(stack):
    page = stack["browser"].new_page()
    try:
        r = page.goto("http://www.example.org/from-the-browser")
        assert r.status == 200 and "/from-the-browser" in page.content()
    finally:
        page.close()
    assert "/from-the-browser" in [r.path for r in stack["up"].received]
    stack["page"].wait_for_selector('tr.decision[data-host="www.example.org"] >> text=/from-the-browser',
                                    timeout=15000)


def test_detail_view_and_override_click_changes_next_decision(stack):
    page, px, up = stack["page"], stack["px"], stack["up"]
    page.click('tr.decision[data-host="support.zendesk.com"]')
    page.wait_for_selector("#detail:not(.hidden)")
    body = page.text_content("#detail-body")
    for words in ("Action (six-tuple)", "service provider", "Sd · Mtr · Mp · Mb", "Seff", "tier", "start level",
                  "final level", "Policy evidence", "Rewritten form"):
        assert words in body, words
    assert EMAIL not in body and "John Smith" not in body
    # which recognizer found each span, by field path (docs/design/extraction.md)
    found = page.locator('[data-testid="found-lines"] li').all_text_contents()
    assert "Found by" in body and any(x.startswith("EMAIL_ADDRESS at json:$.text — ") for x in found), found
    page.screenshot(path=str(ARTIFACTS / "dashboard-detail.png"))

    page.click('tr.decision[data-host="ads.doubleclick.net"][data-action="deny"]')
    # the previous detail view has the same buttons: wait until the view shows the row just clicked
    page.wait_for_selector("#detail-title >> text=ads.doubleclick.net")
    page.wait_for_selector('[data-testid="ov-allow-domain"]')
    assert page.text_content("#detail-title").strip().endswith("ads.doubleclick.net")
    n = len(up.received)
    page.click('[data-testid="ov-allow-domain"]')
    page.wait_for_selector(".flash >> text=Override saved")
    store = px.state_dir / "overrides.yaml"
    assert "doubleclick.net" in store.read_text() and "allow" in store.read_text()
    r = via_proxy(px, "POST", "http://ads.doubleclick.net/collect", json={"pan": CARD})
    assert r.status_code == 200 and len(up.received) == n + 1  # the next decision for that domain changed
    last = px.log_lines()[-1]
    assert last["action"] == "allow" and last["override"] and "doubleclick.net" in last["override"]
    page.wait_for_selector('tr.decision[data-host="ads.doubleclick.net"][data-action="allow"] .tag', timeout=15000)

    page.click('nav .tab[data-tab="overrides"]')
    page.wait_for_selector("#overrides tbody tr >> text=doubleclick.net")
    page.click('#overrides [data-testid^="ov-remove-"]')
    assert "doubleclick.net" in store.read_text()  # removing asks first (docs/dashboard.md)
    page.click('#overrides [data-testid^="ov-confirm-"]')
    page.wait_for_selector(".flash >> text=Override removed")
    assert "doubleclick.net" not in store.read_text()
    assert via_proxy(px, "POST", "http://ads.doubleclick.net/collect", json={"pan": CARD}).status_code == 403
    page.click('nav .tab[data-tab="overview"]')


def test_configuration_tab(stack):
    page = stack["page"]
    page.click('nav .tab[data-tab="config"]')
    page.wait_for_selector("#models tbody tr >> text=factor tables")
    assert "proxy.pac" in page.text_content("#proxy-info")
    assert '"dashboard_port"' in page.text_content("#settings")
    page.click('nav .tab[data-tab="overview"]')


def test_another_site_cannot_read_or_write(stack):
    """A page from another origin (reached through the proxy) tries the API with the browser's cookies."""
    page = stack["browser"].new_page()
    try:
        page.goto(stack["url"])  # this browser has the dashboard cookie now
        page.goto("http://www.example.org/evil")
        base = stack["base"]
        read = page.evaluate("""async (base) => {
            try { const r = await fetch(base + '/api/snapshot', {credentials: 'include'});
                  return 'read ' + r.status + ' ' + (await r.text()).slice(0, 40); }
            catch (e) { return 'blocked'; } }""", base)
        assert read == "blocked" or read.startswith(("read 401", "read 403")), read
        page.evaluate("""async (base) => {
            try { await fetch(base + '/api/overrides', {method: 'POST', mode: 'no-cors', credentials: 'include',
                  headers: {'content-type': 'text/plain'}, body: '{"action":"allow","domain":"evil.example"}'}); }
            catch (e) {} }""", base)
    finally:
        page.close()
    store = stack["px"].state_dir / "overrides.yaml"
    assert not store.exists() or "evil.example" not in store.read_text()


def test_screenshot_artifact(stack):
    page = stack["page"]
    page.keyboard.press("Escape")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "dashboard.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000 and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
