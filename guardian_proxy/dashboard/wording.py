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
