"""The 403 block page's actions: a link to the decision on the dashboard and three buttons — "Allow once",
"Allow this site for 1 hour", "Always allow this site" — that post to the dashboard (another origin).

Proof, not a bare cross-origin POST: the page carries a grant, `<payload>.<mac>`, where the payload names the
decision, the site (its registrable domain) and the blocked URL, with the time it was made, and the mac is an
HMAC-SHA256 keyed from the dashboard's token (which never appears in the page). The dashboard accepts a POST to
/block/allow only with a grant it made, at most GRANT_TTL_S old, once per decision; the choice is one of the
three buttons (once, 1h, forever), the rule it adds is "allow <site>" for that term, and the answer is a 303 back
to the blocked URL, so the browser asks for it again. The Host must still be the dashboard's loopback address
(no DNS rebinding); an Origin, where sent, must be "null" (the page is sandboxed), the blocked site's or the
dashboard's own.

The grant is only put into a page the browser attests is a top-level navigation (Sec-Fetch-Mode: navigate,
Sec-Fetch-Dest: document). The page is served with `Content-Security-Policy: sandbox allow-forms …;
frame-ancestors 'none'`: its origin is opaque, so no script of the blocked site (an opener, a same-origin tab)
can read the grant out of it, and it cannot be framed to trick a click. A client that is not a browser gets the
link and the command line to use instead. With the dashboard off there is neither link nor buttons.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import html
import json
import logging
import threading
import time
from urllib.parse import parse_qs, quote, urlsplit

from ..logmask import mask

GRANT_TTL_S = 15 * 60
#: the buttons: form value → (label, override term)
CHOICES = {"once": ("Allow once", "once"), "1h": ("Allow this site for 1 hour", "1h"),
           "forever": ("Always allow this site", None)}
MAX_URL = 4096
PAGE_CSP = ("sandbox allow-forms allow-popups allow-popups-to-escape-sandbox; "
            "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'")


def _b64(b: bytes) -> str:
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


def _unb64(s: str) -> bytes:
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


class Grants:
    """Grants for one dashboard token: made in the proxy's block page, checked (and used up) by the dashboard."""

    def __init__(self, token: str):
        self._key = hmac.new(token.encode(), b"guardian-proxy block page grant v1", hashlib.sha256).digest()
        self._used: dict[str, float] = {}  # decision id → when its grant was used
        self._lock = threading.Lock()

    def _mac(self, payload: str) -> str:
        return _b64(hmac.new(self._key, payload.encode(), hashlib.sha256).digest()[:20])

    def issue(self, decision_id: str, domain: str, url: str, at: float | None = None) -> str:
        body = {"d": decision_id, "s": domain, "u": url if len(url) <= MAX_URL else "", "t": int(at or time.time())}
        payload = _b64(json.dumps(body, separators=(",", ":")).encode())
        return f"{payload}.{self._mac(payload)}"

    def check(self, grant: str, at: float | None = None) -> dict:
        """The grant's payload {d, s, u, t}; ValueError when it is not one of ours or too old."""
        payload, _, mac = (grant or "").strip().partition(".")
        if not payload or not hmac.compare_digest(mac.encode(), self._mac(payload).encode()):
            raise ValueError("this button's proof is not valid (made by another dashboard, or altered)")
        body = json.loads(_unb64(payload))
        age = (at or time.time()) - int(body.get("t", 0))
        if not 0 <= age <= GRANT_TTL_S + 5:
            raise ValueError("this block page is too old: reload the page to get fresh buttons")
        return body

    def use(self, grant: str, at: float | None = None) -> dict:
        """check(), and at most once per decision (a second click, or a replay, is refused)."""
        body = self.check(grant, at)
        now = at or time.time()
        with self._lock:
            for k in [k for k, t in self._used.items() if now - t > GRANT_TTL_S + 60]:
                del self._used[k]
            if body["d"] in self._used:
                raise ValueError("this block page's buttons were already used")
            self._used[body["d"]] = now
        return body


