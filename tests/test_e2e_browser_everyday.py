"""Everyday browsing through a real `guardian-proxy run`, in a real headless Chromium (Debian's `chromium`,
driven by Playwright with executable_path; no browser is downloaded).

A local TLS upstream (tests/support/shop_site.py) plays every site by Host header: a shop at
https://www.shop.example (HTTPS, so Chromium sends real Fetch Metadata: Sec-Fetch-*, Origin, Referer), Stripe's
API, and a third-party tracker (cdn.segment.com/analytics.js, hand-written) that reads the e-mail the user
types and sends it to api.segment.io (fetch keepalive + sendBeacon) and to a Facebook pixel. The proxy sends
every connection there (--redirect-upstream, --ssl-insecure); the browser trusts anything
(--ignore-certificate-errors: the proxy's CA is not installed in it).

The user first reads the shop's privacy page (the proxy learns it), then, typing and clicking: signs in (a
top-level form POST), pays on the checkout page (its script posts the card to Stripe with fetch, after a CORS
preflight, then the order with the shipping address to the shop as JSON) and sends a message through the
contact form. What the user meant to send must arrive byte for byte, with the shop's session cookie; the
tracker must never receive the raw e-mail, and blocked tracker calls must not be retried in a storm.
Failure messages carry the proxy's decision-log lines for the requests concerned.
"""

from __future__ import annotations

import base64
import json
import os
import re
from pathlib import Path
from urllib.parse import parse_qs, quote, quote_plus, urlsplit

import pytest

from tests.support.proxy_process import start_proxy
from tests.support.shop_site import ORDER_ID, SHOP, STRIPE_KEY, start_shop
from tests.support.shop_visit import CARD, EMAIL, MESSAGE, NAME, PASSWORD, SHIPPING, browse

pytestmark = pytest.mark.slow
CHROMIUM = os.environ.get("GUARDIAN_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run"]  # as tests/test_dashboard_browser.py
TRACKERS = ("api.segment.io", "www.facebook.com")


# --------------------------------------------------------------------------- the visit (once per module)

@pytest.fixture(scope="module")
def visit(tmp_path_factory):
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} not installed (apt-get install -y chromium; .ci/run installs it)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (Python package) not installed")
    tmp = tmp_path_factory.mktemp("everyday")
    shop = start_shop(tmp)
    px = start_proxy(tmp, shop.port)
    pw = sync_api.sync_playwright().start()
    browser = pw.chromium.launch(executable_path=CHROMIUM, args=[*ARGS, f"--proxy-server=http://127.0.0.1:{px.port}",
                                                                 "--ignore-certificate-errors"])
    ctx = browser.new_context(ignore_https_errors=True, viewport={"width": 1200, "height": 900})
    sent: list = []  # every request the browser made (Playwright Request objects)
    failed: list[str] = []
    errors: list[str] = []
    console: list[str] = []
    ctx.on("request", lambda r: sent.append(r))
    ctx.on("requestfailed", lambda r: failed.append(f"{r.method} {r.url}: {r.failure}"))
    page = ctx.new_page()
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: console.append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else None)
    v = {"shop": shop, "px": px, "page": page, "sent": sent, "failed": failed, "errors": errors, "console": console,
         "steps": {}, "tracker": [], "learned": []}
    try:
        try:
            browse(page, v, px.state_dir / "policies" / "learned.jsonl")
        except Exception as e:  # a step that could not go on: reported by the tests, with what came before
            v["steps"]["aborted"] = f"{type(e).__name__}: {str(e)[:500]}"
        v["headers"] = {id(r): _all_headers(r) for r in sent}  # while the browser is still there
        yield v
    finally:
        ctx.close()
        browser.close()
        pw.stop()
        px.stop()
        shop.close()


def _all_headers(r) -> dict:
    try:
        return r.all_headers()
    except Exception:  # a request that never got that far (blocked before sending, page gone)
        return r.headers


# --------------------------------------------------------------------------- helpers for the assertions

def fmt(d: dict) -> str:
    return (f"{d.get('method')} {d.get('host')}{d.get('path')} → {d.get('action')} "
            f"[recipient={d.get('recipient')} basis={d.get('basis')} purposes={d.get('purposes')} "
            f"categories={d.get('categories')} R={d.get('R')} tier={d.get('tier')} rule={d.get('rule')} "
            f"override={d.get('override')} level={d.get('final_level')}] {d.get('explanation')}")


