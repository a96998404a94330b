"""Which user override applies to a request, and what it makes of the decision (R-OVERRIDE).

The effective list (OverrideStore.current(): the config's rules, then the stored ones) is searched from the end:
the last matching rule that still applies wins. A domain covers its subdomains; owner, category, recipient and
app narrow a rule. The winner replaces the decision the risk stage made (`apply_override`) and says so in the
explanation, with the rule's id.
"""

from __future__ import annotations

from ..config import Override
from ..types import Action
from .terms import state, term_of


def _matches(o: Override, action: Action, app: dict | None = None) -> bool:
    d = (o.domain or "").lower()
    if d and not (action.domain == d or action.host == d or action.host.endswith("." + d)):
        return False  # a domain covers its subdomains
    if o.owner and (action.owner or "").lower() != o.owner.lower():
        return False
    if o.category and action.categories.get(o.category, 0) <= 0:
        return False
    if o.recipient and action.recipient != o.recipient:
        return False
    if o.app:
        from ..procinfo import app_matches_rule

        return app_matches_rule(app, o.app)
    return True


def find_override(overrides: list[Override], action: Action, app: dict | None = None,
                  spend: bool = True) -> Override | None:
    """The last matching override that still applies wins (config entries come first, then the CLI/dashboard
    store). A rule that expired, was spent or whose proxy run ended is skipped (overrides/terms.py);
    the store's `claim` (where the list has one) counts the winner and spends a once rule, and a once rule
    another request has just spent is skipped for the next earlier match. A level rule for a request with no
    personal data is not claimed: the pipeline does not apply it. `app`: the program that sent the request
    (RawRequest.app), for rules that name one. `spend` False (a browser's CORS preflight, `is_preflight`): the
    store's `peek` instead, so the call that follows is the one that uses a once rule up."""
    claim = getattr(overrides, "claim" if spend else "peek", None)
    for o in reversed(overrides):
        if not _matches(o, action, app) or state(o) != "active":
            continue
        if claim is None or (o.action == "level" and not action.personal()) or claim(o):
            return o
    return None


def is_preflight(req) -> bool:
    """A browser's CORS preflight (a RawRequest): OPTIONS with an Origin and Access-Control-Request-Method. It
    only asks whether the call may follow; the call is the request a user's rule is for (the proxy's answer to
    one: R-PREFLIGHT, mitm/flows.py)."""
    return req.method.upper() == "OPTIONS" and bool(req.header("origin")) and \
        bool(req.header("access-control-request-method"))


def describe_override(o: Override) -> str:
    """'always deny (domain=x)', 'allow once (domain=x)', 'allow until 2025-05-01 14:05 (domain=x)',
    'level L4 until restart (recipient=ad_network)'."""
    target = ", ".join(f"{k}={v}" for k, v in (("domain", o.domain), ("owner", o.owner), ("category", o.category),
                                                ("recipient", o.recipient), ("app", o.app)) if v)
    term = term_of(o)
    if o.action == "level":
        what = f"level L{o.level}" + ("" if term == "forever" else f" {term}")
    else:
        what = f"always {o.action}" if term == "forever" else f"{o.action} {term}"
    return f"{what} ({target})"


def apply_override(o: Override, explanation: str) -> tuple[str, int | None, str, str]:
    """(action, start level, explanation, override text) once a user override replaces a decision; the text
    names the rule's id where it has one."""
    text = describe_override(o)
    kind = "transform" if o.action == "level" else o.action
    rule = f" [rule {o.id}]" if o.id else ""
    return kind, (o.level if o.action == "level" else None), f"override: {text}{rule} — {explanation}", text
