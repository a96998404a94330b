"""The Gateway: wires the seven stages of DESIGN.md and owns no logic of its own.

    1 extract    RawRequest → Action                (guardian_proxy.extract)
    2 evidence   Action → Evidence                  (guardian_proxy.policy)
    3 likelihood (Action, Evidence) → Likelihood    (guardian_proxy.likelihood)
    4 risk       → Risk                             (guardian_proxy.risk.RiskScorer)
    5 decide     → allow | transform(level) | deny  (guardian_proxy.risk.decide, overrides)
    6 transform  → Rewrite, final level, rounds     (guardian_proxy.anonymize)
    7 session    chat conversations (guardian_proxy.session), when present

Each stage is an object with one method, injected through the constructor, so a test can pass a
fake and `Gateway.from_settings` builds the real ones.
"""

from __future__ import annotations

import logging
import time
from typing import Protocol

from . import risk as risk_mod
from .bodies import BodyLimits
from .config import FactorTables, Settings, load_factor_tables
from .decision_log import DecisionLog, record
from .types import CATEGORIES, Action, Context, Decision, Evidence, Likelihood, RawRequest, Rewrite

log = logging.getLogger("guardian_proxy")

HIGH_RISK_RECIPIENTS = ("ad_network", "data_broker")


class ExtractStage(Protocol):
    def extract(self, req: RawRequest) -> Action: ...


class EvidenceStage(Protocol):
    def retrieve(self, action: Action) -> Evidence: ...


class LikelihoodStage(Protocol):
    def estimate(self, action: Action, evidence: Evidence) -> Likelihood: ...


class TransformStage(Protocol):
    def transform(self, req: RawRequest, action: Action, level: int) -> tuple[Rewrite, int, int]: ...


class Gateway:
    def __init__(self, settings: Settings, tables: FactorTables, extractor: ExtractStage, evidence: EvidenceStage,
                 likelihood: LikelihoodStage, transformer: TransformStage, decision_log: DecisionLog | None = None):
        self.settings = settings
        self.tables = tables
        self.extractor = extractor
        self.evidence = evidence
        self.likelihood = likelihood
        self.scorer = risk_mod.RiskScorer(tables)
        self.transformer = transformer
        self.decision_log = decision_log

    @classmethod
    def from_settings(cls, settings: Settings, with_log: bool = True) -> Gateway:
        from .anonymize import Transformer
        from .extract import Extractor
        from .extract.detector import Detector
        from .likelihood import FixedLikelihood
        from .policy import EvidenceStage as PolicyEvidence

        tables = load_factor_tables(settings.factor_tables_dir)
        d = settings.detector
        lim = settings.limits
        extractor = Extractor(
            Detector(d.spacy_model, ner=d.ner, min_score=d.min_score),
            BodyLimits(lim.max_body_bytes, lim.max_decoded_bytes, lim.max_json_depth, lim.max_field_chars),
        )
        dlog = DecisionLog(settings.decision_log) if with_log else None
        return cls(settings, tables, extractor, PolicyEvidence(), FixedLikelihood(settings.likelihood.fixed_value),
                   Transformer(), dlog)

    def warm_up(self) -> None:
        """Load models now rather than on the first request."""
        self.evaluate(RawRequest(method="POST", url="http://warmup.invalid/", body=b"warm up John Smith",
                                 headers=[("content-type", "text/plain")]), log=False)

    # ------------------------------------------------------------------ evaluate

    def evaluate(self, req: RawRequest, context: str | None = None, likelihood: float | None = None,
                 log: bool = True) -> Decision:
        t0 = time.perf_counter()
        ctx: Context | None = self.scorer.context(context) if context else None
        action = self.extractor.extract(req)
        decision = self._decide(req, action, ctx, likelihood)
        decision.latency_ms = (time.perf_counter() - t0) * 1000
        if log and self.decision_log is not None:
            self.decision_log.write(record(req, decision))
        return decision

    def failure_decision(self, req: RawRequest, exc: BaseException) -> Decision:
        """A stage raised: requests with a body fail closed (blocked), bodyless ones fail open; logged."""
        from .domains import registrable_domain

        kind = "deny" if req.body else "allow"
        action = Action(domain=registrable_domain(req.host), host=req.host, flags=["error"])
        d = Decision(action=kind, six=action, rule=f"error-fail-{'closed' if kind == 'deny' else 'open'}",
                     explanation=f"internal error ({type(exc).__name__}); {'blocked' if kind == 'deny' else 'passed'} by rule")
        if self.decision_log is not None:
            self.decision_log.write(record(req, d))
        return d

    def _decide(self, req: RawRequest, action: Action, ctx: Context | None, fixed_l: float | None) -> Decision:
        personal = {c: n for c, n in action.categories.items() if n > 0 and c in CATEGORIES}
        unreadable = {"unparsed", "too_large", "binary"} & set(action.flags)
        if unreadable:
            action.categories.setdefault("unparsed", 1)
        high_risk = (ctx.recipient if ctx else action.recipient) in HIGH_RISK_RECIPIENTS
        if unreadable and not personal and high_risk and self.settings.unparsed_rule == "block_high_risk":
            return Decision(action="deny", six=action, rule="unparsed-high-risk",
                            explanation=f"body could not be inspected ({', '.join(sorted(unreadable))}) and the "
                                        f"destination is {action.recipient.replace('_', ' ')}: blocked by rule")
        if not personal:
            reason = "no personal data found"
            if unreadable:
                reason = f"body not inspected ({', '.join(sorted(unreadable))}); passed by rule"
            return Decision(action="allow", six=action, rule="no-personal-data" if not unreadable else "unparsed-pass",
                            explanation=reason)

        override = risk_mod.find_override(self.settings.overrides, action)
        evidence = self.evidence.retrieve(action)
        lk = Likelihood(value=fixed_l, path="fixed", reason="fixed by caller") if fixed_l is not None else \
            self.likelihood.estimate(action, evidence)
        r = self.scorer.score(action, evidence, lk, ctx)
        kind, level = risk_mod.decide(r)
        explanation = risk_mod.explain(action, r, kind, ctx, evidence, level)
        override_text = None
        if override is not None:
            override_text = risk_mod.describe_override(override)
            kind = "transform" if override.action == "level" else override.action
            level = override.level if override.action == "level" else None
            explanation = f"override: {override_text} ({explanation})"
        d = Decision(action=kind, six=action, evidence=evidence, likelihood=lk, risk=r, start_level=level,
                     explanation=explanation, override=override_text)
        if kind == "transform":
            d.rewrite, d.final_level, d.rounds = self.transformer.transform(req, action, level)
        return d