def decisions(v: dict, host: str | None = None, path: str | None = None) -> list[dict]:
    return [d for d in v["px"].log_lines() if (host is None or d.get("host") == host)
            and (path is None or (d.get("path") or "").split("?")[0] == path)]


def log_for(v: dict, host: str | None = None, path: str | None = None) -> str:
    lines = decisions(v, host, path)
    return "decision log:\n  " + ("\n  ".join(fmt(d) for d in lines) if lines else "(no line)")


def sent_by_browser(v: dict, method: str, url: str) -> list:
    return [r for r in v["sent"] if r.method == method and r.url.split("?")[0] == url]


def form(body: bytes) -> dict:
    return {k: v for k, v in parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True).items()}


def only(hits: list, what: str, v: dict, host: str, path: str):
    assert len(hits) == 1, f"{what}: the upstream received {len(hits)} requests, expected 1\n{log_for(v, host, path)}"
    return hits[0]


def email_forms() -> dict[str, bytes]:
    e = EMAIL.encode()
    out = {"plain": e, "url-encoded": quote(EMAIL, safe="").encode(), "form-encoded": quote_plus(EMAIL).encode(),
           "json-escaped": json.dumps(EMAIL)[1:-1].encode()}
    for name, enc in (("base64", base64.b64encode), ("base64url", base64.urlsafe_b64encode)):
        out[name] = enc(e).rstrip(b"=")
    return out


def raw_email_in(blob: bytes) -> list[str]:
    """Which encodings of the e-mail `blob` contains, also inside base64 runs (any alignment) and %-encoding."""
    low = blob.lower()
    found = [n for n, f in email_forms().items() if (f.lower() in low if not n.startswith("base64") else f in blob)]
    for run in re.findall(rb"[A-Za-z0-9+/_-]{16,}={0,2}", blob):
        for shift in range(4):
            chunk = run[shift:]
            chunk = chunk[: len(chunk) - len(chunk) % 4]
            try:
                dec = base64.b64decode(chunk.replace(b"-", b"+").replace(b"_", b"/"))
            except ValueError:
                continue
            if EMAIL.encode() in dec:
                found.append("base64 inside a longer value")
    return sorted(set(found))


# --------------------------------------------------------------------------- the tests

def test_the_visit_happened_in_the_browser(visit):
    """The harness: pages loaded from the upstream, the typed forms and clicks produced the browser's requests,
    Chromium sent real Fetch Metadata, and the tracker tried to send what it read."""
    v, shop, steps = visit, visit["shop"], visit["steps"]
    assert "aborted" not in steps, f"{steps}\npage errors: {v['errors']}\n{log_for(v)}"
    assert steps.get("privacy page") == 200 and steps.get("login page") == 200 and steps.get("checkout page") == 200, steps
    for host, path in ((SHOP, "/privacy"), (SHOP, "/login"), (SHOP, "/checkout"), (SHOP, "/static/checkout.js"),
                       (SHOP, "/contact"), ("cdn.segment.com", "/analytics.js")):
        assert shop.hits(host, path, "GET"), f"GET {host}{path} never reached the upstream\n{log_for(v, host, path)}"
    assert steps.get("contact page") == f"https://{SHOP}/contact", steps
    for method, url in (("POST", f"https://{SHOP}/login"), ("POST", "https://api.stripe.com/v1/payment_methods"),
                        ("POST", f"https://{SHOP}/contact"), ("POST", "https://api.segment.io/v1/identify"),
                        ("POST", "https://api.segment.io/v1/t"), ("GET", "https://www.facebook.com/tr")):
        assert sent_by_browser(v, method, url), f"the browser never sent {method} {url}; steps: {steps}"
    login = sent_by_browser(v, "POST", f"https://{SHOP}/login")[0]
    h = v["headers"][id(login)]
    meta = {k: h.get(k) for k in ("sec-fetch-site", "sec-fetch-mode", "sec-fetch-dest", "sec-fetch-user", "origin",
                                  "referer")}
    assert meta == {"sec-fetch-site": "same-origin", "sec-fetch-mode": "navigate", "sec-fetch-dest": "document",
                    "sec-fetch-user": "?1", "origin": f"https://{SHOP}", "referer": f"https://{SHOP}/login"}, meta
    # the card's fetch: checked where Chromium really sent it (a preflight the proxy refused stops it first)
    for hit in shop.hits("api.stripe.com", "/v1/payment_methods"):
        got = (hit.method, hit.headers.get("sec-fetch-site"), hit.headers.get("sec-fetch-mode"), hit.headers.get("origin"))
        assert got[1:] == ("cross-site", "cors", f"https://{SHOP}"), got
    assert v["tracker"], "the tracker's calls never settled on the page"


