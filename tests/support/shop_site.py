"""A small shop on the web for the everyday browser test (tests/test_e2e_browser_everyday.py).

One local TLS server answers for every host the browser reaches through `guardian-proxy run
--redirect-upstream`, routing by the Host header:

- `www.shop.example`: home, privacy policy, sign-in form (sets `shop_session`), account, checkout (its script
  pays through Stripe with fetch, then posts the order as JSON), contact form, thank-you pages;
- `api.stripe.com`: `/v1/payment_methods`, with a CORS preflight like Stripe's API answers it;
- `cdn.segment.com`: `/analytics.js`, a small hand-written tracker (not the real SDK) that, after a sign-in
  and when the e-mail field of the contact form changes, reads the e-mail the user typed and sends it to
  `api.segment.io` (fetch keepalive + sendBeacon) and to a Facebook pixel `www.facebook.com/tr`;
- `api.segment.io`, `www.facebook.com`: the trackers' collection endpoints.

Every request is recorded (`Shop.received`: method, host, path, headers, body) before it is answered.
Every value is invented; the card is Stripe's published test number.
"""

from __future__ import annotations

import html
import json
import secrets
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from tests.support.upstream import Served, serve

SHOP = "www.shop.example"
HOSTS = [SHOP, "api.stripe.com", "cdn.segment.com", "api.segment.io", "www.facebook.com"]
STRIPE_KEY = "pk_test_51ShopExampleTestKey00000000"
PAYMENT_METHOD = "pm_1ShopExampleVisa4242"
ORDER_ID = "ORD-1001"

# --------------------------------------------------------------------------- the user's account at the shop
ACCOUNT = {"email": "maria.lindqvist@example.com", "password": "Tr0ub4dor&3-horse", "name": "Maria Lindqvist"}

POLICY_HTML = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Privacy Policy | Shop Example</title>
<link rel="icon" href="data:,">
<script src="https://cdn.segment.com/analytics.js"></script></head>
<body>
<header><nav><a href="/">Shop Example</a> · <a href="/login">Sign in</a></nav></header>
<main>
<h1>Privacy Policy</h1>
<p>Last updated: 3 March 2025. This privacy policy explains how Shop Example Ltd ("we", "us") collects, uses
and shares personal information when you shop at www.shop.example.</p>
<h2>Information we collect</h2>
<p>When you create an account, sign in or place an order, we collect your name, your e-mail address, your
password, your shipping address and your payment card details (card number, expiry date and security code).
When you contact us, we collect your name, e-mail address, phone number and the content of your message.</p>
<h2>How we use your information</h2>
<ul>
<li>We use your name, e-mail address and shipping address to process and deliver your orders and to send you
order confirmations.</li>
<li>We use your e-mail address and password to create your account and let you sign in.</li>
<li>We use your contact details and messages to answer your questions and provide customer support.</li>
</ul>
<h2>Sharing with service providers</h2>
<p>We share your payment card details, name and e-mail address with our payment processor, Stripe, for the
purpose of processing your payment. Card details are sent directly to Stripe and are not stored on our
servers.</p>
<p>We share your name and shipping address with our delivery partners to deliver your order.</p>
<h2>Analytics</h2>
<p>We use analytics services and cookies to understand how visitors use our website and to improve it. These
services collect information about your device, the pages you visit and how you interact with them.</p>
<h2>Cookies</h2>
<p>We use a session cookie to keep you signed in. You can disable cookies in your browser settings.</p>
<h2>Your rights</h2>
<p>You may request access to, correction of or deletion of your personal data by writing to
privacy@shop.example. We keep order records for seven years as required by law.</p>
</main>
<footer>© 2025 Shop Example Ltd</footer>
</body></html>
"""

_HEAD = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title} | Shop Example</title>
<link rel="icon" href="data:,">
<script src="https://cdn.segment.com/analytics.js"></script></head>
<body><header><nav><a href="/">Shop Example</a> · <a href="/checkout">Cart</a> · <a href="/contact">Contact</a>
· <a href="/privacy">Privacy</a></nav></header><main>
"""
_TAIL = "</main></body></html>\n"