# --------------------------------------------------------------------------- the page (made in the proxy)


def wants_buttons(headers) -> bool:
    """A top-level navigation, as the browser attests it (a script cannot set these headers)."""
    return ((headers.get("sec-fetch-mode") or "").lower() == "navigate"
            and (headers.get("sec-fetch-dest") or "document").lower() == "document")


def page(decision, url: str, headers, dashboard=None) -> tuple[bytes, dict[str, str]]:
    """The 403 page of a blocked navigation: what was stopped and why, and — with a running dashboard — the link
    to the decision and the three buttons. Returns (body, extra response headers)."""
    from .wording import of_decision

    host = html.escape(decision.six.host)
    reason = html.escape(decision.explanation or "blocked by policy")
    words, numbers = of_decision(decision)
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>Blocked by guardian-proxy</title>"
        "<style>body{font-family:sans-serif;max-width:40em;margin:3em auto}form{margin:1.5em 0}"
        "button{font-size:1em;margin:0 .5em .5em 0;padding:.4em .9em}.n{color:#666;font-size:.9em}</style></head>"
        "<body><h1>Blocked by guardian-proxy</h1>",
        f"<p id='guardian-reason'>{html.escape(mask(words))}</p>",
        f"<p>This request to <b>{host}</b> was stopped before it left your machine.</p>",
        f"<p class='n'>{reason}</p>",
        *([f"<p class='n' id='guardian-numbers'>{html.escape(numbers)}</p>"] if numbers else []),
        f"<p><small>Decision id: <code>{html.escape(decision.id)}</code></small></p>",
    ]
    site = decision.six.domain or decision.six.host
    if dashboard is not None and getattr(dashboard, "running", False):
        grants = grants_of(dashboard)
        grant = html.escape(grants.issue(decision.id, site, url), quote=True)
        base = html.escape(dashboard.base_url, quote=True)
        parts.append(f"<p><a id='guardian-decision' href='{base}/block/view?grant={grant}' target='_blank' "
                     f"rel='noopener noreferrer'>See this decision on the dashboard</a></p>")
        if wants_buttons(headers):
            parts.append(f"<form method='post' action='{base}/block/allow'>"
                         f"<input type='hidden' name='grant' value='{grant}'>")
            parts += [f"<button type='submit' name='for' value='{k}' id='guardian-allow-{k}'>"
                      f"{html.escape(label)} ({html.escape(site)})</button>" for k, (label, _) in CHOICES.items()]
            parts.append("</form>")
    parts.append(f"<p><small>From a terminal: <code>guardian-proxy allow {html.escape(site)} --once</code> "
                 f"(or <code>--for 1h</code>, or no option for always).</small></p></body></html>")
    return "".join(parts).encode(), {"content-security-policy": PAGE_CSP, "x-frame-options": "DENY",
                                     "referrer-policy": "no-referrer"}


_GRANTS_LOCK = threading.Lock()


def grants_of(dashboard) -> Grants:
    """The dashboard's Grants (made once per token, kept on the dashboard's override store)."""
    holder = dashboard.overrides
    token = dashboard.guard.token
    with _GRANTS_LOCK:
        g = getattr(holder, "_grants", None)
        if g is None or g[0] != token:
            g = (token, Grants(token))
            holder._grants = g
    return g[1]


# --------------------------------------------------------------------------- the dashboard's side


def _origin(url: str) -> str:
    s = urlsplit(url)
    return f"{s.scheme}://{s.netloc}".lower()


def _message(code: int, title: str, text: str) -> tuple[int, bytes, dict]:
    body = (f"<!doctype html><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<body style='font-family:sans-serif;max-width:40em;margin:3em auto'><h1>{html.escape(title)}</h1>"
            f"<p>{html.escape(text)}</p></body>").encode()
    return code, body, {"Content-Type": "text/html; charset=utf-8"}


