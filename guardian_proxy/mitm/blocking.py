"""How a blocked request is answered (`block_kind`, `blocked_response`: the 403 page, a pixel, a silent 204, a
readable JSON 403, a CORS preflight's grant) and how a decision is applied to its flow (`apply_decision`)."""

from __future__ import annotations

import json
import logging
import re

from mitmproxy import ctx, http

from ..types import TRACKER_CLASSES, Decision
from .flows import is_preflight, real_url, wants_html

log = logging.getLogger("guardian_proxy")

#: a transparent 1×1 GIF: what a blocked tracking pixel gets, so its onload fires and nothing retries
PIXEL_GIF = bytes.fromhex("47494638396101000100800000000000ffffff21f90401000000002c00000000010001000002024401003b")


def block_kind(flow: http.HTTPFlow, decision: Decision) -> str:
    """How a blocked request is answered, by what sent it (R-BLOCK-ANSWER):

    page      a navigation (or a non-browser client asking for HTML): the 403 explanation page
    pixel     an image request to a tracker or in the background: 200 with a 1×1 GIF
    silent    a browser's beacon, ping or tracker call (sendBeacon, or a fetch/XHR to an analytics, ad, broker or
              social host, or any background request): 204 with CORS headers — a browser SDK that gets a network
              error (a 403 without CORS headers) retries, one that gets a 2xx does not, and nothing left the machine
    explain   any other fetch/XHR, and every non-browser client (SDKs, agents, curl): 403 with a JSON explanation,
              readable by a page (CORS headers); server-side SDKs do not retry a 4xx"""
    h = flow.request.headers
    mode, dest = h.get("sec-fetch-mode", "").lower(), h.get("sec-fetch-dest", "").lower()
    if mode == "navigate" or (not mode and wants_html(flow)):
        return "page"
    if not (mode or dest or h.get("origin") or h.get("ping-from")):
        return "explain"  # not a browser
    quiet = decision.six.recipient in TRACKER_CLASSES or decision.six.basis == "background"
    if dest == "image" and quiet:
        return "pixel"
    if quiet or dest == "report" or h.get("ping-from") or h.get("ping-to"):
        return "silent"
    return "explain"


def _cors(flow: http.HTTPFlow) -> dict[str, str]:
    origin = flow.request.headers.get("origin")
    if not origin:
        return {}
    return {"access-control-allow-origin": origin, "access-control-allow-credentials": "true",
            "access-control-expose-headers": "x-guardian-decision", "vary": "Origin"}


#: HTTP tokens, comma-separated (what a preflight may ask for and be granted)
_TOKENS = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+(?:\s*,\s*[!#$%&'*+.^_`|~0-9A-Za-z-]+)*")


def _preflight_grant(flow: http.HTTPFlow) -> dict[str, str]:
    """What the preflight asked for (its method and headers, when they are plain tokens), granted for its origin
    only and never cached (`max-age: 0`): the grant stands for the proxy's own answer to the call that follows."""
    h = flow.request.headers
    method = h.get("access-control-request-method", "").strip()
    asked = h.get("access-control-request-headers", "").strip()
    grant = {**_cors(flow), "access-control-max-age": "0", "vary": "Origin, Access-Control-Request-Method, "
             "Access-Control-Request-Headers"}
    if _TOKENS.fullmatch(method):
        grant["access-control-allow-methods"] = method
    if asked and _TOKENS.fullmatch(asked):
        grant["access-control-allow-headers"] = asked
    return grant


def explained(decision: Decision, reason: str) -> str:
    """The JSON 403's `reason`: what was stopped in words first, as the block page says it (guardian_proxy/
    dashboard/wording.py `of_decision`, values masked), then the explanation; the explanation alone when the
    words cannot be made."""
    from ..dashboard.wording import of_decision
    from ..logmask import mask

    try:
        words, _ = of_decision(decision)
    except Exception:  # the words must never cost the block itself
        log.exception("blocked answer: could not word the reason")
        return reason
    return f"{mask(words)} Why: {reason}" if words else reason


def blocked_response(decision: Decision, flow: http.HTTPFlow, dashboard=None) -> http.Response:
    """The answer to a blocked request, by `block_kind`. The page (kind "page") links to the decision on the
    running dashboard and offers "Allow once" / "for 1 hour" / "always" buttons (guardian_proxy/dashboard/
    block_actions.py); `dashboard` defaults to the running GuardianAddon's, none: the page without them.

    A browser's CORS preflight for a call that is blocked (a user's deny rule on the destination) is answered here
    with what it asked for (kind "preflight", 204): without the grant the browser fails the call with a network
    error, which SDKs retry; with it the call itself comes to the proxy and gets its own answer (the silent 204,
    or the readable JSON 403). Nothing reaches the destination either way."""
    reason = decision.explanation or "blocked by policy"
    kind = block_kind(flow, decision)
    if kind in ("silent", "explain") and is_preflight(flow):
        head = {"x-guardian-decision": decision.id, "x-guardian-blocked": "preflight", "cache-control": "no-store"}
        return http.Response.make(204, b"", {**head, **_preflight_grant(flow)})
    head = {"x-guardian-decision": decision.id, "x-guardian-blocked": kind, "cache-control": "no-store"}
    if kind == "pixel":
        return http.Response.make(200, PIXEL_GIF, {**head, **_cors(flow), "content-type": "image/gif"})
    if kind == "silent":
        return http.Response.make(204, b"", {**head, **_cors(flow)})
    if kind == "page":
        from ..dashboard.block_actions import page

        if dashboard is None:
            try:
                dashboard = getattr(ctx.master.addons.get("guardianaddon"), "dashboard", None)
            except Exception:  # no master (a unit test), or no guardian addon: no dashboard to point at
                dashboard = None
        try:
            body, extra = page(decision, real_url(flow), flow.request.headers, dashboard)
        except Exception:  # the buttons must never cost the block itself
            log.exception("block page: could not add the dashboard's actions")
            body, extra = page(decision, real_url(flow), flow.request.headers, None)
        return http.Response.make(403, body, {**head, **extra, "content-type": "text/html; charset=utf-8"})
    body = json.dumps({"error": "blocked_by_guardian_proxy", "decision_id": decision.id,
                       "host": decision.six.host, "reason": explained(decision, reason)}).encode()
    return http.Response.make(403, body, {**head, **_cors(flow), "content-type": "application/json"})


def apply_decision(flow: http.HTTPFlow, decision: Decision) -> None:
    if decision.action == "deny":
        flow.response = blocked_response(decision, flow)
        return
    if decision.action != "transform" or decision.rewrite is None:
        return
    rw = decision.rewrite
    req = flow.request
    if rw.url:
        req.url = rw.url
    for name in rw.remove_headers:
        req.headers.pop(name, None)
    for name, value in rw.set_headers.items():
        req.headers[name] = value
    if rw.body is not None:
        req.raw_content = rw.body  # already encoded as sent (Content-Encoding, or a sniffed compression)
        if "transfer-encoding" not in req.headers:
            req.headers["content-length"] = str(len(rw.body))

