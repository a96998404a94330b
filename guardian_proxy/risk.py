"""Stages 4 and 5: AMRSF risk and the decision (GuardianAgent; calibration in factor_tables/README.md).

    R    = clamp(L × Seff × MT)
    Seff = min(1, Sd × Mtr × Mp × Mb)

Several categories: Sd is the MAXIMUM over the categories present (the most sensitive value decides;
counts and co-occurrence do not raise it: accumulation across turns is the session stage's CPE) and
the tier is the highest-ranked tier among them. A category whose every located span is a
quasi-identifier (`Span.direct` False: a money amount in prose, not an account number) scores with the
table's `quasi_Sd` / `quasi_tier` where it sets them. Several declared purposes: the highest Mp counts.
Decision: R ≤ allow ceiling → allow; R ≥ deny floor → deny; else transform with
z = (R − ceiling) / (floor − ceiling) and start level L1 + ⌊z / 0.25⌋ capped at L4 (L5 only by
escalation). Three stated rules on top (not in the paper; `decide`): identifiers never reach a tracker
(analytics, ad network, data broker, social network) as they are — where the thresholds would allow such a
request, it is rewritten from L1 (an identify call or a pixel carrying an e-mail must not pass even when a
policy discloses the practice and L is low); pseudonymous measurement alone has no rewrite band; a prompt to
an AI service is rewritten from L4 where the thresholds would block it.
A user override replaces the decision and says so (guardian_proxy/overrides/match.py).
"""

from __future__ import annotations

import math
import re

from .config import FactorTables
from .types import CATEGORIES, TRACKER_CLASSES, Action, Context, Evidence, Likelihood, Risk

#: recipients that never receive an identifier as is, and the categories that count as identifiers
IDENTIFIERS = ("credentials", "health", "financial", "government_id", "precise_location", "contact", "identity")
#: pseudonymous measurement: what a tracker hit carries when it names no one
PSEUDONYMOUS_CATEGORIES = frozenset({"device_id", "cookie", "behavioural", "other", "identity"})
PSEUDONYMOUS_ENTITIES = frozenset({"DEVICE_ID", "SESSION_ID", "ADVERTISING_ID", "BROWSING_ACTIVITY", "DATE", "DATE_TIME",
                                   "QUANTITY", "ORGANIZATION", "URL", "CASE_NUMBER"})
#: a random token (a UUID, or 16+ hex digits): a user id of that form names an account to no one but its issuer
_RANDOM_ID = re.compile(r"[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){1,4}(?:-[0-9a-fA-F]{1,12})?|[0-9a-fA-F]{16,}")

_RECIPIENT_WORDS = {
    "first_party": "the site itself",
    "service_provider": "a service provider",
    "analytics": "an analytics service",
    "ad_network": "an ad network",
    "social": "a social network",
    "data_broker": "a data broker",
    "ai_service": "an AI service",
    "unknown_third_party": "an unknown third party",
}
_PURPOSE_WORDS = {"unknown": "an undeclared purpose", "ai_processing": "AI processing"}
_BASIS_WORDS = {"user": "a user-initiated request", "default": "a request the page made",
                "background": "a background request"}
_TRANSPARENCY_WORDS = {"full": "policy discloses it", "partial": "policy partly discloses it",
                       "vague": "policy vague", "none": "no policy known"}


def clamp(x: float) -> float:
    return max(0.0, min(1.0, x))


