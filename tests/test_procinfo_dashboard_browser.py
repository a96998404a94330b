"""The dashboard's app column and `app:` filter (docs/dashboard.md) in a real headless Chromium, on an
in-process Dashboard (as tests/test_dashboard_live_browser.py)."""

from __future__ import annotations

import pytest

from tests.support.browser import chromium_browser, wait_until  # noqa: F401 (a fixture)

pytestmark = pytest.mark.slow

APPS = [("api.openai.com", "allow", {"name": "python3 agent.py", "pid": 978, "exe": "/usr/bin/python3.11",
                                     "kind": "tool"}),
        ("px.tracker.example", "deny", {"name": "curl", "pid": 977, "exe": "/usr/bin/curl", "kind": "tool"}),
        ("www.example.org", "allow", {"name": "remote"})]


def test_app_column_and_filter(tmp_path, chromium):
    from guardian_proxy.config import load_settings
    from guardian_proxy.dashboard import Dashboard
    from tests.unit.dashboard.test_dashboard_live import decision, raw

    dash = Dashboard(load_settings(state_dir=tmp_path / "state"), port=0)
    assert dash.start(), dash.error
    try:
        for host, action, app in APPS:
            dash.publish(raw(host).model_copy(update={"app": app}), decision(host, action))
        page = chromium.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(dash.url)
        page.wait_for_selector("#live.on", timeout=15000)

        def shown():
            return sorted(page.locator("#decisions tbody tr.decision [data-testid=app]").all_text_contents())

        wait_until(lambda: shown() == ["curl", "python3 agent.py", "remote"])
        cell = page.locator('tr.decision[data-host="px.tracker.example"] [data-testid=app]')
        assert cell.get_attribute("title") == "/usr/bin/curl"
        page.fill("#filter", "app:agent.py")
        wait_until(lambda: shown() == ["python3 agent.py"])
        page.fill("#filter", "app:remote")
        wait_until(lambda: shown() == ["remote"])
    finally:
        dash.stop()
