"""AMRSF: the published formula and values, tiers, decisions and levels, and what real users meet."""

import math

import pytest

from guardian_proxy.config import load_factor_tables
from guardian_proxy.risk import RiskScorer, band_position, decide, explain, start_level
from guardian_proxy.types import CATEGORIES, Action, Context, Evidence, Likelihood, Risk, Span

T = load_factor_tables()
S = RiskScorer(T)


def act(**kw):
    base = dict(domain="x.com", host="x.com", categories={"financial": 1}, recipient="ad_network",
                purposes=["profiling"], basis="background")
    base.update(kw)
    return Action(**base)


def L(v):
    return Likelihood(value=v, path="fixed")


def ctx(recipient, purpose, basis, transparency):
    return Context(name="t", recipient=recipient, purpose=purpose, basis=basis, transparency=transparency)


def span(category, direct):
    return Span(path="text:", start=0, end=1, entity="X", category=category, direct=direct)


# ----------------------------------------------------------------------------- formula and published values


def test_formula_is_the_published_one():
    a = act(categories={"contact": 2, "identity": 1, "other": 4}, recipient="service_provider",
            purposes=["analytics"], basis="default")
    r = S.score(a, Evidence(transparency="partial"), L(0.7))
    t = T
    sd = max(t.sensitivity[c].Sd for c in ("contact", "identity", "other"))  # several categories: the maximum
    seff = min(1, sd * t.recipients["service_provider"].value * t.purposes["analytics"].value * t.basis["default"].value)
    assert r.Sd == sd and r.Seff == pytest.approx(seff)
    assert r.R == pytest.approx(min(1, 0.7 * seff * t.transparency["partial"].value))
    assert r.tier == "sensitive"


def test_seff_and_r_are_clamped_and_nan_likelihood_is_refused():
    r = S.score(act(categories={"credentials": 1}), Evidence(transparency="vague"), L(1.0))
    assert r.Seff == 1.0 and r.R == 1.0  # 1.0 × 1.3 × 1.4 × 1.3 saturates; L × 1 × 1.3 clamps to 1
    with pytest.raises(ValueError):
        S.score(act(), Evidence(), L(math.nan))


def test_published_values():
    s = T.sensitivity
    assert (s["credentials"].Sd, s["health"].Sd, s["financial"].Sd, s["precise_location"].Sd, s["cookie"].Sd) == \
        (1.00, 0.95, 0.95, 0.85, 0.20)
    assert (T.tiers["critical"].allow_ceiling, T.tiers["critical"].deny_floor) == (0.10, 0.55)
    # quoted severities s map to multipliers by M = 0.5 + s (factor_tables/README.md)
    for table, key, sev in ((T.recipients, "first_party", 0.20), (T.recipients, "ad_network", 0.80),
                            (T.recipients, "data_broker", 0.90), (T.purposes, "functionality", 0.15),
                            (T.purposes, "advertising", 0.80)):
        assert table[key].value == pytest.approx(0.5 + sev), key
    for table in (T.recipients, T.purposes, T.basis, T.transparency):
        assert all(f.source for f in table.values())
    assert all(f.source for f in T.sensitivity.values())


def test_tiers_are_ordered_and_the_most_sensitive_category_sets_the_tier():
    r = S.score(act(categories={"financial": 1, "cookie": 3}), Evidence(), L(0.7))
    assert (r.tier, r.allow_ceiling, r.deny_floor) == ("critical", 0.10, 0.55)
    assert S.tier_of(act(categories={"cookie": 1, "government_id": 1})) == "high"
    # in units of L × context (R / Sd), a more sensitive tier never releases more nor denies later
    def band(tier):
        sd = max(f.Sd for f in T.sensitivity.values() if f.tier == tier)
        return T.tiers[tier].allow_ceiling / sd, T.tiers[tier].deny_floor / sd
    ranked = sorted(T.tiers, key=lambda k: T.tiers[k].rank)
    for lower, higher in zip(ranked, ranked[1:], strict=False):
        assert band(higher)[0] <= band(lower)[0] and band(higher)[1] <= band(lower)[1], (lower, higher)