class RiskScorer:
    def __init__(self, tables: FactorTables):
        self.t = tables

    def context(self, name: str) -> Context:
        c = self.t.contexts.get(name)
        if c is None:
            raise KeyError(f"unknown context {name!r}; known: {', '.join(self.t.contexts)}")
        return Context(name=name, **c)

    def factors(self, action: Action) -> dict[str, tuple[float, str]]:
        """category → (Sd, tier) for the scored categories present, most sensitive first. A category
        counts as quasi-only when it has located spans and none of them is a direct identifier (counts
        without spans, e.g. from cookies or a caller, count as direct)."""
        located, direct = _located_direct(action)
        out: dict[str, tuple[float, str]] = {}
        for c, n in action.categories.items():
            f = self.t.sensitivity.get(c)
            if n <= 0 or f is None:
                continue
            quasi = c in located and c not in direct
            out[c] = (f.quasi_Sd if quasi and f.quasi_Sd is not None else f.Sd,
                      f.quasi_tier if quasi and f.quasi_tier is not None else f.tier)
        return dict(sorted(out.items(), key=lambda kv: (-kv[1][0], kv[0])))

    def tier_of(self, action: Action, factors: dict[str, tuple[float, str]] | None = None) -> str:
        """The tier of the most sensitive category (`factors`: this action's, when already computed)."""
        tiers = [tier for _, tier in (factors if factors is not None else self.factors(action)).values()]
        if not tiers:
            return min(self.t.tiers, key=lambda k: self.t.tiers[k].rank)
        return max(tiers, key=lambda k: self.t.tiers[k].rank)

    def score(self, action: Action, evidence: Evidence, likelihood: Likelihood, context: Context | None = None) -> Risk:
        if not math.isfinite(likelihood.value):
            raise ValueError(f"likelihood is not a number ({likelihood.value!r}, path {likelihood.path})")
        t = self.t
        factors = self.factors(action)
        Sd = max((sd for sd, _ in factors.values()), default=0.0)
        recipient, purposes, basis, transparency = _effective(action, evidence, context)
        Mtr = t.recipients[recipient].value
        Mp = max(t.purposes[p].value for p in purposes)
        Mb = t.basis[basis].value
        MT = t.transparency[transparency].value
        Seff = min(1.0, Sd * Mtr * Mp * Mb)
        R = clamp(clamp(likelihood.value) * Seff * MT)
        tier = self.tier_of(action, factors)
        tt = t.tiers[tier]
        return Risk(Sd=Sd, Mtr=Mtr, Mp=Mp, Mb=Mb, MT=MT, Seff=Seff, R=R, tier=tier,
                    allow_ceiling=tt.allow_ceiling, deny_floor=tt.deny_floor)


def _effective(action: Action, evidence: Evidence, context: Context | None) -> tuple[str, list[str], str, str]:
    """(recipient, purposes, basis, transparency): a context (a what-if or a sweep) overrides what was
    extracted and what the policy evidence says."""
    if context:
        return context.recipient, [context.purpose], context.basis, context.transparency
    return action.recipient, action.purposes or ["unknown"], action.basis, evidence.transparency


def _located_direct(action: Action) -> tuple[set[str], set[str]]:
    """The categories with located spans, and those with a direct identifier among them."""
    return {s.category for s in action.spans}, {s.category for s in action.spans if s.direct}


def band_position(risk: Risk) -> float:
    """z: where R sits inside the transform band (0 at the allow ceiling, 1 at the deny floor)."""
    return (risk.R - risk.allow_ceiling) / (risk.deny_floor - risk.allow_ceiling)


def start_level(risk: Risk) -> int:
    return min(4, 1 + math.floor(max(0.0, band_position(risk)) / 0.25))


def identifier_to_tracker(action: Action, context: Context | None = None) -> bool:
    """A direct identifier (or an identifier category counted without located spans) bound for a tracker: an
    analytics service, ad network, data broker or social network."""
    if (context.recipient if context else action.recipient) not in TRACKER_CLASSES:
        return False
    located, direct = _located_direct(action)
    return any(action.categories.get(c, 0) > 0 and (c in direct or c not in located) for c in IDENTIFIERS)


def pseudonymous_only(action: Action) -> bool:
    """Every piece of personal data found is pseudonymous measurement: device, session and advertising ids,
    cookies, events and page addresses (and the dates, counts and organisation names around them), none of them
    an identifier of the person."""
    cats = action.personal()
    if not cats or not set(cats) <= PSEUDONYMOUS_CATEGORIES:
        return False
    return all(s.entity in PSEUDONYMOUS_ENTITIES or (s.entity == "USER_ID" and _RANDOM_ID.fullmatch(s.text.strip()))
               for s in action.spans)


def ai_prompt(action: Action, context: Context | None = None) -> bool:
    """A prompt sent to an AI service by its user (typed in a chat app, or sent by an agent or SDK)."""
    return context is None and action.recipient == "ai_service" and action.basis in ("user", "default")


