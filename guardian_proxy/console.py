"""What the console says about each decision, and how mitmweb shows it. No mitmproxy import here (the addon calls in).

One line per decision, like mitmdump's flow lines, through the package's logger (so the console's masking and
mitmproxy's log handler apply: the time and the client's address come from mitmproxy's formatter):

    [09:12:03][127.0.0.1:51234] curl  POST api.segment.io  blocked: e-mail address to analytics
    [09:12:04][127.0.0.1:51240] firefox  GET www.google-analytics.com  rewrote (L2): device id to analytics

Never a value: the program's name (guardian_proxy/procinfo.py; `?` when it is not known), the method, the host
(masked like the decision log's), what was done, and why in a few words (the kinds of personal data found, the
recipient's class, or the rule / override that decided). Rewritten and blocked decisions are logged at WARNING
(`guardian-proxy run` shows them by default, `-q` hides them), allowed ones at INFO (shown with `-v`; under
mitmdump/mitmweb at DEBUG: mitmproxy's own flow line already says it).

mitmweb's flow list: a decided flow gets a comment (the same words), a marker (`:no_entry:` blocked,
`:pencil2:` rewritten) and a blocked answer's reason phrase says who answered (`200 Blocked by guardian-proxy`
for a pixel instead of a bare `200`).
"""

from __future__ import annotations

import logging

from .logmask import mask, mask_host

#: the logger of the console's decision lines (a child of the package's: the console mask applies)
log = logging.getLogger("guardian_proxy.decisions")

VERB = {"allow": "allowed", "transform": "rewrote", "deny": "blocked"}
#: mitmweb's markers (names from mitmproxy's emoji list)
MARKER = {"deny": ":no_entry:", "transform": ":pencil2:"}
BLOCK_REASON = "Blocked by guardian-proxy"


def _data(decision) -> str:
    """The kinds of personal data, in words ("e-mail address and phone number"), "" when none was found."""
    from .dashboard.wording import data_words, span_types

    words = data_words(span_types(decision), dict(decision.six.categories), limit=2)
    return words.removeprefix("your ")


def why(decision) -> str:
    """What was done and why, in a few words, never a value: "blocked: e-mail address to analytics"."""
    verb = VERB.get(decision.action, decision.action)
    if decision.action == "transform" and decision.final_level is not None:
        verb += f" (L{decision.final_level})"
    if decision.override:
        return f"{verb}: your rule"
    a = decision.six
    data = _data(decision)
    to = (a.recipient or "unknown recipient").replace("_", " ")
    if data:
        reason = f"{data} to {to}"
    elif decision.rule:  # a stated rule, by its name in words ("no personal data", "unparsed high risk")
        reason = decision.rule.replace("-", " ").replace("_", " ")
    elif decision.action == "allow":
        return verb
    else:
        reason = f"no personal data found, to {to}"
    return f"{verb}: {reason}"


def app_name(app) -> str:
    """The program that sent it (its shown name), `?` when it is not known, `remote` for another machine."""
    if isinstance(app, dict) and app.get("name"):
        return str(app["name"])
    return "?"


def line(raw, decision, reason: str | None = None) -> str:
    """The console's line (without the time and the client, which mitmproxy's log formatter adds); `reason`:
    `why(decision)`, when it was worded already."""
    host = mask_host(decision.six.host or "") or "?"
    return mask(f"{app_name(raw.app)}  {raw.method}  {host}  {reason or why(decision)}")


def say(raw, decision, client=None, standalone: bool = False, reason: str | None = None) -> None:
    """Log the decision's line: WARNING for a rewrite or a block, INFO (DEBUG under mitmdump/mitmweb) otherwise."""
    if decision.action in ("transform", "deny"):
        level = logging.WARNING
    else:
        level = logging.DEBUG if standalone else logging.INFO
    if not log.isEnabledFor(level):
        return
    log.log(level, "%s", line(raw, decision, reason), extra={"client": client} if client else None)


def tell(flow, raw, decision, client=None, standalone: bool = False) -> None:
    """`mark` and `say` for one request, its reason worded once (both show the same `why`)."""
    reason = why(decision) if decision.action in MARKER else None
    mark(flow, raw, decision, reason)
    say(raw, decision, client, standalone, reason)


def mark(flow, raw, decision, reason: str | None = None) -> None:
    """mitmweb's view of a decided flow: comment, marker, and a blocked answer's reason phrase."""
    if decision.action not in MARKER:
        return
    try:
        flow.comment = f"guardian-proxy {reason or why(decision)}"
        flow.marked = MARKER[decision.action]
        if decision.action == "deny" and flow.response is not None:
            flow.response.reason = BLOCK_REASON
    except Exception:  # an older mitmproxy without one of these: the decision itself stands
        pass
