"""The live view in a real headless Chromium (as test_dashboard_browser.py: Debian's `chromium` driven by Playwright)
on an in-process Dashboard with made decisions: filter and search, pause/resume, the per-site view, the detail's
plain words and decoded "what left the machine", the configuration tab, and a page that reconnects after the
dashboard is stopped and started again on the same state dir. (Its own module: one Playwright per module.)"""

from __future__ import annotations

import time

import pytest

from tests.support.browser import ARTIFACTS, chromium_browser, wait_until  # noqa: F401 (a fixture)

pytestmark = pytest.mark.slow


@pytest.fixture
def solo(tmp_path, chromium):
    """A real Dashboard on a fixed port with the shop.example decisions, and a page open on it."""
    from guardian_proxy.config import load_settings
    from guardian_proxy.dashboard import Dashboard
    from tests.unit.dashboard.test_dashboard_live import publish_shop

    settings = load_settings(state_dir=tmp_path / "state")
    box = {"dash": Dashboard(settings, port=0), "settings": settings}  # the kernel's choice of port
    assert box["dash"].start(), box["dash"].error
    box["port"] = box["dash"].port  # a restart binds it again
    publish_shop(box["dash"])
    page = chromium.new_page(viewport={"width": 1400, "height": 1000})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(box["dash"].url)
    page.wait_for_selector("#live.on", timeout=15000)
    box.update(page=page, errors=errors)
    try:
        yield box
    finally:
        page.close()
        box["dash"].stop()


def rows(page, sel: str = "") -> int:
    return page.locator(f"#decisions tbody tr.decision{sel}").count()


def test_filter_narrows_the_rows_and_the_live_stream(solo):
    from tests.unit.dashboard.test_dashboard_live import decision, raw

    page, dash = solo["page"], solo["dash"]
    wait_until(lambda: rows(page) == 6)
    page.fill("#filter", "action:blocked")
    wait_until(lambda: rows(page) == 1 and rows(page, '[data-action="deny"]') == 1)
    assert "1 matching" in page.text_content("#filter-note")
    dash.publish(raw("www.example.org"), decision("www.example.org", "allow"))
    dash.publish(raw("px.tracker.example"), decision("px.tracker.example", "deny", "shop.example"))
    page.wait_for_selector('tr.decision[data-host="px.tracker.example"]', timeout=15000)
    time.sleep(0.5)
    assert rows(page, '[data-host="www.example.org"]') == 0 and rows(page) == 2  # the stream is filtered too
    page.fill("#filter", "recipient:ad_network host:stats")
    wait_until(lambda: rows(page) == 1 and rows(page, '[data-host="stats.doubleclick.net"]') == 1)
    page.fill("#filter", "")
    page.select_option("#filter-action", "rewritten")
    wait_until(lambda: rows(page) == 1 and rows(page, '[data-action="transform"]') == 1)
    page.select_option("#filter-action", "")
    wait_until(lambda: rows(page) == 8)
    page.fill("#filter", "action:maybe")
    page.wait_for_selector("#filter.invalid")
    assert "allowed, rewritten or blocked" in page.text_content("#filter-note") and rows(page) == 8
    assert not solo["errors"], solo["errors"]


def test_pause_holds_new_rows_until_resume(solo):
    from tests.unit.dashboard.test_dashboard_live import decision, raw

    page, dash = solo["page"], solo["dash"]
    wait_until(lambda: rows(page) == 6)
    page.click("#pause")
    assert page.text_content("#pause") == "Resume"
    dash.publish(raw("a.example"), decision("a.example", "allow"))
    dash.publish(raw("b.example"), decision("b.example", "deny"))
    wait_until(lambda: "paused · 2 new" in page.text_content("#pending"))
    wait_until(lambda: page.text_content("#count-total") == "8")  # the counters keep counting
    assert rows(page) == 6
    page.click("#pause")
    wait_until(lambda: rows(page) == 8)
    assert page.locator("#decisions tbody tr.decision").first.get_attribute("data-host") == "b.example"
    assert page.text_content("#pending") == "" and not solo["errors"]


def test_sites_view_shows_what_a_page_talked_to(solo):
    page = solo["page"]
    page.click('nav .tab[data-tab="sites"]')
    page.wait_for_selector('.site[data-site="shop.example"]')
    shop = page.locator('.site[data-site="shop.example"]')
    assert "on shop.example: 2 third parties got requests" in shop.locator("h3").text_content()
    dc = shop.locator('tr[data-domain="doubleclick.net"]').text_content()
    assert "ads.doubleclick.net" in dc and "financial×1" in dc and "device_id×2" in dc
    assert page.locator(".site").first.get_attribute("data-site") == "shop.example"
    assert page.locator('.site[data-site=""]').count() == 1  # requests with no page
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "dashboard-sites.png"), full_page=True)
    shop.locator('[data-testid="site-filter"]').click()
    page.wait_for_selector("#tab-overview:not(.hidden)")
    assert page.input_value("#filter") == "site:shop.example"
    wait_until(lambda: rows(page) == 4 and rows(page, '[data-site="shop.example"]') == 4)
    assert not solo["errors"], solo["errors"]