def test_quasi_only_financial_scores_lower_than_an_account_number():
    amount = act(categories={"financial": 1}, spans=[span("financial", False)])
    account = act(categories={"financial": 1}, spans=[span("financial", True), span("financial", False)])
    f = T.sensitivity["financial"]
    assert S.factors(amount)["financial"] == (f.quasi_Sd, f.quasi_tier)
    assert S.factors(account)["financial"] == (0.95, "critical")
    assert S.factors(act(categories={"financial": 1}))["financial"] == (0.95, "critical")  # no spans: direct
    health = act(categories={"health": 1}, spans=[span("health", False)])
    assert S.factors(health)["health"] == (0.95, "critical")  # GDPR Art. 9: sensitive by content


# ----------------------------------------------------------------------------- decisions and levels


def _risk(R, lo=0.10, hi=0.55):
    return Risk(Sd=1, Mtr=1, Mp=1, Mb=1, MT=1, Seff=1, R=R, tier="critical", allow_ceiling=lo, deny_floor=hi)


def test_decision_bands_and_levels():
    assert decide(_risk(0.10)) == ("allow", None)
    assert decide(_risk(0.1001))[0] == "transform"
    assert decide(_risk(0.55)) == ("deny", None)
    band = 0.45
    assert band_position(_risk(0.10 + 0.5 * band)) == pytest.approx(0.5)
    assert start_level(_risk(0.10 + 0.01 * band)) == 1
    assert start_level(_risk(0.10 + 0.26 * band)) == 2
    assert start_level(_risk(0.10 + 0.51 * band)) == 3
    assert start_level(_risk(0.10 + 0.76 * band)) == 4
    assert start_level(_risk(0.10 + 0.99 * band)) == 4  # capped at L4: L5 only by escalation


@pytest.mark.parametrize("category", [c for c in CATEGORIES if T.sensitivity[c].tier != "critical"])
def test_each_non_critical_category_follows_the_published_sweep(category):
    """mild → allow, medium → transform, severe → deny at L 0.7 (cookies: severe only rewrites)."""
    a = act(categories={category: 1})
    kinds = [decide(S.score(a, Evidence(), L(0.7), S.context(c)))[0] for c in ("mild", "medium", "severe")]
    if category == "cookie":
        assert kinds == ["allow", "allow", "transform"]
    else:
        assert kinds == ["allow", "transform", "deny"]


@pytest.mark.parametrize("category", ["credentials", "health", "financial"])
def test_critical_data_is_rewritten_even_in_the_mild_context_at_l_07(category):
    """The published critical tier (0.10 / 0.55) rewrites instead of releasing; medium reaches the floor."""
    a = act(categories={category: 1})
    kinds = [decide(S.score(a, Evidence(), L(0.7), S.context(c)))[0] for c in ("mild", "medium", "severe")]
    assert kinds == ["transform", "deny", "deny"]


def test_context_r_values_match_the_published_sweep_for_name_and_contact_data():
    a = act(categories={"identity": 1, "contact": 1})
    R = {c: S.score(a, Evidence(), L(0.7), S.context(c)).R for c in ("mild", "medium", "severe")}
    assert R["mild"] == pytest.approx(0.119, abs=0.01)
    assert R["medium"] == pytest.approx(0.413, abs=0.03)
    assert R["severe"] == pytest.approx(0.909, abs=0.005)


# ----------------------------------------------------------------------------- real users


@pytest.mark.parametrize("lk", [0.05, 0.2, 0.3])
@pytest.mark.parametrize("transparency", ["full", "partial"])
def test_first_party_login_is_not_broken_when_the_policy_covers_it(lk, transparency):
    login = act(categories={"credentials": 1, "identity": 1}, recipient="first_party", purposes=["authentication"],
                basis="user", spans=[span("credentials", True), span("identity", True)])
    r = S.score(login, Evidence(transparency=transparency), L(lk))
    assert decide(r, login) == ("allow", None), r