def page(title: str, body: str) -> bytes:
    return (_HEAD.format(title=html.escape(title)) + body + _TAIL).encode()


LOGIN = page("Sign in", """<h1>Sign in</h1>
<form id="login" method="post" action="/login">
  <label>E-mail <input id="email" name="email" type="email" autocomplete="username" required></label>
  <label>Password <input id="password" name="password" type="password" autocomplete="current-password" required>
  </label>
  <button id="sign-in" type="submit">Sign in</button>
</form>""")

CHECKOUT = page("Checkout", """<h1>Checkout</h1>
<p>1 × Linen shirt, blue, M — $49.00</p>
<section id="shipping"><h2>Shipping address</h2>
  <label>Full name <input id="ship-name" autocomplete="name"></label>
  <label>E-mail <input id="ship-email" type="email" autocomplete="email"></label>
  <label>Address <input id="ship-line1" autocomplete="address-line1"></label>
  <label>City <input id="ship-city" autocomplete="address-level2"></label>
  <label>State <input id="ship-state" autocomplete="address-level1"></label>
  <label>ZIP <input id="ship-zip" autocomplete="postal-code"></label>
</section>
<section id="card"><h2>Card</h2>
  <label>Card number <input id="card-number" inputmode="numeric" autocomplete="cc-number"></label>
  <label>Month <input id="card-month" autocomplete="cc-exp-month"></label>
  <label>Year <input id="card-year" autocomplete="cc-exp-year"></label>
  <label>CVC <input id="card-cvc" autocomplete="cc-csc"></label>
</section>
<button id="pay" type="button">Pay $49.00</button>
<p id="status" role="status"></p>
<script src="/static/checkout.js"></script>""")

CHECKOUT_JS = ("""// the shop's checkout: the card goes to Stripe, the order (with the payment method id) to the shop
(function () {
  var v = function (id) { return document.getElementById(id).value; };
  var status = document.getElementById('status');
  document.getElementById('pay').addEventListener('click', async function () {
    status.textContent = 'Paying…';
    try {
      var card = new URLSearchParams();
      card.append('type', 'card');
      card.append('card[number]', v('card-number'));
      card.append('card[cvc]', v('card-cvc'));
      card.append('card[exp_month]', v('card-month'));
      card.append('card[exp_year]', v('card-year'));
      card.append('billing_details[email]', v('ship-email'));
      card.append('billing_details[name]', v('ship-name'));
      var r = await fetch('https://api.stripe.com/v1/payment_methods', {method: 'POST', body: card,
        headers: {'Authorization': 'Bearer __STRIPE_KEY__', 'Content-Type': 'application/x-www-form-urlencoded'}});
      var pm = await r.json();
      if (!r.ok || !pm.id) { status.textContent = 'Payment failed: ' + r.status + ' ' + JSON.stringify(pm); return; }
      var order = {items: [{sku: 'SHIRT-LINEN-BLUE-M', qty: 1}], payment_method: pm.id, email: v('ship-email'),
        shipping: {name: v('ship-name'), address: {line1: v('ship-line1'), city: v('ship-city'),
          state: v('ship-state'), postal_code: v('ship-zip'), country: 'US'}}};
      var o = await fetch('/api/orders', {method: 'POST', headers: {'Content-Type': 'application/json'},
        body: JSON.stringify(order)});
      var res = await o.json();
      status.textContent = o.ok ? 'Order ' + res.id + ' confirmed' : 'Order failed: ' + o.status + ' ' + JSON.stringify(res);
    } catch (e) {
      status.textContent = 'Payment failed: ' + e;
    }
  });
})();
""".replace("__STRIPE_KEY__", STRIPE_KEY)).encode()

