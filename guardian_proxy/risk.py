"""Stages 4 and 5: AMRSF risk and the decision.

    R    = clamp(L × Seff × MT)
    Seff = min(1, Sd × Mtr × Mp × Mb)

Sd of an action is the maximum Sd over its categories; the tier is the tier of the most
sensitive category present (highest tier rank). Several purposes: the highest Mp counts.
Decision: R ≤ allow ceiling → allow; R ≥ deny floor → deny; else transform with
z = (R − ceiling) / (floor − ceiling) and start level L1 + ⌊z / 0.25⌋ capped at L4.
"""

from __future__ import annotations

import math

from .config import FactorTables, Override
from .types import Action, Context, Evidence, Likelihood, Risk

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
_BASIS_WORDS = {"user": "a user-initiated request", "default": "a request the page made", "background": "a background request"}
_TRANSPARENCY_WORDS = {"full": "policy discloses it", "partial": "policy partly discloses it",
                       "vague": "policy vague", "none": "no policy known"}


def clamp(x: float) -> float:
    return 0.0 if x != x else max(0.0, min(1.0, x))  # NaN → 0 is never reached: callers check L first


class RiskScorer:
    def __init__(self, tables: FactorTables):
        self.t = tables

    def context(self, name: str) -> Context:
        c = self.t.contexts.get(name)
        if c is None:
            raise KeyError(f"unknown context {name!r}; known: {', '.join(self.t.contexts)}")
        return Context(name=name, **c)

    def tier_of(self, action: Action) -> str:
        cats = [c for c, n in action.categories.items() if n > 0 and c in self.t.sensitivity]
        if not cats:
            return min(self.t.tiers, key=lambda k: self.t.tiers[k].rank)
        return max((self.t.sensitivity[c].tier for c in cats), key=lambda k: self.t.tiers[k].rank)

    def score(self, action: Action, evidence: Evidence, likelihood: Likelihood, context: Context | None = None) -> Risk:
        t = self.t
        cats = [c for c, n in action.categories.items() if n > 0 and c in t.sensitivity]
        Sd = max((t.sensitivity[c].Sd for c in cats), default=0.0)
        recipient = context.recipient if context else action.recipient
        purposes = [context.purpose] if context else (action.purposes or ["unknown"])
        basis = context.basis if context else action.basis
        transparency = context.transparency if context else evidence.transparency
        Mtr = t.recipients[recipient].value
        Mp = max(t.purposes[p].value for p in purposes)
        Mb = t.basis[basis].value
        MT = t.transparency[transparency].value
        Seff = min(1.0, Sd * Mtr * Mp * Mb)
        R = clamp(likelihood.value * Seff * MT)
        tier = self.tier_of(action)
        tt = t.tiers[tier]
        return Risk(Sd=Sd, Mtr=Mtr, Mp=Mp, Mb=Mb, MT=MT, Seff=Seff, R=R, tier=tier,
                    allow_ceiling=tt.allow_ceiling, deny_floor=tt.deny_floor)


def start_level(risk: Risk) -> int:
    z = (risk.R - risk.allow_ceiling) / (risk.deny_floor - risk.allow_ceiling)
    return min(4, 1 + math.floor(max(0.0, z) / 0.25))


def decide(risk: Risk) -> tuple[str, int | None]:
    if risk.R <= risk.allow_ceiling:
        return "allow", None
    if risk.R >= risk.deny_floor:
        return "deny", None
    return "transform", start_level(risk)


def _matches(o: Override, action: Action) -> bool:
    if o.domain and not (action.domain == o.domain.lower() or action.host == o.domain.lower()):
        return False
    if o.owner and (action.owner or "").lower() != o.owner.lower():
        return False
    if o.category and action.categories.get(o.category, 0) <= 0:
        return False
    if o.recipient and action.recipient != o.recipient:
        return False
    return True


def find_override(overrides: list[Override], action: Action) -> Override | None:
    """The last matching override wins (later entries are more specific by convention: the CLI appends)."""
    hit = None
    for o in overrides:
        if _matches(o, action):
            hit = o
    return hit


def describe_override(o: Override) -> str:
    target = ", ".join(f"{k}={v}" for k, v in (("domain", o.domain), ("owner", o.owner), ("category", o.category),
                                                ("recipient", o.recipient)) if v)
    what = f"level L{o.level}" if o.action == "level" else f"always {o.action}"
    return f"{what} ({target})"


def explain(action: Action, risk: Risk, kind: str, context: Context | None, evidence: Evidence,
            start: int | None) -> str:
    cats = sorted(action.categories, key=lambda c: -action.categories[c])
    what = " and ".join(c.replace("_", " ") for c in cats[:3]) + " data" if cats else "no personal data"
    recipient = context.recipient if context else action.recipient
    purpose = context.purpose if context else ", ".join(action.purposes)
    basis = context.basis if context else action.basis
    transparency = context.transparency if context else evidence.transparency
    head = (f"{what} to {_RECIPIENT_WORDS.get(recipient, recipient)} for {purpose.replace('_', ' ')} "
            f"in {_BASIS_WORDS.get(basis, basis)}; {_TRANSPARENCY_WORDS.get(transparency, transparency)}")
    if kind == "allow":
        tail = f"R {risk.R:.2f} ≤ allow ceiling {risk.allow_ceiling:.2f}"
    elif kind == "deny":
        tail = f"R {risk.R:.2f} ≥ deny floor {risk.deny_floor:.2f}"
    else:
        tail = (f"R {risk.R:.2f} between {risk.allow_ceiling:.2f} and {risk.deny_floor:.2f} "
                f"→ rewrite from L{start}")
    return f"{head} → {tail}"
