"""What the dashboard says about a decision, in plain words first and the numbers after, never contradicting itself.

- verdict: what happened to the request ("allowed as is", "rewritten at L2", "blocked"). When escalation raised
  the level, both levels are named: "asked for L1, rewritten at L2 after the guesser re-identified it (1 round
  in 2)" — never a bare "rewrite from L1" beside a "rewritten L2".
- why: the explanation's words (what went where, for what), without its numbers; what came after them
  ("; blocked: the request is signed …") is kept.
- numbers: R against the tier's cut-offs, read by the rule risk.decide applies: R ≤ allow ceiling is the allow
  band, R ≥ deny floor the block band, anything between the rewrite band. R is printed with as many decimals as
  it takes not to look equal to a cut-off it is not equal to (0.5996 below a 0.60 floor reads "0.5996", never
  "0.60 between 0.15 and 0.60"). A stated rule that changed the thresholds' outcome follows ("but …").
"""

from __future__ import annotations

from ..risk import decide, stated_rule
from ..types import Risk
from .apps import sender

_ACTION = {"allow": "allowed as is", "transform": "rewritten", "deny": "blocked"}
_BAND = {"allow": "allow band", "transform": "rewrite band", "deny": "block band"}
_RULE_WORDS = {
    "tracker-identifiers": "identifiers never reach a tracker as they are, so it was rewritten",
    "ai-prompt": "a prompt to an AI service is rewritten, not blocked",
    "pseudonymous": "only pseudonymous ids, events and pages (no identifier of the person) have no rewrite band, "
                    "so it passed as is",
}


def split_explanation(text: str) -> tuple[str, str, str]:
    """(words, numbers, after): `head → tail; more` as risk.explain and the pipeline write it."""
    text = text or ""
    i = text.find(" → ")
    if i < 0:
        return text, "", ""
    rest = text[i + 3:]
    j = rest.find("; ")
    return text[:i], (rest[:j] if j >= 0 else rest), (rest[j + 2:] if j >= 0 else "")


def fmt_r(r: float, *cuts: float) -> str:
    """R with 2 decimals, more (up to 4) when 2 would make it read as a cut-off it is not equal to."""
    for d in (2, 3, 4):
        text = f"{r:.{d}f}"
        if all(r == c or text != f"{c:.{d}f}" for c in cuts):
            return text
    return f"{r:.4f}"


def band_words(risk: Risk) -> str:
    """"R 0.5996 is in the rewrite band: above the allow ceiling 0.15 and below the deny floor 0.60 (high tier)"."""
    lo, hi = risk.allow_ceiling, risk.deny_floor
    band, _ = decide(risk)  # the thresholds alone: which band R falls in
    r = fmt_r(risk.R, lo, hi)
    if band == "allow":
        where = f"at the allow ceiling {lo:.2f}" if risk.R == lo else f"below the allow ceiling {lo:.2f}"
    elif band == "deny":
        where = f"at the deny floor {hi:.2f}" if risk.R == hi else f"above the deny floor {hi:.2f}"
    else:
        where = f"above the allow ceiling {lo:.2f} and below the deny floor {hi:.2f}"
    return f"R {r} is in the {_BAND[band]}: {where} ({risk.tier} tier)"


def levels_words(rec: dict) -> str | None:
    """Start and final level of a rewrite, and what raised it (the anonymizer's stats, when the record has them)."""
    start, final, rounds = rec.get("start_level"), rec.get("final_level"), rec.get("rounds") or 0
    if rec.get("action") != "transform" or not final:
        return None
    an = rec.get("anonymize") if isinstance(rec.get("anonymize"), dict) else {}
    looked = f"{rounds} guessing round{'s' if rounds != 1 else ''}"
    if start and final > start:
        cues = an.get("upgrade_cues") if isinstance(an.get("upgrade_cues"), dict) else {}
        cue = f" from {', '.join(str(c).replace('_', ' ') for c in cues)}" if cues else ""
        raised = final - start
        return (f"asked for L{start}, rewritten at L{final} after the guesser re-identified the person{cue} "
                f"({raised} raise{'s' if raised != 1 else ''} in {looked})")
    if rounds:
        return f"rewritten at L{final}, as asked: the guesser could not re-identify the person ({looked})"
    return f"rewritten at L{final}, as asked"