def test_no_page_error(visit):
    assert not visit["errors"], f"page errors: {visit['errors']}\nconsole: {visit['console']}\n" \
                                f"failed requests: {visit['failed']}"
    unsettled = {k: s for k, s in visit["steps"].items() if "tracker settled" in k or "status wait" in k}
    assert not unsettled, f"{unsettled}; console: {visit['console']}; failed requests: {visit['failed']}"


def test_privacy_page_was_learned(visit):
    rec = [x for x in visit["learned"] if x.get("domain") == "shop.example"]
    policies = visit["px"].state_dir / "policies"
    assert rec, (f"{policies}/learned.jsonl has no line for shop.example after 30 s: {visit['learned']}\n"
                 f"proxy output:\n{visit['px'].output.read_text()[-3000:]}\n{log_for(visit, SHOP, '/privacy')}")
    assert rec[-1]["stored"] and rec[-1]["statements"] >= 5, rec
    assert rec[-1]["page"] == f"https://{SHOP}/privacy", rec
    index = json.loads((policies / "index.json").read_text())
    assert "shop.example" in json.dumps(index), index


def test_sign_in_arrives_unchanged(visit):
    v, shop = visit, visit["shop"]
    hit = only(shop.hits(SHOP, "/login", "POST"), "sign-in POST", v, SHOP, "/login")
    sent = sent_by_browser(v, "POST", f"https://{SHOP}/login")[0]
    assert form(hit.body) == {"email": [EMAIL], "password": [PASSWORD]}, \
        f"sign-in form changed: {hit.body!r}\n{log_for(v, SHOP, '/login')}"
    assert hit.body == sent.post_data_buffer, f"{hit.body!r} != {sent.post_data_buffer!r}\n{log_for(v, SHOP, '/login')}"
    assert hit.headers.get("sec-fetch-mode") == "navigate" and hit.headers.get("origin") == f"https://{SHOP}", \
        hit.headers
    assert v["steps"].get("after sign-in") == f"https://{SHOP}/account" and v["steps"].get("welcome"), \
        f"{v['steps']}\n{log_for(v, SHOP)}"


def test_payment_to_stripe_arrives_unchanged(visit):
    v, shop = visit, visit["shop"]
    host, path = "api.stripe.com", "/v1/payment_methods"
    assert shop.hits(host, path, "OPTIONS"), f"no CORS preflight reached Stripe\n{log_for(v, host, path)}"
    hit = only(shop.hits(host, path, "POST"), "Stripe POST", v, host, path)
    sent = sent_by_browser(v, "POST", f"https://{host}{path}")[0]
    expected = {"type": ["card"], "card[number]": [CARD["number"]], "card[cvc]": [CARD["cvc"]],
                "card[exp_month]": [CARD["exp_month"]], "card[exp_year]": [CARD["exp_year"]],
                "billing_details[email]": [EMAIL], "billing_details[name]": [NAME]}
    assert form(hit.body) == expected, f"Stripe body changed: {hit.body!r}\n{log_for(v, host, path)}"
    assert hit.body == sent.post_data_buffer, f"{hit.body!r} != {sent.post_data_buffer!r}\n{log_for(v, host, path)}"
    assert hit.headers.get("authorization") == f"Bearer {STRIPE_KEY}", f"{hit.headers}\n{log_for(v, host, path)}"


def test_order_arrives_unchanged(visit):
    v, shop = visit, visit["shop"]
    status = v["steps"].get("checkout status")
    hits = shop.hits(SHOP, "/api/orders", "POST")
    assert hits, (f"the order never reached the shop (checkout says {status!r})\n"
                  f"{log_for(v, 'api.stripe.com')}\n{log_for(v, SHOP, '/api/orders')}")
    hit = only(hits, "order POST", v, SHOP, "/api/orders")
    sent = sent_by_browser(v, "POST", f"https://{SHOP}/api/orders")[0]
    expected = {"items": [{"sku": "SHIRT-LINEN-BLUE-M", "qty": 1}], "payment_method": "pm_1ShopExampleVisa4242",
                "email": EMAIL, "shipping": {"name": NAME, "address": {**SHIPPING, "country": "US"}}}
    assert json.loads(hit.body) == expected, f"order changed: {hit.body!r}\n{log_for(v, SHOP, '/api/orders')}"
    assert hit.body == sent.post_data_buffer, f"{hit.body!r} != {sent.post_data_buffer!r}"
    assert status == f"Order {ORDER_ID} confirmed", f"checkout says {status!r}\n{log_for(v, SHOP, '/api/orders')}"