@pytest.mark.parametrize("lk", [0.2, 0.05, 0.5, 0.9])
@pytest.mark.parametrize("basis", ["background", "default"])
@pytest.mark.parametrize("transparency", ["full", "partial", "none"])
def test_an_ad_pixel_carrying_an_email_never_passes(lk, basis, transparency):
    pixel = act(domain="facebook.com", host="www.facebook.com", categories={"contact": 1}, recipient="ad_network",
                purposes=["advertising"], basis=basis, spans=[span("contact", True)])
    r = S.score(pixel, Evidence(transparency=transparency), L(lk))
    kind, level = decide(r, pixel)
    assert kind in ("transform", "deny")
    if kind == "transform":
        text = explain(pixel, r, kind, None, Evidence(transparency=transparency), level)
        assert "ad network" in text and f"L{level}" in text


def test_tracker_rule_leaves_other_recipients_and_quasi_data_alone():
    r = _risk(0.05)
    analytics = act(categories={"contact": 1}, recipient="analytics", spans=[span("contact", True)])
    assert decide(r, analytics) == ("transform", 1)  # an analytics identify call is a tracker too
    provider = act(categories={"contact": 1}, recipient="service_provider", spans=[span("contact", True)])
    assert decide(r, provider) == ("allow", None)
    org_only = act(categories={"other": 1}, recipient="ad_network", spans=[span("other", False)])
    assert decide(r, org_only) == ("allow", None)
    assert decide(r, org_only, ctx("data_broker", "profiling", "default", "full")) == ("allow", None)
    named = act(categories={"identity": 1}, recipient="first_party", spans=[span("identity", True)])
    assert decide(r, named, ctx("data_broker", "profiling", "default", "full")) == ("transform", 1)


# ----------------------------------------------------------------------------- explanation and overrides


def test_explanation_names_data_recipient_purpose_basis_policy_and_threshold():
    a = act(categories={"financial": 1})
    r = S.score(a, Evidence(transparency="vague"), L(0.7))
    kind, level = decide(r, a)
    text = explain(a, r, kind, None, Evidence(transparency="vague"), level)
    assert text == ("financial data to an ad network for profiling in a background request; policy vague → "
                    "R 0.91 ≥ deny floor 0.55 (critical tier)")
    m = act(categories={"contact": 1, "identity": 2}, recipient="service_provider", purposes=["analytics"],
            basis="default")
    r = S.score(m, Evidence(transparency="partial"), L(0.7))
    kind, level = decide(r, m)
    text = explain(m, r, kind, None, Evidence(transparency="partial"), level)
    assert text.startswith("contact and identity data to a service provider for analytics in a request the page")
    assert f"→ rewrite from L{level}" in text and "in the rewrite band (0.15–0.60)" in text


def test_login_and_ad_pixel_through_the_real_gateway(tmp_path):
    """The same two cases as requests: extraction finds recipient, purpose and basis from the wire."""
    import json

    from guardian_proxy.config import load_settings
    from guardian_proxy.pipeline import Gateway
    from guardian_proxy.types import RawRequest

    gw = Gateway.from_settings(load_settings(None, state_dir=tmp_path, detector={"ner": False}), with_log=False)
    login = RawRequest(method="POST", url="https://accounts.shop-example.com/login",
                       body=json.dumps({"email": "jane.doe@mail.com", "password": "hunter2!Secret"}).encode(),
                       headers=[("content-type", "application/json"), ("origin", "https://www.shop-example.com"),
                                ("sec-fetch-site", "same-site"), ("sec-fetch-mode", "cors"), ("sec-fetch-user", "?1")])
    d = gw.evaluate(login, likelihood=0.2)
    assert (d.six.recipient, d.six.purposes, d.six.basis) == ("first_party", ["authentication"], "user")
    assert d.action == "allow" and d.risk.tier == "critical", d.explanation
    pixel = RawRequest(method="GET", url="https://www.facebook.com/tr?id=1&ev=PageView&ud[em]=jane.doe@mail.com",
                       headers=[("referer", "https://www.shop-example.com/"), ("sec-fetch-dest", "image"),
                                ("sec-fetch-mode", "no-cors")])
    for lk in (0.05, 0.3, 0.9):
        d = gw.evaluate(pixel, likelihood=lk)
        assert d.six.recipient == "ad_network" and d.action != "allow", d.explanation
        if d.action == "transform":  # the e-mail in the query string is rewritten
            assert d.rewrite.url is not None and "jane.doe" not in d.rewrite.url, d.rewrite.url