def allow_post(dashboard, headers, body: bytes) -> tuple[int, bytes, dict]:
    """POST /block/allow (form: grant, for): (status, body, headers). 303 back to the blocked URL when done."""
    g = dashboard.guard
    if (headers.get("Host") or "").lower() not in g.allowed_hosts:
        return _message(403, "Refused", "unexpected Host")
    if "application/x-www-form-urlencoded" not in (headers.get("Content-Type") or ""):
        return _message(415, "Refused", "send the block page's form")
    form = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
    choice = (form.get("for") or [""])[0]
    if choice not in CHOICES:
        return _message(400, "Refused", f"unknown choice {choice!r}")
    grants = grants_of(dashboard)
    try:
        claim = grants.check((form.get("grant") or [""])[0])
    except (ValueError, TypeError, KeyError):
        return _message(403, "Refused", "this button's proof is not valid (reload the blocked page)")
    origin = headers.get("Origin")
    url = claim.get("u") or ""
    if origin is not None and origin.lower() not in ({"null", _origin(url)} | g.allowed_origins):
        return _message(403, "Refused", "cross-site request")
    try:
        grants.use((form.get("grant") or [""])[0])
        rule = dashboard.overrides.add("allow", claim["s"], term=CHOICES[choice][1])
    except ValueError as e:
        return _message(409, "Not done", str(e))
    from ..overrides import describe_override

    logging.getLogger("guardian_proxy.dashboard").warning("block page: %s [rule %s]", describe_override(rule),
                                                          rule.id)
    if urlsplit(url).scheme in ("http", "https"):
        return 303, b"", {"Location": url, "Content-Type": "text/plain"}
    return _message(200, "Allowed", f"{describe_override(rule)}: reload the page you were on")


def view_get(dashboard, path: str, headers) -> tuple[int, bytes, dict]:
    """GET /block/view?grant=…: the decision the grant names, as a page of the dashboard (log-safe detail)."""
    if (headers.get("Host") or "").lower() not in dashboard.guard.allowed_hosts:
        return _message(403, "Refused", "unexpected Host")
    vals = parse_qs(urlsplit(path).query).get("grant")
    try:
        claim = grants_of(dashboard).check(vals[0] if vals else "")
    except (ValueError, TypeError, KeyError):
        return _message(403, "Refused", "this link's proof is not valid or too old")
    d = dashboard.hub.detail(claim["d"]) or {}
    rows = "".join(f"<tr><th style='text-align:left;padding-right:1em'>{html.escape(k)}</th>"
                   f"<td>{html.escape(str(d[k]))}</td></tr>"
                   for k in ("id", "host", "action", "rule", "explanation", "override", "recipient") if d.get(k))
    # the dashboard's own detail view: this page (the dashboard's origin) moves on by itself, so the next request
    # is same-origin (a cross-site redirect would get neither the SameSite=Strict cookie nor past the
    # cross-site check); `/?token=` sets the cookie and the fragment opens the decision
    there = html.escape(f"/?token={quote(dashboard.guard.token, safe='')}#decision={quote(claim['d'], safe='')}",
                        quote=True)
    sentence = f"<p id='sentence'>{html.escape(str(d['sentence']))}</p>" if d.get("sentence") else ""
    body = ("<!doctype html><meta charset='utf-8'>"
            + (f"<meta http-equiv='refresh' content='0;url={there}'>" if d else "")
            + "<title>guardian-proxy decision</title>"
            "<body style='font-family:sans-serif;max-width:50em;margin:3em auto'>"
            f"<h1>Decision {html.escape(claim['d'])}</h1>{sentence}"
            f"<table>{rows or '<tr><td>not in the recent decisions any more</td></tr>'}</table>"
            f"<p><a id='open-detail' href='{there}'>Open the dashboard at this decision</a></p></body>").encode()
    return 200, body, {"Content-Type": "text/html; charset=utf-8"}