CONTACT = page("Contact us", """<h1>Contact us</h1>
<form id="contact" method="post" action="/contact">
  <label>Name <input id="c-name" name="name" autocomplete="name"></label>
  <label>E-mail <input id="c-email" name="email" type="email" autocomplete="email"></label>
  <label>Message <textarea id="c-message" name="message" rows="5"></textarea></label>
  <button id="send" type="submit">Send</button>
</form>""")

# A hand-written tracker in the manner of analytics.js + Facebook's "automatic advanced matching": it reads what
# the user types into e-mail fields. Network errors, 429 and 5xx are retried (at most 3 times, with backoff),
# as analytics-next does; 2xx/4xx are final. `window.__ajs` counts calls not yet settled (for the test).
TRACKER_JS = b"""(function () {
  var WRITE_KEY = 'wk_shopexample_7Qh2';
  var st = window.__ajs = {pending: 0, calls: []};
  function mid() { return 'ajs-' + Math.random().toString(36).slice(2, 10) + Date.now().toString(36); }
  function traitsFromForm(form) {
    var e = form.querySelector('input[type=email]'), n = form.querySelector('input[autocomplete=name]');
    return {email: e ? e.value : '', name: n ? n.value : ''};
  }
  function send(url, body, id, attempt) {
    fetch(url, {method: 'POST', keepalive: true, body: body}).then(function (r) {
      if ((r.status >= 500 || r.status === 429) && attempt < 3) { retry(url, body, id, attempt); return; }
      settle(id, 'http ' + r.status);
    }).catch(function (err) {
      if (attempt < 3) { retry(url, body, id, attempt); return; }
      settle(id, 'error ' + err);
    });
  }
  function retry(url, body, id, attempt) {
    setTimeout(function () { send(url, body, id, attempt + 1); }, 150 * Math.pow(2, attempt));
  }
  function settle(id, how) {
    st.calls.push({id: id, result: how});
    st.pending--;
  }
  function identify(event, traits) {
    var email = traits.email, name = traits.name;
    if (!email) return;
    var id = mid();
    st.pending += 2;
    send('https://api.segment.io/v1/identify', JSON.stringify({userId: email, traits: {email: email, name: name},
      messageId: id, writeKey: WRITE_KEY, context: {page: {url: location.href}}}), id, 0);
    var bid = mid();
    navigator.sendBeacon('https://api.segment.io/v1/t', JSON.stringify({type: 'track', event: event,
      userId: email, properties: {email: email}, messageId: bid, writeKey: WRITE_KEY}));
    st.calls.push({id: bid, result: 'beacon'});
    var pid = mid();
    var img = new Image();
    img.onload = img.onerror = function (ev) { settle(pid, 'pixel ' + ev.type); };
    img.src = 'https://www.facebook.com/tr?id=123&ev=' + (event === 'Signed In' ? 'CompleteRegistration' : 'Lead') +
      '&eid=' + pid + '&ud[em]=' + encodeURIComponent(email) + '&noscript=1';
  }
  // a sign-in form (one with a password field): remember who signs in, identify on the next page
  document.addEventListener('submit', function (ev) {
    if (ev.target.querySelector('input[type=password]')) {
      sessionStorage.setItem('ajs_pending_identify', JSON.stringify(traitsFromForm(ev.target)));
    }
  }, true);
  // a lead form: identify as soon as the e-mail field is filled in
  document.addEventListener('change', function (ev) {
    var t = ev.target;
    if (t.type === 'email' && t.form && !t.form.querySelector('input[type=password]')) {
      identify('Lead', traitsFromForm(t.form));
    }
  }, true);
  function onLoad() {
    var pending = sessionStorage.getItem('ajs_pending_identify');
    if (pending) {
      sessionStorage.removeItem('ajs_pending_identify');
      identify('Signed In', JSON.parse(pending));
    }
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', onLoad); else onLoad();
})();
"""