def test_contact_message_arrives_unchanged(visit):
    v, shop = visit, visit["shop"]
    hit = only(shop.hits(SHOP, "/contact", "POST"), "contact POST", v, SHOP, "/contact")
    sent = sent_by_browser(v, "POST", f"https://{SHOP}/contact")[0]
    assert form(hit.body) == {"name": [NAME], "email": [EMAIL], "message": [MESSAGE]}, \
        f"contact form changed: {hit.body!r}\n{log_for(v, SHOP, '/contact')}"
    assert hit.body == sent.post_data_buffer, f"{hit.body!r} != {sent.post_data_buffer!r}"
    assert v["steps"].get("after contact") == f"https://{SHOP}/contact/thanks" and v["steps"].get("thanks"), v["steps"]


def test_shop_session_cookie_kept(visit):
    v, shop = visit, visit["shop"]
    assert shop.session, f"the shop never accepted the sign-in\n{log_for(v, SHOP, '/login')}"
    login = next(i for i, h in enumerate(shop.received) if h.host == SHOP and h.method == "POST" and h.path == "/login")
    later = [h for h in shop.received[login + 1:] if h.host == SHOP]
    assert len(later) >= 6, [f"{h.method} {h.path}" for h in later]
    bad = []
    for h in later:
        cookies = [c.strip() for c in h.headers.get("cookie", "").split(";") if c.strip()]
        if cookies.count(f"shop_session={shop.session}") != 1:
            bad.append(f"{h.method} {h.path} cookie={h.headers.get('cookie')!r}")
    assert not bad, (f"shop_session={shop.session} did not arrive unchanged on:\n  " + "\n  ".join(bad)
                     + f"\n{log_for(v, SHOP)}")


def test_trackers_never_receive_the_raw_email(visit):
    v, shop = visit, visit["shop"]
    leaks = []
    for h in (h for h in shop.received if h.host in TRACKERS):
        blob = h.path.encode() + b"\n" + "\n".join(f"{k}: {x}" for k, x in h.header_list).encode() + b"\n" + h.body
        found = raw_email_in(blob)
        if found:
            leaks.append(f"{h.method} {h.host}{h.path[:160]} ({', '.join(found)}): body {h.body[:200]!r}")
    assert not leaks, ("the raw e-mail reached a tracker:\n  " + "\n  ".join(leaks) + "\n"
                       + "\n".join(log_for(v, t) for t in TRACKERS))


def _call_id(r) -> str | None:
    if r.method == "GET":
        return (parse_qs(urlsplit(r.url).query).get("eid") or [None])[0]
    try:
        return json.loads(r.post_data_buffer or b"{}").get("messageId")
    except ValueError:
        return None


def test_blocked_tracker_calls_are_not_retried_in_a_storm(visit):
    v, shop = visit, visit["shop"]
    endpoints = (("api.segment.io", "/v1/identify", "POST"), ("api.segment.io", "/v1/t", "POST"),
                 ("www.facebook.com", "/tr", "GET"))
    report = []
    for host, path, method in endpoints:
        tries = [r for r in sent_by_browser(v, method, f"https://{host}{path}")]
        calls: dict[str | None, int] = {}
        for r in tries:
            calls[_call_id(r)] = calls.get(_call_id(r), 0) + 1
        n_calls = len(calls)
        assert n_calls >= 2, f"{method} {host}{path}: the tracker made {n_calls} calls, expected 2 (sign-in, contact)"
        in_log = [d for d in decisions(v, host, path) if d.get("method") == method]
        at_upstream = shop.hits(host, path, method)
        worst = max(calls.values())
        if worst > 2 or len(in_log) > 2 * n_calls or len(at_upstream) > 2 * n_calls:
            report.append(f"{method} {host}{path}: {n_calls} calls, browser attempts per call {calls}, "
                          f"{len(in_log)} decision-log lines, {len(at_upstream)} at the upstream\n"
                          f"{log_for(v, host, path)}")
    assert not report, "retries:\n" + "\n".join(report) + f"\ntracker results: {v['tracker']}"
