import pytest

from guardian_proxy.config import Override, load_factor_tables
from guardian_proxy.risk import RiskScorer, decide, find_override, start_level
from guardian_proxy.types import Action, Evidence, Likelihood, Risk

T = load_factor_tables()
S = RiskScorer(T)


def act(**kw):
    base = dict(domain="x.com", host="x.com", categories={"financial": 1}, recipient="ad_network",
                purposes=["profiling"], basis="background")
    base.update(kw)
    return Action(**base)


def test_formula_is_the_published_one():
    a = act(categories={"contact": 2, "identity": 1}, recipient="service_provider", purposes=["analytics"],
            basis="default")
    r = S.score(a, Evidence(transparency="partial"), Likelihood(value=0.7, path="fixed"))
    t = T
    sd = max(t.sensitivity["contact"].Sd, t.sensitivity["identity"].Sd)
    seff = min(1, sd * t.recipients["service_provider"].value * t.purposes["analytics"].value * t.basis["default"].value)
    assert r.Sd == sd and r.Seff == pytest.approx(seff)
    assert r.R == pytest.approx(min(1, 0.7 * seff * t.transparency["partial"].value))
    assert r.tier == "sensitive"


def test_published_critical_thresholds_and_tier_of_most_sensitive():
    r = S.score(act(categories={"financial": 1, "cookie": 3}), Evidence(), Likelihood(value=0.7, path="fixed"))
    assert (r.tier, r.allow_ceiling, r.deny_floor) == ("critical", 0.10, 0.55)
    assert T.sensitivity["credentials"].Sd == 1.0 and T.sensitivity["cookie"].Sd == 0.2


def _risk(R, lo=0.10, hi=0.55):
    return Risk(Sd=1, Mtr=1, Mp=1, Mb=1, MT=1, Seff=1, R=R, tier="critical", allow_ceiling=lo, deny_floor=hi)


def test_decision_bands_and_levels():
    assert decide(_risk(0.10)) == ("allow", None)
    assert decide(_risk(0.55)) == ("deny", None)
    band = 0.45
    assert start_level(_risk(0.10 + 0.01 * band)) == 1
    assert start_level(_risk(0.10 + 0.26 * band)) == 2
    assert start_level(_risk(0.10 + 0.51 * band)) == 3
    assert start_level(_risk(0.10 + 0.99 * band)) == 4  # capped at L4: L5 only by escalation


def test_overrides_last_match_wins():
    a = act()
    o = [Override(action="deny", domain="x.com"), Override(action="allow", domain="x.com", category="financial")]
    assert find_override(o, a).action == "allow"
    assert find_override(o, act(categories={"contact": 1})).action == "deny"
    with pytest.raises(ValueError):
        Override(action="allow")