@dataclass
class Hit:
    method: str
    host: str
    path: str
    headers: dict  # lower-case names; repeated headers joined with ", " (cookies with "; ")
    body: bytes
    header_list: list = field(default_factory=list)  # (name, value) as received


@dataclass
class Shop(Served):
    received: list[Hit] = field(default_factory=list)
    session: str = ""  # the shop_session value set by the last successful sign-in

    def hits(self, host: str, path: str | None = None, method: str | None = None) -> list[Hit]:
        return [h for h in self.received if h.host == host and (path is None or h.path.split("?")[0] == path)
                and (method is None or h.method == method)]


def _handler(shop_ref: list, lock: threading.Lock):
    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):  # quiet
            pass

        # ------------------------------------------------------------------ answers
        def answer(self, status: int, body: bytes = b"", ctype: str | None = None, headers: dict | None = None):
            self.send_response(status)
            if ctype:
                self.send_header("content-type", ctype)
            self.send_header("cache-control", "no-store")
            for k, v in (headers or {}).items():
                for one in v if isinstance(v, list) else [v]:
                    self.send_header(k, one)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def html(self, body: bytes, status: int = 200, headers: dict | None = None):
            self.answer(status, body, "text/html; charset=utf-8", headers)

        def json(self, obj, status: int = 200, headers: dict | None = None):
            self.answer(status, json.dumps(obj).encode(), "application/json", headers)

        def redirect(self, to: str, headers: dict | None = None):
            self.answer(303, b"", None, {"location": to, **(headers or {})})

        # ------------------------------------------------------------------ routing
        def _serve(self):
            n = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(n) if n else b""
            host = (self.headers.get("host") or "").split(":")[0].lower()
            headers: dict[str, str] = {}
            for k, v in self.headers.items():
                k = k.lower()
                headers[k] = f"{headers[k]}{'; ' if k == 'cookie' else ', '}{v}" if k in headers else v
            shop: Shop = shop_ref[0]
            with lock:
                shop.received.append(Hit(self.command, host, self.path, headers, body, list(self.headers.items())))
            path = urlsplit(self.path).path
            route = {SHOP: self.shop, "api.stripe.com": self.stripe, "cdn.segment.com": self.cdn,
                     "api.segment.io": self.segment, "www.facebook.com": self.facebook}.get(host)
            if route is None:
                self.answer(404, b"unknown host", "text/plain")
                return
            route(shop, path, headers, body)

        do_GET = do_POST = do_OPTIONS = do_HEAD = _serve

        def shop(self, shop: Shop, path: str, headers: dict, body: bytes):
            cookies = dict(c.strip().partition("=")[::2] for c in headers.get("cookie", "").split(";") if "=" in c)
            signed_in = bool(shop.session) and cookies.get("shop_session") == shop.session
            if self.command == "GET" and path in ("/", "/index.html"):
                self.html(page("Home", '<h1>Shop Example</h1><p>Linen shirts, made to last.</p>'
                                       '<p><a href="/login">Sign in</a></p>'))
            elif self.command == "GET" and path == "/privacy":
                self.html(POLICY_HTML.encode())
            elif self.command == "GET" and path == "/login":
                self.html(LOGIN)
            elif self.command == "POST" and path == "/login":
                form = {k: v[0] for k, v in parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True).items()}
                if form.get("email") == ACCOUNT["email"] and form.get("password") == ACCOUNT["password"]:
                    shop.session = secrets.token_urlsafe(24)
                    self.redirect("/account", {"set-cookie": f"shop_session={shop.session}; Path=/; Secure; HttpOnly;"
                                                             " SameSite=Lax"})
                else:
                    self.html(page("Sign in", "<h1>Sign in</h1><p id='error'>Wrong e-mail or password.</p>"), 401)
            elif self.command == "GET" and path == "/account":
                if signed_in:
                    self.html(page("Your account", f"<h1 id='welcome'>Welcome back, {html.escape(ACCOUNT['name'])}"
                                                   "</h1><p><a href='/checkout'>Go to your cart</a></p>"))
                else:
                    self.redirect("/login")
            elif self.command == "GET" and path == "/checkout":
                self.html(CHECKOUT)
            elif self.command == "GET" and path == "/static/checkout.js":
                self.answer(200, CHECKOUT_JS, "text/javascript; charset=utf-8")
            elif self.command == "POST" and path == "/api/orders":
                try:
                    order = json.loads(body)
                except ValueError:
                    order = None
                if not signed_in:
                    self.json({"error": "not signed in"}, 401)
                elif not isinstance(order, dict) or order.get("payment_method") != PAYMENT_METHOD:
                    self.json({"error": "invalid order"}, 400)
                else:
                    self.json({"id": ORDER_ID, "status": "confirmed"}, 201)
            elif self.command == "GET" and path == "/contact":
                self.html(CONTACT)
            elif self.command == "POST" and path == "/contact":
                self.redirect("/contact/thanks")
            elif self.command == "GET" and path == "/contact/thanks":
                self.html(page("Thank you", "<h1 id='thanks'>Thank you, we will get back to you.</h1>"))
            else:
                self.answer(404, b"not found", "text/plain")

        def stripe(self, shop: Shop, path: str, headers: dict, body: bytes):
            origin = headers.get("origin", "")
            cors = {"access-control-allow-origin": origin or "*", "vary": "Origin"}
            if self.command == "OPTIONS":
                self.answer(204, b"", None, {**cors, "access-control-allow-methods": "GET, POST, DELETE",
                                             "access-control-allow-headers": "authorization, content-type, "
                                                                             "stripe-version, idempotency-key",
                                             "access-control-max-age": "300"})
            elif self.command == "POST" and path == "/v1/payment_methods":
                form = {k: v[0] for k, v in parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True).items()}
                number = form.get("card[number]", "")
                if headers.get("authorization") != f"Bearer {STRIPE_KEY}":
                    self.json({"error": {"type": "invalid_request_error", "message": "Invalid API Key"}}, 401, cors)
                elif number != "4242424242424242":
                    self.json({"error": {"type": "card_error", "code": "incorrect_number"}}, 402, cors)
                else:
                    self.json({"id": PAYMENT_METHOD, "object": "payment_method", "type": "card",
                               "card": {"brand": "visa", "last4": number[-4:]}}, 200, cors)
            else:
                self.json({"error": {"type": "invalid_request_error"}}, 404, cors)

        def cdn(self, shop: Shop, path: str, headers: dict, body: bytes):
            if path == "/analytics.js":
                self.answer(200, TRACKER_JS, "text/javascript; charset=utf-8",
                            {"access-control-allow-origin": "*"})
            else:
                self.answer(404, b"", "text/plain")

        def segment(self, shop: Shop, path: str, headers: dict, body: bytes):
            cors = {"access-control-allow-origin": headers.get("origin") or "*",
                    "access-control-allow-credentials": "true", "vary": "Origin"}
            if self.command == "OPTIONS":
                self.answer(204, b"", None, {**cors, "access-control-allow-methods": "POST",
                                             "access-control-allow-headers": "content-type"})
            else:
                self.json({"success": True}, 200, cors)

        def facebook(self, shop: Shop, path: str, headers: dict, body: bytes):
            gif = bytes.fromhex("47494638396101000100800000000000ffffff21f90401000000002c00000000010001000002024401003b")
            self.answer(200, gif, "image/gif")

    return H


def start_shop(tls_dir: Path) -> Shop:
    ref: list = []
    httpd = serve(_handler(ref, threading.Lock()), tls_dir, HOSTS)
    shop = Shop(httpd)
    ref.append(shop)
    return shop
