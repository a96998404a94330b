"""The block page in real Chromium (Debian's `chromium`, driven by Playwright as tests/test_dashboard_browser.py
does): a real `guardian-proxy run` with its dashboard, a user deny rule for a site, and "Allow once" on the
403 page. The click posts to the dashboard (another origin) with the page's grant, the browser is sent back
to the blocked URL and gets the site's page; the request after that one is blocked again.

HTTPS (a local TLS upstream, --ssl-insecure, --ignore-certificate-errors) because Chromium sends Fetch Metadata
(Sec-Fetch-Mode: navigate) only to secure origins, and the buttons are only offered on a navigation the browser
attests (guardian_proxy/dashboard/block_actions.py).
"""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from guardian_proxy.cli import app
from tests.support.browser import launch, sync_api
from tests.support.proxy_process import start_proxy
from tests.support.upstream import start_upstream

pytestmark = pytest.mark.slow
SITE = "www.blocked.example"
URL = f"https://{SITE}/article?id=7"


def test_allow_once_from_the_block_page_lets_the_next_request_pass_and_the_one_after_is_blocked(tmp_path):
    sync_api()  # skips without Chromium or Playwright
    up = start_upstream(tmp_path, [SITE])
    px = start_proxy(tmp_path, up.port, dashboard=True)
    try:
        assert re.search(r"dashboard: http://127\.0\.0\.1:\d+/", px.output.read_text()), px.output.read_text()
        r = CliRunner().invoke(app, ["deny", "blocked.example", "--state-dir", str(px.state_dir)])
        assert r.exit_code == 0, r.output
        with launch(f"--proxy-server=http://127.0.0.1:{px.port}", "--ignore-certificate-errors") as browser:
            _allow_once(browser, up, px)
    finally:
        px.stop()
        up.close()


def _allow_once(browser, up, px) -> None:
    page = browser.new_context(ignore_https_errors=True).new_page()

    first = page.goto(URL, timeout=30_000)
    assert first.status == 403, first.text()
    assert page.locator("#guardian-decision").count() == 1  # the link to the decision on the dashboard
    assert page.locator("#guardian-allow-1h").count() == 1 and page.locator("#guardian-allow-forever").count() == 1
    seen = len([x for x in up.received if x.path.startswith("/article")])
    assert seen == 0  # the blocked request never left
    # the reason in words first (docs/dashboard.md), and "see this decision" opens the dashboard's own detail
    # view: from the sandboxed page (an opaque origin) through a new tab, no cookie yet
    reason = page.text_content("#guardian-reason")
    assert "stopped before" in reason and "Your rule decided it: " in reason, reason
    with page.context.expect_page(timeout=30_000) as opened:
        page.click("#guardian-decision")
    detail = opened.value
    detail.wait_for_selector('#detail:not(.hidden) [data-testid="sentence"]', timeout=30_000)
    assert SITE in detail.text_content("#detail-title")
    assert detail.locator('[data-testid="act-once"]').count() == 1  # the actions first
    detail.close()

    with page.expect_navigation(url=URL, timeout=30_000) as nav:
        page.click("#guardian-allow-once")
    passed = nav.value
    assert passed is not None and passed.status == 200, (passed and passed.status, page.content()[:2000])
    assert json.loads(page.inner_text("body"))["ok"] is True  # the site's own answer
    assert len([x for x in up.received if x.path.startswith("/article")]) == 1

    again = page.goto(URL, timeout=30_000)
    assert again.status == 403, again.text()[:500]
    assert len([x for x in up.received if x.path.startswith("/article")]) == 1  # blocked again: never left

    r = CliRunner().invoke(app, ["overrides", "--json", "--state-dir", str(px.state_dir)])
    rows = json.loads(r.stdout)
    once = [x for x in rows if x.get("once")]
    assert len(once) == 1 and once[0]["domain"] == "blocked.example" and once[0]["state"] == "spent", rows