def test_detail_puts_plain_words_and_what_left_first(solo):
    from guardian_proxy.types import Rewrite
    from tests.unit.dashboard.test_dashboard_live import decision, raw

    page, dash = solo["page"], solo["dash"]
    rw = Rewrite(url="https://t.example/c?name=%5BPERSON%5D&ev=view", body=b'{"a":{"b":1}}', span_counts={"PERSON": 1})
    d = decision("t.example", "transform", "shop.example", {"identity": 1}, start=1, final=2, rounds=2, R=0.5996,
                 explanation="identity data to an analytics service → R 0.60 in the rewrite band (0.15–0.60) → "
                             "rewrite from L1", rewrite=rw)
    dash.publish(raw("t.example", "/c?name=John"), d)
    page.click('tr.decision[data-host="t.example"]')
    page.wait_for_selector("#detail:not(.hidden) [data-testid=plain]")
    row_badge = page.locator('tr.decision[data-host="t.example"]').text_content()
    assert "rewritten L2" in row_badge and "asked L1" in row_badge
    plain = page.text_content("[data-testid=plain]")
    assert plain.startswith("rewritten at L2 (asked for L1): identity data to an analytics service")
    assert "asked for L1, rewritten at L2 after the guesser re-identified" in plain
    assert "R 0.5996 is in the rewrite band: above the allow ceiling 0.15 and below the deny floor 0.60" in plain
    body = page.text_content("#detail-body")
    assert body.index("What left the machine") < body.index("Action (six-tuple)")
    assert page.text_content("[data-testid=left-query]") == "name = [PERSON]\nev = view"
    assert page.text_content("[data-testid=left-body]") == '{\n  "a": {\n    "b": 1\n  }\n}'
    assert "John" not in body and not solo["errors"]


def test_the_page_reconnects_after_the_dashboard_restarts(solo):
    from guardian_proxy.dashboard import Dashboard
    from tests.unit.dashboard.test_dashboard_live import decision, raw

    page = solo["page"]
    solo["dash"].stop()
    page.wait_for_selector("#live.off", timeout=15000)
    time.sleep(3)  # down for a while: the browser's own retries fail
    solo["dash"] = again = Dashboard(solo["settings"], port=solo["port"])  # same state dir: same token
    assert again.start(), again.error
    page.wait_for_selector("#live.on", timeout=30000)
    again.publish(raw("after.example"), decision("after.example", "deny"))
    page.wait_for_selector('tr.decision[data-host="after.example"]', timeout=15000)
    assert not solo["errors"], solo["errors"]


def test_configuration_tab_shows_how_the_proxy_was_started(tmp_path, chromium):
    from guardian_proxy.config import load_settings
    from guardian_proxy.dashboard import Dashboard

    d = Dashboard(load_settings(state_dir=tmp_path / "state"), port=0,
                  run_options={"ssl_insecure": True, "redirect_upstream": "127.0.0.1:9999", "ca": "/c/ca.pem",
                               "confdir": "/c"})
    assert d.start()
    page = chromium.new_page()
    try:
        page.goto(d.url)
        page.click('nav .tab[data-tab="config"]')
        page.wait_for_selector("#proxy-info >> text=--ssl-insecure")
        info = page.text_content("#proxy-info")
        assert "on: upstream TLS certificates are NOT verified" in info
        assert "--redirect-upstream127.0.0.1:9999" in info and "CA certificate/c/ca.pem" in info
        assert "confdir/c" in info
    finally:
        page.close()
        d.stop()


def test_a_new_token_at_restart_says_so_instead_of_reconnecting_forever(solo):
    from guardian_proxy.dashboard import Dashboard
    from guardian_proxy.dashboard.security import TokenFile

    page = solo["page"]
    solo["dash"].stop()
    page.wait_for_selector("#live.off", timeout=15000)
    TokenFile.for_state_dir(solo["settings"].state_dir).rotate()  # `guardian-proxy dashboard --new-token`
    solo["dash"] = again = Dashboard(solo["settings"], port=solo["port"])
    assert again.start(), again.error
    page.wait_for_selector("#live.warn", timeout=30000)
    assert "token changed" in page.text_content("#live") and "guardian-proxy dashboard" in page.text_content("#live")


def test_a_new_token_while_the_page_is_open_says_so_at_once(solo):
    """`guardian-proxy dashboard --new-token` while the page is live: the server ends its stream, the pill says
    "token changed — reopen from `guardian-proxy dashboard`" (not "live", not "reconnecting"), and a decision made
    afterwards never reaches the page."""
    from guardian_proxy.dashboard.security import TokenFile
    from tests.unit.dashboard.test_dashboard_live import decision, raw

    page, dash = solo["page"], solo["dash"]
    TokenFile.for_state_dir(solo["settings"].state_dir).rotate()  # `guardian-proxy dashboard --new-token`
    dash.publish(raw("after-rotation.example"), decision("after-rotation.example", "deny"))
    page.wait_for_selector("#live.warn", timeout=30000)
    assert page.text_content("#live") == "token changed — reopen from `guardian-proxy dashboard`"
    assert rows(page, '[data-host="after-rotation.example"]') == 0
    assert dash.hub.subscribers == 0 and not solo["errors"], solo["errors"]
