"""The action-first dashboard (docs/dashboard.md) in a real headless Chromium at 800 px (as
test_dashboard_live_browser.py: Debian's `chromium` driven by Playwright, on an in-process Dashboard with made
decisions): the detail view opens with its actions, then one plain sentence, then the numbers, and shows the
stand-ins that left marked (never the original); "Allow 1 hour" lands in the Overrides tab with its duration,
end, matches and last match, and removing asks first; the "only with personal data" switch; CORS preflights
apart in Sites; the histogram coloured by decision; nothing wider than the window; the block page's "see this
decision" opens the dashboard's own detail view. Screenshots go to
build/test-artifacts/dashboard-800-*.png."""

from __future__ import annotations

import json
import re
from html import unescape

import pytest

from tests.support.browser import ARTIFACTS, chromium_browser, wait_until  # noqa: F401 (a fixture)

pytestmark = pytest.mark.slow
ORIGINAL = "jane.doe@gmail.com"
STANDIN = "kmiller@example.com"
NAV = {"sec-fetch-mode": "navigate", "sec-fetch-dest": "document", "sec-fetch-site": "none", "accept": "text/html"}


@pytest.fixture
def narrow(tmp_path, chromium):
    from guardian_proxy.config import load_settings
    from guardian_proxy.dashboard import Dashboard
    from guardian_proxy.types import Rewrite
    from tests.unit.dashboard.test_dashboard_live import decision, raw

    dash = Dashboard(load_settings(state_dir=tmp_path / "state"), port=0)
    assert dash.start(), dash.error
    rw = Rewrite(body=json.dumps({"email": STANDIN, "event": "checkout"}).encode(), span_counts={"EMAIL_ADDRESS": 1})
    made = {
        "rewritten": (raw("api.segment.io", body=json.dumps({"email": ORIGINAL, "event": "checkout"}).encode()),
                      decision("api.segment.io", "transform", "shop.example", {"contact": 1}, "analytics", R=0.4,
                               start=2, final=2, rewrite=rw)),
        "blocked": (raw("t.broker.example"), decision("t.broker.example", "deny", "shop.example", {"contact": 1},
                                                      "data_broker", R=0.9)),
        "plain": (raw("update.browser.example", method="GET", body=b""),
                  decision("update.browser.example", "allow", None, {}, "service_provider", R=0.01)),
        "preflight": (raw("api.segment.io", method="OPTIONS", body=b""),
                      decision("api.segment.io", "allow", "shop.example", {}, "analytics", R=0.0)),
    }
    for req, d in made.values():
        dash.publish(req, d)
    context = chromium.new_context(viewport={"width": 800, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        yield {"dash": dash, "page": page, "made": made, "errors": errors, "context": context}
    finally:
        context.close()
        dash.stop()


def no_sideways_scroll(page) -> None:
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 800, f"the page is {width} px wide at an 800 px window"


def test_action_first_detail_at_800px(narrow):
    page, dash, made = narrow["page"], narrow["dash"], narrow["made"]
    page.goto(dash.url)
    page.wait_for_selector("#live.on", timeout=15000)
    wait_until(lambda: page.locator("#decisions tbody tr.decision").count() == 4)
    no_sideways_scroll(page)
    # the histogram is coloured by decision
    assert page.locator('#chart-risk rect[data-action="deny"]').count() == 1
    assert page.locator('#chart-risk rect[data-action="transform"]').count() == 1

    page.click(f'tr.decision[data-id="{made["rewritten"][1].id}"]')
    page.wait_for_selector('#detail:not(.hidden) [data-testid="sentence"]')
    first = page.evaluate("Array.from(document.querySelector('#detail-body').children).slice(0, 3)"
                          ".map(e => e.dataset.testid || e.className)")
    assert first == ["detail-actions", "sentence", "plain"], first  # actions, then the sentence, then the numbers
    assert page.text_content('[data-testid="sentence"]') == (
        "Your e-mail address was replaced with a stand-in before it went to segment.io (analytics), sent by "
        "shop.example.")
    marks = page.locator('[data-testid="left-body"] mark.standin')
    assert marks.count() == 1 and STANDIN in marks.first.text_content() and "stand-in" in marks.first.text_content()
    body = page.text_content("#detail-body")
    assert ORIGINAL not in body and "[EMAIL_ADDRESS]" not in page.text_content('[data-testid="left-body"]')
    for label in ("Allow once", "Allow 1 hour", "Always allow", "Deny"):
        assert page.locator('[data-testid="detail-actions"] button', has_text=label).count() == 1, label
    no_sideways_scroll(page)
    page.screenshot(path=str(ARTIFACTS / "dashboard-800-detail.png"))

    page.click('[data-testid="act-1h"]')
    page.wait_for_selector(".flash >> text=Override saved")
    page.click("#detail-close")
    page.click('nav .tab[data-tab="overrides"]')
    page.wait_for_selector('#overrides tbody tr >> text=segment.io')
    assert page.text_content('[data-testid="ov-duration"]') == "1 h"
    assert page.text_content('[data-testid="ov-ends"]').startswith("ends ")
    assert page.text_content('[data-testid="ov-matched"]') == "0"
    assert page.text_content('[data-testid="ov-last"]') == "never"
    page.screenshot(path=str(ARTIFACTS / "dashboard-800-overrides.png"))
    page.click('#overrides [data-testid^="ov-remove-"]')
    assert "segment.io" in dash.overrides.store.path.read_text()  # not yet: it asks first
    page.click('#overrides [data-testid^="ov-confirm-"]')
    page.wait_for_selector('[data-testid="overrides-empty"]')
    assert "No overrides yet" in page.text_content('[data-testid="overrides-empty"]')

    page.click('nav .tab[data-tab="sites"]')
    page.wait_for_selector('[data-testid="preflights"]')
    assert "1 CORS preflight apart" in page.text_content('[data-testid="preflights"]')
    page.click('nav .tab[data-tab="overview"]')
    page.check("#only-data")
    wait_until(lambda: page.locator("#decisions tbody tr.decision").count() == 2)
    assert page.locator('tr.decision[data-host="update.browser.example"]').count() == 0
    no_sideways_scroll(page)
    page.screenshot(path=str(ARTIFACTS / "dashboard-800-live.png"), full_page=True)
    assert not narrow["errors"], narrow["errors"]


def test_see_this_decision_opens_the_dashboards_detail_view(narrow):
    from mitmproxy.test import tflow

    from guardian_proxy.mitm.blocking import blocked_response

    page, dash, made = narrow["page"], narrow["dash"], narrow["made"]
    d = made["blocked"][1]
    f = tflow.tflow()
    f.request.url = "https://t.broker.example/collect"
    f.request.headers.clear()
    for k, v in NAV.items():
        f.request.headers[k] = v
    block = blocked_response(d, f, dashboard=dash).content.decode()
    assert "Your contact details, sent by shop.example to a data broker (broker.example), were stopped" in block
    link = unescape(re.search(r"id='guardian-decision' href='([^']+)'", block).group(1))
    page.goto(link)  # a fresh context: no cookie yet
    page.wait_for_selector('#detail:not(.hidden) [data-testid="sentence"]', timeout=15000)
    assert page.url.endswith(f"/#decision={d.id}")
    assert page.text_content('[data-testid="sentence"]').startswith("Your contact details, sent by shop.example")
    assert page.locator('[data-testid="act-once"]').count() == 1
    page.screenshot(path=str(ARTIFACTS / "dashboard-800-from-block-page.png"))
    assert not narrow["errors"], narrow["errors"]
