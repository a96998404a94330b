"""The everyday visit of the local shop (tests/support/shop_site.py) in a real Chromium, as a user makes it:
read the privacy page, sign in, pay, write through the contact form. Shared by the browser test
(tests/test_e2e_browser_everyday.py) and the capture recorder (scripts/record_captures.py)."""

from __future__ import annotations

import json
import time
from pathlib import Path

from tests.support.shop_site import ACCOUNT, SHOP

EMAIL, PASSWORD, NAME = ACCOUNT["email"], ACCOUNT["password"], ACCOUNT["name"]
CARD = {"number": "4242424242424242", "cvc": "314", "exp_month": "12", "exp_year": "2030"}
SHIPPING = {"line1": "27 Larkspur Lane", "city": "Portland", "state": "OR", "postal_code": "97205"}
MESSAGE = ("Hello, my order ORD-1001 arrived with a torn sleeve. Could you please call me at (503) 555-0142 "
           "in the afternoon to arrange a replacement? Thank you!")
STEP_MS = 30_000


def tracker_settled(page, v: dict, step: str) -> None:
    """The tracker's calls on this page settled (fetch answered or given up after its retries, pixel loaded)."""
    try:
        page.wait_for_function("() => window.__ajs && window.__ajs.pending === 0", timeout=STEP_MS)
    except Exception as e:  # reported by the tests, the visit goes on
        v["steps"][f"{step}: tracker settled"] = f"no: {type(e).__name__}"
    v["tracker"] += page.evaluate("() => window.__ajs ? window.__ajs.calls : []")


def type_into(page, selector: str, text: str) -> None:
    page.click(selector)
    page.locator(selector).press_sequentially(text)


def browse(page, v: dict, learned: Path | None = None) -> None:
    """The visit: typed and clicked as a user does. `v["steps"]` says how each step went, `v["tracker"]` the
    tracker's own record of its calls; `learned`: the proxy's learned-policies file to wait on after the privacy
    page (None: no guardian proxy in the path, as when recording captures)."""
    steps = v["steps"]
    # 1. the privacy page, and the proxy learns it
    r = page.goto(f"https://{SHOP}/privacy", timeout=STEP_MS)
    steps["privacy page"] = r.status if r else None
    deadline = time.time() + 30
    v["learned"] = []
    while learned is not None and time.time() < deadline:
        if learned.exists():
            v["learned"] = [json.loads(x) for x in learned.read_text().splitlines() if x.strip()]
            if any(x.get("domain") == "shop.example" for x in v["learned"]):
                break
        time.sleep(0.2)

    # 2. sign in: typed, then a click on the button (a top-level form POST navigation, 303 to /account)
    r = page.goto(f"https://{SHOP}/login", timeout=STEP_MS)
    steps["login page"] = r.status if r else None
    type_into(page, "#email", EMAIL)
    type_into(page, "#password", PASSWORD)
    with page.expect_navigation(timeout=STEP_MS):
        page.click("#sign-in")
    page.wait_for_load_state("load")
    steps["after sign-in"] = page.url
    steps["welcome"] = page.locator("#welcome").text_content() if page.locator("#welcome").count() else None
    tracker_settled(page, v, "account")

    # 3. checkout: shipping address and card typed, "Pay" clicked; the page's script does the rest
    r = page.goto(f"https://{SHOP}/checkout", timeout=STEP_MS)
    steps["checkout page"] = r.status if r else None
    for sel, text in (("#ship-name", NAME), ("#ship-email", EMAIL), ("#ship-line1", SHIPPING["line1"]),
                      ("#ship-city", SHIPPING["city"]), ("#ship-state", SHIPPING["state"]),
                      ("#ship-zip", SHIPPING["postal_code"]), ("#card-number", CARD["number"]),
                      ("#card-month", CARD["exp_month"]), ("#card-year", CARD["exp_year"]),
                      ("#card-cvc", CARD["cvc"])):
        type_into(page, sel, text)
    page.click("#pay")
    try:
        page.wait_for_function("() => { const t = document.getElementById('status').textContent;"
                               " return t && t !== 'Paying…'; }", timeout=STEP_MS)
    except Exception as e:
        steps["checkout status wait"] = type(e).__name__
    steps["checkout status"] = page.text_content("#status")

    # 4. contact form, reached by clicking the navigation link; the tracker fires when the e-mail field changes
    with page.expect_navigation(timeout=STEP_MS):
        page.click("nav >> text=Contact")
    steps["contact page"] = page.url
    type_into(page, "#c-name", NAME)
    type_into(page, "#c-email", EMAIL)
    type_into(page, "#c-message", MESSAGE)  # leaving the e-mail field fires its change event
    tracker_settled(page, v, "contact")
    with page.expect_navigation(timeout=STEP_MS):
        page.click("#send")
    page.wait_for_load_state("load")
    steps["after contact"] = page.url
    steps["thanks"] = page.locator("#thanks").text_content() if page.locator("#thanks").count() else None
    time.sleep(0.5)  # the proxy logs the last decisions