def verdict(rec: dict) -> str:
    action = rec.get("action")
    if action == "transform" and rec.get("final_level"):
        start, final = rec.get("start_level"), rec["final_level"]
        if start and final > start:
            return f"rewritten at L{final} (asked for L{start})"
        return f"rewritten at L{final}"
    return _ACTION.get(action, str(action or "?"))


def why(rec: dict) -> str:
    words, _, after = split_explanation(rec.get("explanation") or "")
    return f"{words}; {after}" if after else words


def plain(rec: dict, risk: Risk | None = None) -> dict:
    """{verdict, why, levels, numbers, rule}: the detail view's explanation (plain words, then numbers)."""
    _, tail, _ = split_explanation(rec.get("explanation") or "")
    numbers = band_words(risk) if risk is not None else (
        f"R {fmt_r(rec['R'])} ({rec.get('tier') or '?'} tier)" if isinstance(rec.get("R"), int | float) else None)
    rule = None
    if risk is not None and rec.get("action") in ("allow", "transform", "deny") and not rec.get("override"):
        rule = _RULE_WORDS.get(stated_rule(risk, rec["action"]) or "")
    if rec.get("override"):
        rule = f"a user override decided: {rec['override']}"
    return {"verdict": verdict(rec), "why": why(rec), "levels": levels_words(rec), "numbers": numbers,
            "rule": rule, "explanation_numbers": tail or None}


# --------------------------------------------------------------------------- one plain sentence (the action first)

#: entity type → (one, many): the data in the words a user reads
_DATA = {
    "EMAIL_ADDRESS": ("e-mail address", "e-mail addresses"), "PHONE_NUMBER": ("phone number", "phone numbers"),
    "PERSON": ("name", "names"), "CREDIT_CARD": ("card number", "card numbers"),
    "IP_ADDRESS": ("IP address", "IP addresses"), "US_SSN": ("social security number", "social security numbers"),
    "US_ITIN": ("tax id", "tax ids"), "IBAN_CODE": ("bank account number", "bank account numbers"),
    "STREET_ADDRESS": ("street address", "street addresses"), "LOCATION": ("location", "locations"),
    "GEO_COORDINATES": ("precise location", "precise locations"), "DATE_OF_BIRTH": ("date of birth", "dates of birth"),
    "USERNAME": ("user name", "user names"), "PASSWORD": ("password", "passwords"),
    "DEVICE_ID": ("device id", "device ids"), "ADVERTISING_ID": ("advertising id", "advertising ids"),
    "SESSION_ID": ("session id", "session ids"), "API_KEY": ("secret key", "secret keys"),
    "ACCESS_TOKEN": ("access token", "access tokens"), "MAC_ADDRESS": ("device address", "device addresses"),
}
#: category → words, when no span type says more
_CATEGORY_WORDS = {
    "credentials": "credentials", "health": "health details", "financial": "financial details",
    "government_id": "government id", "precise_location": "precise location", "contact": "contact details",
    "identity": "identity", "demographic": "demographic details", "behavioural": "browsing behaviour",
    "device_id": "device identifiers", "cookie": "tracking cookies", "other": "personal data",
}
#: recipient class → "a data broker" (the block page's words)
_RECIPIENT_A = {
    "first_party": "the site itself", "service_provider": "a service provider", "analytics": "an analytics service",
    "ad_network": "an ad network", "social": "a social network", "data_broker": "a data broker",
    "ai_service": "an AI service", "unknown_third_party": "an unknown third party",
}


