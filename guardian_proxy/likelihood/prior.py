"""The likelihood when no policy is known for the destination (evidence empty, transparency `none`).

With no statement to compare against, the evidential model has nothing to read and answers with its
"undisclosed" value (about 0.94) for every destination — which would rewrite the password of every
login form on the web's long tail. Instead L is a prior by context, path `fallback`, said in the log:
the user's own submission to the site they are on is rarely a violation; the same data leaving in the
background to a tracker usually is. MT for `none` (1.30 in factor_tables) still raises R for the
missing policy. Values are project settings, ordered by the published recipient severities.
"""

from __future__ import annotations

from ..types import Action, Evidence, Likelihood

FIRST_PARTY = {"user": 0.15, "default": 0.30, "background": 0.50}
THIRD_PARTY = {
    "service_provider": 0.50,
    "ai_service": 0.60,
    "analytics": 0.70,
    "unknown_third_party": 0.70,
    "social": 0.80,
    "ad_network": 0.90,
    "data_broker": 0.95,
}


def applies(evidence: Evidence) -> bool:
    return not evidence.statements and evidence.transparency == "none"


def prior(action: Action) -> Likelihood:
    if action.recipient == "first_party":
        value = FIRST_PARTY.get(action.basis, 0.30)
    else:
        value = THIRD_PARTY.get(action.recipient, 0.70)
    return Likelihood(value=value, path="fallback", reason=f"no policy known: prior for {action.recipient}, "
                                                          f"{action.basis} basis")