# ----------------------------------------------------------------------------- stated rules on top of the thresholds


def test_identifiers_never_reach_any_tracker_as_they_are():
    for rec in ("analytics", "ad_network", "data_broker", "social"):
        a = act(categories={"contact": 1}, recipient=rec, purposes=["analytics"], basis="background",
                spans=[Span(path="q:", start=0, end=3, entity="EMAIL_ADDRESS", category="contact", text="a@b")])
        r = S.score(a, Evidence(transparency="full"), L(0.01))
        assert r.R <= r.allow_ceiling and decide(r, a) == ("transform", 1), rec
    sp = act(categories={"contact": 1}, recipient="service_provider", purposes=["functionality"], basis="default")
    r = S.score(sp, Evidence(transparency="full"), L(0.01))
    assert decide(r, sp) == ("allow", None)


def test_pseudonymous_measurement_has_no_rewrite_band():
    spans = [Span(path="q:cid", start=0, end=5, entity="DEVICE_ID", category="device_id", text="1.234"),
             Span(path="q:dl", start=0, end=5, entity="BROWSING_ACTIVITY", category="behavioural", text="https"),
             Span(path="q:uid", start=0, end=36, entity="USER_ID", category="identity",
                  text="0c2e4a6b-8d0f-4a2c-9e6b-1f3a5c7e9b0d")]
    a = act(categories={"device_id": 1, "behavioural": 1, "identity": 1}, recipient="analytics",
            purposes=["analytics"], basis="background", spans=spans)
    r = S.score(a, Evidence(transparency="partial"), L(0.5))
    assert r.allow_ceiling < r.R < r.deny_floor
    assert decide(r, a) == ("allow", None)
    assert "only pseudonymous" in explain(a, r, "allow", None, Evidence(transparency="partial"), None)
    # an account number or an e-mail is not pseudonymous: the band applies again
    named = a.model_copy(update={"spans": spans[:2] + [spans[2].model_copy(update={"text": "99102"})]})
    assert decide(S.score(named, Evidence(transparency="partial"), L(0.5)), named)[0] == "transform"


def test_a_prompt_to_an_ai_service_is_rewritten_not_blocked():
    a = act(categories={"health": 1, "identity": 1}, recipient="ai_service", purposes=["ai_processing"], basis="user")
    r = S.score(a, Evidence(), L(0.9))
    assert r.R >= r.deny_floor
    assert decide(r, a) == ("transform", 4)
    assert "rewritten, not blocked" in explain(a, r, "transform", None, Evidence(), 4)
    assert decide(r, a.model_copy(update={"basis": "background"})) == ("deny", None)  # telemetry is not a prompt


def test_stated_rule_names_the_rule_that_changed_the_outcome():
    from guardian_proxy.risk import stated_rule

    assert stated_rule(_risk(0.05), "transform") == "tracker-identifiers"
    assert stated_rule(_risk(0.90), "transform") == "ai-prompt"
    assert stated_rule(_risk(0.30), "allow") == "pseudonymous"
    assert stated_rule(_risk(0.30), "transform") is None and stated_rule(_risk(0.05), "allow") is None