def _words_list(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def data_parts(types: dict[str, int] | None, categories: dict[str, int] | None = None,
               limit: int = 3) -> tuple[str, bool]:
    """("your e-mail address and phone number", plural?) — from span types (counts), else from categories; ("",
    False) when nothing personal was found."""
    items: list[tuple[str, bool]] = []
    for ent, n in sorted((types or {}).items(), key=lambda kv: (-kv[1], kv[0])):
        if not isinstance(n, int | float) or n <= 0:
            continue
        one, many = _DATA.get(ent, (ent.lower().replace("_", " "),) * 2)
        items.append((one, False) if n == 1 else (f"{int(n)} {many}", True))
    if not items:
        for c, n in sorted((categories or {}).items()):
            if c != "unparsed" and isinstance(n, int | float) and n > 0:
                w = _CATEGORY_WORDS.get(c, c.replace("_", " "))
                items.append((w, w.endswith(("details", "identifiers", "cookies", "credentials"))))
    if not items:
        return "", False
    more = len(items) - limit
    words = [w for w, _ in items[:limit]] + ([f"{more} more kind{'s' if more != 1 else ''}"] if more > 0 else [])
    return "your " + _words_list(words), len(words) > 1 or items[0][1]


def data_words(types: dict[str, int] | None, categories: dict[str, int] | None = None, limit: int = 3) -> str:
    """"your e-mail address and phone number", "your 2 e-mail addresses" ("" when nothing personal was found)."""
    return data_parts(types, categories, limit)[0]


def recipient_words(recipient: str | None) -> str:
    """"analytics", "data broker": the class in words (for a parenthesis)."""
    return (recipient or "unknown recipient").replace("_", " ")


def recipient_a(recipient: str | None) -> str:
    return _RECIPIENT_A.get(recipient or "", "an unknown third party")


def sentence(rec: dict, types: dict[str, int] | None = None, standin_types: set[str] | frozenset = frozenset()) -> str:
    """The detail view's first line, what happened in words, no number and no value:
    "Your e-mail address was replaced with a stand-in before it went to segment.io (analytics), sent by shop.example."
    `types` are the span types found (entity → count); `standin_types` those whose stand-in is shown."""
    dest = rec.get("domain") or rec.get("host") or "?"
    to = f"{dest} ({recipient_words(rec.get('recipient'))})"
    site = rec.get("site")
    app = sender(rec.get("app"))  # the program, when procinfo.py found it: an unknown one is never named
    tool = f"{app} (no web page)" if app else "an app or tool (no web page)"
    by = f", sent by {site}" if site and site != dest else (f", sent by {tool}" if not site else "")
    data, plural = data_parts(types if types is not None else rec.get("spans"), rec.get("categories"))
    action = rec.get("action")
    rule = f" Your rule decided it: {rec['override']}." if rec.get("override") else ""
    if not data:
        by = f"{by}," if by else ""
        if action == "deny":
            return (f"This request to {to}{by} was stopped before it left this machine; no personal data was found "
                    f"in it.{rule}")
        done = "was rewritten" if action == "transform" else "went as it was"
        return f"This request to {to}{by} {done}; no personal data was found in it.{rule}"
    if action == "transform":
        how = "replaced with stand-ins" if standin_types else "replaced"
        if standin_types and len(standin_types) == 1 and sum((types or rec.get("spans") or {}).values()) == 1:
            how = "replaced with a stand-in"
        return (f"{data[0].upper()}{data[1:]} {'were' if plural else 'was'} {how} before "
                f"{'the request' if plural else 'it'} went to {to}{by}.{rule}")
    if action == "deny":
        where = f"sent by {site or app or 'an app or tool'} to {recipient_a(rec.get('recipient'))} ({dest})"
        return f"{data[0].upper()}{data[1:]}, {where}, {'were' if plural else 'was'} stopped before {'they' if plural else 'it'} left this machine.{rule}"
    return f"{data[0].upper()}{data[1:]} went to {to} as it was{by}.{rule}"


def span_types(d) -> dict[str, int]:
    """A Decision's personal data by type and count: what the rewrite replaced, else what extraction found."""
    if d.rewrite is not None and d.rewrite.span_counts:
        return dict(d.rewrite.span_counts)
    types: dict[str, int] = {}
    for sp in d.six.spans:
        types[sp.entity] = types.get(sp.entity, 0) + 1
    return types


def of_decision(d) -> tuple[str, str | None]:
    """(sentence, numbers) for a Decision: the block page's reason in words, then its numbers. The program that
    sent it (the action's `app`, procinfo.py) is named when it was found and no page is known: "your e-mail address,
    sent by python3 agent.py to a data broker"; one that cannot be known is not mentioned."""
    a = d.six
    types = span_types(d)
    rec = {"action": d.action, "host": a.host, "domain": a.domain or a.host, "recipient": a.recipient,
           "site": a.site, "categories": dict(a.categories), "override": d.override, "app": a.app}
    _, tail, after = split_explanation(d.explanation or "")
    numbers = band_words(d.risk) if d.risk is not None else (tail or None)
    if after:
        numbers = f"{numbers}; {after}" if numbers else after
    return sentence(rec, types), numbers