def stated_rule(risk: Risk, kind: str) -> str | None:
    """Which stated rule of `decide` turned the thresholds' outcome into `kind` (None: the thresholds alone)."""
    if kind == "transform" and risk.R <= risk.allow_ceiling:
        return "tracker-identifiers"
    if kind == "transform" and risk.R >= risk.deny_floor:
        return "ai-prompt"
    if kind == "allow" and risk.R > risk.allow_ceiling:
        return "pseudonymous"
    return None


def decide(risk: Risk, action: Action | None = None, context: Context | None = None) -> tuple[str, int | None]:
    """(allow|transform|deny, start level). With the action, the stated rules on top of the thresholds apply:

    tracker identifiers  an identifier never reaches a tracker as it is: an allow becomes a rewrite from L1
    pseudonymous         pseudonymous measurement only (no identifier of the person): no rewrite band — it passes
                         below the deny floor and is blocked at or above it (a rewrite would only corrupt the hit)
    AI prompt            a prompt to an AI service is rewritten from L4 instead of blocked: the conversation goes on
                         with its identifiers replaced (a user override can still block it)"""
    if risk.R <= risk.allow_ceiling:
        if action is not None and identifier_to_tracker(action, context):
            return "transform", 1
        return "allow", None
    if risk.R >= risk.deny_floor:
        if action is not None and ai_prompt(action, context):
            return "transform", 4
        return "deny", None
    if action is not None and context is None and pseudonymous_only(action):  # real traffic, not a what-if
        return "allow", None
    return "transform", start_level(risk)


# --------------------------------------------------------------------------- explanation


def _words(items: list[str]) -> str:
    items = [i.replace("_", " ") for i in items]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def explain(action: Action, risk: Risk, kind: str, context: Context | None, evidence: Evidence,
            start: int | None, norm: str | None = None) -> str:
    """One line a person can read: what went where, why, and how R compares with the tier's cut-offs.
    e.g. "financial data to an ad network for profiling in a background request; policy vague →
    R 0.91 ≥ deny floor 0.55 (critical tier)"."""
    cats = [c for c in CATEGORIES if action.categories.get(c, 0) > 0]  # most sensitive first
    what = f"{_words(cats[:3])}{' (+more)' if len(cats) > 3 else ''} data" if cats else "no personal data"
    recipient, purposes, basis, transparency = _effective(action, evidence, context)
    purpose = _words([_PURPOSE_WORDS.get(p, p) for p in purposes])
    to = _RECIPIENT_WORDS.get(recipient, recipient)
    by = _BASIS_WORDS.get(basis, basis)
    if context is None and "no_page" in action.flags:  # curl, a script, an agent: no page made it
        if "addressed" in action.flags and recipient == "first_party":
            to = "the host the user's own client addressed"
        by = {"default": "a request no page made", "user": "a user-initiated request no page made"}.get(basis, by)
    head = f"{what} to {to} for {purpose} in {by}; {_TRANSPARENCY_WORDS.get(transparency, transparency)}"
    if norm:
        head += f"; the norm: {norm}"
    tier = f" ({risk.tier} tier)"
    rule = stated_rule(risk, kind)
    if rule == "pseudonymous":
        tail = (f"only pseudonymous ids, events and pages (no identifier of the person): passed as is below the "
                f"deny floor, R {risk.R:.2f} < {risk.deny_floor:.2f}{tier}")
    elif rule == "tracker-identifiers":
        tail = (f"R {risk.R:.2f} ≤ allow ceiling {risk.allow_ceiling:.2f}{tier}, but identifiers never go to "
                f"{_RECIPIENT_WORDS.get(recipient, recipient)} as they are → rewrite from L{start}")
    elif rule == "ai-prompt":
        tail = (f"R {risk.R:.2f} ≥ deny floor {risk.deny_floor:.2f}{tier}, but a prompt to an AI service is "
                f"rewritten, not blocked → rewrite from L{start}")
    elif kind == "allow":
        tail = f"R {risk.R:.2f} ≤ allow ceiling {risk.allow_ceiling:.2f}{tier}"
    elif kind == "deny":
        tail = f"R {risk.R:.2f} ≥ deny floor {risk.deny_floor:.2f}{tier}"
    else:
        tail = (f"R {risk.R:.2f} in the rewrite band ({risk.allow_ceiling:.2f}–{risk.deny_floor:.2f}){tier} "
                f"→ rewrite from L{start}")
    return f"{head} → {tail}"
