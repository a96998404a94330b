"""A real headless Chromium for the browser tests: Debian's `chromium` ($GUARDIAN_CHROMIUM) driven by Playwright
with executable_path. A test is skipped, saying why, when either is missing.

    from tests.support.browser import chromium_browser  # noqa: F401 (the `chromium` fixture)

    def test_x(chromium):           # one browser per module, no proxy: for an in-process Dashboard
        page = chromium.new_page()

    with launch(f"--proxy-server=http://127.0.0.1:{px.port}") as browser:   # a browser of one's own
        ...

Screenshots go to ARTIFACTS (build/test-artifacts, or $GUARDIAN_TEST_ARTIFACTS)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("GUARDIAN_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run"]
ARTIFACTS = Path(os.environ.get("GUARDIAN_TEST_ARTIFACTS",
                                Path(__file__).resolve().parents[2] / "build" / "test-artifacts"))


def wait_until(cond, timeout: float = 15.0) -> None:
    deadline = time.time() + timeout
    while not cond():
        assert time.time() < deadline, "condition not met in time"
        time.sleep(0.1)


def sync_api():
    """playwright.sync_api, after checking Chromium is there (else the test is skipped)."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} not installed (apt-get install -y chromium; .ci/run installs it)")
    return pytest.importorskip("playwright.sync_api", reason="playwright (Python package) not installed")


@contextmanager
def launch(*args: str) -> Iterator:
    """A headless Chromium with ARGS and `args`, closed (and Playwright stopped) on the way out."""
    api = sync_api()
    pw = api.sync_playwright().start()
    try:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=[*ARGS, *args])
        try:
            yield browser
        finally:
            browser.close()
    finally:
        pw.stop()


@pytest.fixture(scope="module", name="chromium")
def chromium_browser():
    """One browser per module that goes nowhere through a proxy (an in-process Dashboard on 127.0.0.1)."""
    with launch("--no-proxy-server") as browser:
        yield browser
