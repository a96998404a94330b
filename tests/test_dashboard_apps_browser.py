"""The Apps tab in a real headless Chromium (tests/support/browser.py) on the dashboard of a real `guardian-proxy run`
that served real `curl` requests: the tab lists curl (found by procinfo) with its requests, how many carried personal
data, what it sent to whom; its "Always deny" button makes a rule for curl and that destination only, the next curl
request gets the JSON 403 whose reason names curl, and "show requests" fills the live table's `app:` filter.
Screenshot: build/test-artifacts/dashboard-apps.png."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest
from typer.testing import CliRunner

from guardian_proxy import procinfo
from guardian_proxy.cli import app
from tests.support.browser import ARTIFACTS, launch, sync_api, wait_until
from tests.support.proxy_process import start_proxy
from tests.support.upstream import start_upstream

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not procinfo.supported(), reason="needs Linux /proc/net/tcp"),
              pytest.mark.skipif(shutil.which("curl") is None, reason="needs curl")]
EMAIL = "jane.doe@gmail.com"


def curl(px, path: str, body: dict | None = None) -> tuple[int, str]:
    args = ["curl", "-sS", "-o", "-", "-w", "\n%{http_code}", "-x", px.url]
    if body is not None:
        args += ["-H", "content-type: application/json", "--data", json.dumps(body)]
    p = subprocess.run([*args, f"http://www.example.org{path}"], capture_output=True, text=True, timeout=120)
    text, _, code = p.stdout.rpartition("\n")
    assert code.isdigit(), p.stderr
    return int(code), text


@pytest.fixture
def served(tmp_path):
    sync_api()  # skips without Chromium or Playwright
    up = start_upstream()
    px = start_proxy(tmp_path, up.port, dashboard=True)
    try:
        m = re.search(r"dashboard: (http://127\.0\.0\.1:\d+/\?token=\S+)", px.output.read_text())
        assert m, px.output.read_text()
        yield up, px, m.group(1)
    finally:
        px.stop()
        up.close()


def test_apps_tab_of_a_real_proxy(served):
    up, px, url = served
    assert curl(px, "/apps-get")[0] == 200
    assert curl(px, "/apps-post", {"email": EMAIL, "note": "hello"})[0] == 200
    wait_until(lambda: len([r for r in px.log_lines() if r.get("path", "").startswith("/apps-")]) == 2, 30)
    assert all(r["app"]["name"] == "curl" for r in px.log_lines() if r.get("path", "").startswith("/apps-"))

    with launch("--no-proxy-server") as browser:
        page = browser.new_page(viewport={"width": 1200, "height": 1000})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(url)
        page.wait_for_selector("#live.on", timeout=15000)
        page.click('nav .tab[data-tab="apps"]')
        group = page.locator('section.appgroup[data-app="curl"]')
        group.wait_for(timeout=15000)
        head = group.locator("h3").text_content()
        assert head.startswith("curl (tool)") and "2 requests, 1 with personal data" in head, head
        row = group.locator('tr[data-domain="example.org"]')
        assert row.locator("td").nth(2).text_content() == "2"  # requests to it
        assert EMAIL not in page.content()  # data types, never values
        assert "contact" in group.text_content()

        group.locator('[data-testid="app-deny-example.org"]').click()
        page.wait_for_selector(".flash.ok", timeout=15000)
        r = CliRunner().invoke(app, ["overrides", "--json", "--state-dir", str(px.state_dir)])
        rules = [(o["action"], o.get("domain"), o.get("app")) for o in json.loads(r.stdout)]
        assert rules == [("deny", "example.org", "curl")], r.stdout
        code, body = curl(px, "/apps-after", {"email": EMAIL})
        assert code == 403, body
        reason = json.loads(body)["reason"]
        assert "sent by curl" in reason and EMAIL not in reason, reason
        assert not [r for r in up.received if r.path.startswith("/apps-after")]  # it never left

        page.click('nav .tab[data-tab="overrides"]')
        wait_until(lambda: "curl" in page.locator("#overrides tbody").text_content())
        page.click('nav .tab[data-tab="apps"]')
        wait_until(lambda: "1 blocked" in page.locator('section.appgroup[data-app="curl"] h3').text_content())
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "dashboard-apps.png"), full_page=True)
        page.set_viewport_size({"width": 800, "height": 900})  # the layout holds at 800 px (wide tables scroll)
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 800, f"the Apps tab is {width} px wide at an 800 px window"

        page.locator('section.appgroup[data-app="curl"] [data-testid="app-filter"]').click()
        assert page.input_value("#filter") == "app:curl"
        cells = "#decisions tbody tr.decision [data-testid=app]"
        wait_until(lambda: page.locator(cells).count() == 3)
        assert set(page.locator(cells).all_text_contents()) == {"curl"}
        assert errors == []
