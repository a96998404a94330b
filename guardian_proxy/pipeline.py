"""The Gateway: wires the seven stages (docs/design/request-path.md) and owns no logic of its own.

    1 extract    RawRequest → Action                (guardian_proxy.extract)
    2 evidence   Action → Evidence                  (guardian_proxy.policy)
    3 likelihood (Action, Evidence) → Likelihood    (guardian_proxy.likelihood)
    4 risk       → Risk                             (guardian_proxy.risk.RiskScorer)
    5 decide     → allow | transform(level) | deny  (guardian_proxy.risk.decide, overrides)
    6 transform  → Rewrite, final level, rounds     (guardian_proxy.anonymize)
    7 session    a chat request (guardian_proxy.session): the stated rules and stages 2–4 as above, then decided
                 once by its conversation session instead of 5–6 (`SessionStage.decide`, R-CHAT-SESSION), the
                 agent stage's guidance added (guardian_proxy.agents)

Each stage is an object with one method, injected through the constructor, so a test can pass a
fake and `Gateway.from_settings` builds the real ones.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Protocol

from . import codec
from . import risk as risk_mod
from .bodies import BodyLimits
from .bodies.files import known_binary
from .bodies.headers import carries_text
from .config import FactorTables, Settings, load_factor_tables
from .decision_log import DecisionLog
from .errors import GuardianError
from .evaluator import Ticket, write_line
from .failure import FailureRules, StageFailed, run_stage
from .flow_norms import FlowNorms
from .fragments import FragmentWindow
from .overrides import OverrideStore, apply_override, find_override, is_preflight
from .types import (
    HOST_PATH,
    TRACKER_CLASSES,
    Action,
    Context,
    Decision,
    Evidence,
    Likelihood,
    RawRequest,
    Rewrite,
    Verdict,
)

log = logging.getLogger("guardian_proxy")

#: recipients an unreadable body never reaches (`unparsed_rule: block_high_risk`): the trackers — what a session
#: replay or analytics SDK packs into a binary frame is what it captured of the page
HIGH_RISK_RECIPIENTS = TRACKER_CLASSES
#: recipients an unreadable body also never reaches unless it is a file of a known format (an image, a video, an
#: archive, a PDF): parties with no role in the user's own flows, for whom a body that could hold anything fails
#: closed (R-UNREAD-CLOSED)
UNREAD_CLOSED = ("unknown_third_party", "ai_service")
#: binary bodies of Internet protocols a client speaks to any server (certificate status and time-stamping, DNS over
#: HTTPS): their structure is the protocol's, not a place for page data
PROTOCOL_BINARY_TYPES = ("application/ocsp-request", "application/timestamp-query", "application/pkix-",
                         "application/pkcs", "application/dns-message")
#: URL schemes of raw connections the proxy decides (not HTTP: guardian_proxy/mitm/rawstreams.py)
RAW_SCHEMES = ("tcp", "udp")


class ExtractStage(Protocol):
    def extract(self, req: RawRequest) -> Action: ...


class EvidenceStage(Protocol):
    def retrieve(self, action: Action) -> Evidence: ...


class LikelihoodStage(Protocol):
    def estimate(self, action: Action, evidence: Evidence) -> Likelihood: ...


class TransformStage(Protocol):
    def transform(self, req: RawRequest, action: Action, level: int) -> tuple[Rewrite, int, int]: ...


def compressed_as_sent(req: RawRequest, d: Decision, limit: int) -> Decision:
    """A rewritten body goes back in the compression the client sent it in when no Content-Encoding header said so
    (`codec.as_sent`: a sniffed gzip, zstd, zlib or brotli body, byte for byte when nothing changed). Done here, in
    the evaluation, before a signed request is signed again over the bytes that will leave. A new decision."""
    rw = d.rewrite
    if rw.body is None:
        return d
    body = codec.as_sent(req.body, req.header("content-encoding"), rw.body, limit)
    return d.model_copy(update={"rewrite": rw.model_copy(update={"body": body})})


def resign(req: RawRequest, d: Decision) -> Decision:
    """A rewritten request that was signed (AWS SigV4) is signed again with the user's credentials (botocore's
    standard chain), else blocked by rule (`signed-request`): a request with a broken signature would only be
    refused by the service, after its data had left."""
    if not (req.header("authorization") or "").startswith("AWS4-HMAC-SHA256"):
        return d
    from . import sigv4  # botocore: imported only for a signed request
    rw = d.rewrite
    gone = {h.lower() for h in rw.remove_headers} | {h.lower() for h in rw.set_headers}
    headers = [(k, v) for k, v in req.headers if k.lower() not in gone] + list(rw.set_headers.items())
    try:
        signed = sigv4.resign(req.method, rw.url or req.url, headers, rw.body if rw.body is not None else req.body)
    except sigv4.CannotResign as e:
        return d.model_copy(update={
            "action": "deny", "rewrite": None, "rule": "signed-request",
            "explanation": f"{d.explanation}; blocked: the request is signed (AWS SigV4) and a rewritten copy cannot "
                           f"be signed again: {e}"})
    return d.model_copy(update={"rewrite": rw.model_copy(update={"set_headers": {**rw.set_headers, **signed}})})


def unread_blocked(req: RawRequest, action: Action, recipient: str) -> bool:
    """The unparsed rule: a body that was not inspected in full (binary of unknown meaning, unparseable text, or
    past the size limits) is blocked toward trackers; toward an unknown third party or an AI service as well (when
    it was not read at all, or only in part: a cut-off JSON whose literals were all read counts as read), unless
    it is a file of a known binary format, the destination has a role in the user's flows (payment, sign-in,
    platform), or it is a raw TCP/UDP stream or a WebSocket message (binary protocols by nature — msgpack, protobuf,
    game and market feeds; only trackers are refused there)."""
    if recipient in HIGH_RISK_RECIPIENTS:
        return True
    if recipient not in UNREAD_CLOSED or action.role or req.scheme in RAW_SCHEMES or req.websocket:
        return False
    parsed = action._parsed
    if getattr(parsed, "data", None) is not None and not {"too_large", "depth_limit"} & set(action.flags):
        return False  # text that does not parse but whose every literal was read (cut-off JSON): inspected
    ctype = (req.header("content-type") or "").split(";")[0].strip().lower()
    # judged on the decoded bytes: a gzip stream is a compressed body, not a file of that format
    data = getattr(parsed, "decoded", None)
    if data is None:
        data = getattr(parsed, "head", None)
    if data is None and not req.header("content-encoding"):
        data = req.body
    return not ((data is not None and known_binary(data[:64])) or ctype.startswith(PROTOCOL_BINARY_TYPES))


def unwritable(req: RawRequest, action: Action) -> tuple[str, str] | None:
    """(rule, why) when a rewrite of this request cannot be put where its values sit: raw TCP/UDP bytes have no
    format to rewrite in, and a host name cannot change without changing where the request goes."""
    if req.scheme in RAW_SCHEMES:
        return "raw-stream-data", f"raw {req.scheme.upper()} bytes have no format to rewrite in, so the connection " \
                                  "is closed"
    if any(sp.path == HOST_PATH for sp in action.spans):
        return "host-name-data", "personal data is spelled into the host name, which cannot be rewritten without " \
                                 "changing where the request goes"
    return None


#: flags that say who addressed the destination (extract.addressee), not that something went wrong in extraction
WHO_FLAGS = frozenset({"no_page", "addressed"})


class _OnFirstUse:
    """A stage built the first time it is used (`Gateway.from_settings(models=False)`)."""

    def __init__(self, build):
        self._build, self._stage, self._lock = build, None, threading.Lock()

    def _get(self):
        with self._lock:
            if self._stage is None:
                self._stage = self._build()
        return self._stage

    def estimate(self, *args, **kwargs):
        return self._get().estimate(*args, **kwargs)

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._get(), name)


class Gateway:
    def __init__(self, settings: Settings, tables: FactorTables, extractor: ExtractStage, evidence: EvidenceStage,
                 likelihood: LikelihoodStage, transformer: TransformStage, decision_log: DecisionLog | None = None,
                 overrides: OverrideStore | None = None, session=None, agents=None):
        self.settings = settings
        self.tables = tables
        self.extractor = extractor
        self.evidence = evidence
        self.likelihood = likelihood
        self.scorer = risk_mod.RiskScorer(tables)
        self.norms = FlowNorms(tables)  # norms of the flow (factor_tables/norms.yaml)
        self.transformer = transformer
        self.decision_log = decision_log
        # user overrides: the config's plus <state_dir>/overrides.yaml, re-read when it changes
        self.overrides = overrides if overrides is not None else OverrideStore(None, settings.overrides)
        self.failures = FailureRules(tables)  # per-tier fail modes (guardian_proxy/failure.py)
        self.session = session  # stage 7 (guardian_proxy.session.SessionStage) or None
        self.agents = agents  # agent steps of chat requests (guardian_proxy.agents.AgentStage) or None
        self.fragments = FragmentWindow(settings)  # per-destination window of split values (shared: fragments.py)

    @classmethod
    def from_settings(cls, settings: Settings, with_log: bool = True, models: bool = True) -> Gateway:
        """`models=False`: the proxy process when worker processes evaluate (guardian_proxy/workers.py). Its
        event-loop fast path decides only requests with nothing personal, which never reach stage 3, so the
        likelihood model (torch: ~200 MB RSS, ~1 s CPU) is built on first use, not at start; the workers build it
        at start and report a bad model file there."""
        from .agents import AgentStage, ExperienceLog
        from .anonymize import Transformer
        from .extract import Extractor
        from .extract.detector import Detector
        from .likelihood import make_stage as make_likelihood
        from .llm import make_backend
        from .policy import EvidenceStage as PolicyEvidence
        from .session import SessionStage

        tables = load_factor_tables(settings.factor_tables_dir)
        d = settings.detector
        lim = settings.limits
        extractor = Extractor(
            Detector(d.spacy_model, ner=d.ner, min_score=d.min_score, max_ner_chars=lim.max_analysed_chars,
                     spacy_disable=tuple(d.spacy_disable)),
            BodyLimits(lim.max_body_bytes, lim.max_decoded_bytes, lim.max_json_depth, lim.max_field_chars),
            # the CNAME chain comes with the request (RawRequest.canonical_host: the proxy's own DNS answer)
        )
        dlog = DecisionLog(settings.decision_log, settings.log_max_bytes, settings.log_backups,
                           settings.log_retention_days) if with_log else None
        if dlog is not None:  # the fleet's view of each written line (redis; local: the log is the feed)
            from .state import feed_for

            dlog.feed = feed_for(settings)
        from .resources import policies_dir

        evidence = PolicyEvidence.for_settings(settings, policies_dir())
        llm = make_backend(settings.llm)  # one back end, shared by the likelihood slow path and the anonymizer
        likelihood = make_likelihood(settings, llm) if models else _OnFirstUse(lambda: make_likelihood(settings, llm))
        return cls(settings, tables, extractor, evidence, likelihood,
                   Transformer(settings.anonymize, detect=extractor.detector.detect, llm=llm),
                   dlog, OverrideStore.for_settings(settings),
                   session=SessionStage(settings, tables, detect=extractor.detector.detect),
                   agents=AgentStage(settings.agents, ExperienceLog(settings.state_dir / "experience")
                                     if settings.agents.experience_log else None, llm=llm,
                                     llm_timeout=settings.llm.timeout_s))

    def warm_up(self, models: bool = True) -> None:
        """Load models now rather than on the first request; `models=False` (the proxy process when worker
        processes evaluate: guardian_proxy/workers.py) only the pattern path of the event loop's fast path."""
        if not models:
            self.extractor.extract(RawRequest(method="GET", url="http://warmup.invalid/"))
            return
        self.evaluate(RawRequest(method="POST", url="http://warmup.invalid/", body=b"warm up John Smith",
                                 headers=[("content-type", "text/plain")]), log=False)

    # ------------------------------------------------------------------ learning policies while browsing

    _POLICY_TYPES = ("text/html", "application/xhtml", "text/plain", "text/markdown")

    def wants_policy(self, url: str, content_type: str | None) -> bool:
        """Cheap test (event loop): could this response be a privacy-policy page worth ingesting?"""
        wants = getattr(self.evidence, "wants", None)
        ctype = (content_type or "").lower()
        return bool(self.settings.learn_policies and wants is not None and ctype.startswith(self._POLICY_TYPES)
                    and wants(url))

    def learn_policy(self, url: str, content_type: str | None, text: str):
        """Stage 2 ingests a privacy-policy page into the user store (`learn_policies`, on by default).
        Called on a thread pool of the mitm edge (mitm/learning.py), never on the event loop; never raises."""
        learn = getattr(self.evidence, "learn", None)
        if not self.settings.learn_policies or learn is None:
            return None
        try:
            return learn(url, content_type, text)
        except Exception:  # learning is best effort: a bad page never affects traffic
            log.exception("policy learning failed for %s", url.split("/")[2] if "//" in url else "?")
            return None

    # ------------------------------------------------------------------ evaluate

    def evaluate(self, req: RawRequest, context: str | None = None, likelihood: float | None = None,
                 log: bool = True, ticket: Ticket | None = None) -> Decision:
        """The stages for one request, in the calling thread: the synchronous in-process entry (the CLI, the
        benchmarks, a worker process, the evaluator's threads with `log=False`; guardian_proxy/evaluator.py decides
        where a proxied request is evaluated). A `ticket` carries an extraction done already (the event loop's fast
        path) and takes this one's, for the fail rules at a deadline. With `log`, the decision's line
        (`evaluator.write_line`). Never raises for a stage failure: it becomes the tier's fail mode
        (guardian_proxy/failure.py)."""
        t0 = time.perf_counter()
        ctx: Context | None = self.scorer.context(context) if context else None
        action: Action | None = None
        try:
            done = ticket.action if ticket is not None else None  # extracted already by `evaluate_inline`
            action = done if done is not None else run_stage("extract", self.extractor.extract, req)
            if "extract_error" in action.flags:  # the extractor caught its own failure: tier unknown
                raise StageFailed("extract", GuardianError("the extractor failed on this request"))
            if ticket is not None:
                ticket.action = action
            if ctx is None:  # values split across requests (fragments.py): the completing half carries the value
                run_stage("extract", self.fragments.check, req, action)
            # stage 7: a chat-API request is decided once, by its conversation session instead of stages 5–6
            chat = run_stage("session", self.session.recognise, req, action) if self.session and ctx is None else None
            if chat is not None:
                decision = self._decide_chat(req, action, chat, likelihood)
            else:
                decision = run_stage("decide", self._decide, req, action, ctx, likelihood)
            if decision.action == "transform" and decision.rewrite is not None:
                decision = run_stage("decide", compressed_as_sent, req, decision, self.settings.limits.max_decoded_bytes)
                decision = run_stage("decide", resign, req, decision)
        except StageFailed as f:
            decision = self.failures.decision(req, f.stage, f.cause, action)
            if f.stage == "session":  # a chat that cannot be pseudonymised does not leave (stated rule)
                decision = self.session.fail_closed(decision)
        update: dict = {"latency_ms": (time.perf_counter() - t0) * 1000}
        if req.claimed_host and "host_mismatch" in decision.six.flags:
            update["explanation"] = f"{decision.explanation}; its Host header names another host: decided on where " \
                                    "it really goes"
        decision = decision.model_copy(update=update)
        if log:
            decision = write_line(self, req, decision, ticket)
        return decision

    def chat_response(self, meta: dict, body: bytes, content_type: str | None) -> bytes | None:
        """Stage 7 on a whole chat response (decoded): the reply filter's whole-body reader (`reply.read_whole`:
        de-masked, then the agent guard on the tool calls it proposes); None to leave it."""
        from .session.reply import read_whole

        return read_whole(self.session, meta, content_type, body, self.agents)

    @staticmethod
    def inline_ok(req: RawRequest) -> bool:
        """No body, no query string, no cookie, no header that can hold free text: the only text is the URL path
        (and a Referer), which extraction scans with patterns (no NER): cheap enough to try on the event loop
        (`evaluate_inline`)."""
        return not req.body and "?" not in req.url and req.cookie is None and not carries_text(req.headers)

    def evaluate_inline(self, req: RawRequest, ticket: Ticket | None = None) -> Decision | None:
        """The event loop's fast path (guardian_proxy/evaluator.py): an `inline_ok` request with nothing personal
        in it is decided here (tens of µs; not logged: the evaluator writes the line); anything else (personal data
        in the path, an extraction problem) returns None, its extraction kept on the `ticket` for the thread or
        worker that goes on from it. Never raises."""
        if not self.inline_ok(req):
            return None
        t0 = time.perf_counter()
        try:
            action = self.extractor.extract(req)
            if set(action.flags) - WHO_FLAGS or action.personal():
                if ticket is not None:
                    ticket.action = action  # the thread or worker goes on from this extraction
                return None
            decision = self._decide(req, action, None, None)
        except Exception:
            return None
        decision.latency_ms = (time.perf_counter() - t0) * 1000
        return decision

    def _decide(self, req: RawRequest, action: Action, ctx: Context | None, fixed_l: float | None) -> Decision:
        """Stages 2–6 on a request that is not a chat (a chat: `_decide_chat`)."""
        override = self._override(req, action)
        ruled = self._by_rule(req, action, ctx, override)
        if ruled is not None:
            return Decision(six=action, **ruled)
        v = self._verdict(req, action, ctx, fixed_l, override)
        extra: dict = {"norm": v.norm} if v.norm is not None else {}
        rewrite, final, rounds = None, None, 0
        if v.kind == "transform":
            rewrite, final, rounds = run_stage("transform", self.transformer.transform, req, action, v.level)
            extra["anonymize"] = rewrite.stats  # levels, rounds, counts: no values
        return Decision(action=v.kind, six=action, evidence=v.evidence, likelihood=v.likelihood, risk=v.risk,
                        start_level=v.level, final_level=final, rounds=rounds, explanation=v.explanation,
                        override=v.override, rule=v.rule, rewrite=rewrite, extra=extra)

    def _decide_chat(self, req: RawRequest, action: Action, chat, fixed_l: float | None) -> Decision:
        """A chat request, decided once by the session stage (stage 7, R-CHAT-SESSION) from what the stated rules
        and stages 2–5 found; a user override that allows or blocks it decides it instead (R-OVERRIDE: the user's
        explicit rule for the destination wins). The agent stage then adds its guidance to the body that will
        leave (a new Decision)."""
        extra = {"chat_api": chat.kind}
        override = run_stage("decide", self._override, req, action)
        ruled = run_stage("decide", self._by_rule, req, action, None, override)
        if ruled is not None and ruled.get("override"):
            return Decision(six=action, extra=extra, **ruled)
        v = None if ruled is not None else run_stage("decide", self._verdict, req, action, None, fixed_l, override)
        if v is not None and v.override and v.kind in ("allow", "deny"):
            return Decision(action=v.kind, six=action, evidence=v.evidence, likelihood=v.likelihood, risk=v.risk,
                            start_level=v.level, explanation=v.explanation, override=v.override, rule=v.rule,
                            extra={**({"norm": v.norm} if v.norm is not None else {}), **extra})
        decision = run_stage("session", self.session.decide, req, chat, action, v)
        if self.agents is not None:
            decision = run_stage("agents", self.agents.apply, req, chat, decision)
        return decision

    def _override(self, req: RawRequest, action: Action):
        """The user override for this request, looked up (and a once rule spent) once."""
        return find_override(self.overrides.current(), action, req.app, spend=not is_preflight(req))

    def _by_rule(self, req: RawRequest, action: Action, ctx: Context | None, override) -> dict | None:
        """What a stated rule that needs no scoring decides (R-OVERRIDE for a request with nothing personal,
        R-RAW-TRACKER, R-UNREAD-CLOSED, R-NO-PERSONAL-DATA, R-UNREAD-PASS): the Decision's action, rule,
        explanation (and override), or None."""
        personal = action.personal()
        unreadable = action.unreadable()
        if unreadable:
            action.categories.setdefault("unparsed", 1)
        recipient = ctx.recipient if ctx else action.recipient
        high_risk = recipient in HIGH_RISK_RECIPIENTS
        if override is not None and not personal and override.action != "level":
            kind, _, explanation, text = apply_override(override, "no personal data found")
            return {"action": kind, "rule": "override", "explanation": explanation, "override": text}
        if req.scheme in RAW_SCHEMES and high_risk and override is None:
            return {"action": "deny", "rule": "raw-stream-tracker",
                    "explanation": f"a raw {req.scheme.upper()} connection (not HTTP) to "
                                   f"{recipient.replace('_', ' ')}: blocked by rule"}
        if unreadable and self.settings.unparsed_rule == "block_high_risk" and \
                (override is None or override.action != "allow") and unread_blocked(req, action, recipient):
            what = "a tracker" if high_risk else f"{recipient.replace('_', ' ')} with no role in your own flows"
            return {"action": "deny", "rule": "unparsed-high-risk",
                    "explanation": f"body could not be inspected in full ({', '.join(sorted(unreadable))}) and the "
                                   f"destination is {what}: blocked by rule (it could hold anything)"}
        if not personal:
            reason = "no personal data found"
            if unreadable:
                reason = f"body not inspected ({', '.join(sorted(unreadable))}); passed by rule"
            return {"action": "allow", "rule": "no-personal-data" if not unreadable else "unparsed-pass",
                    "explanation": reason}
        return None

    def _verdict(self, req: RawRequest, action: Action, ctx: Context | None, fixed_l: float | None,
                 override) -> Verdict:
        """Stages 2–5 on a request with personal data: evidence, likelihood, risk and what they decide."""
        evidence = run_stage("evidence", self.evidence.retrieve, action)
        norm = self.norms.match(action) if ctx is None else None
        if fixed_l is not None:
            lk = Likelihood(value=fixed_l, path="fixed", reason="fixed by caller")
        elif norm is not None:  # the service's own function, started by the user: the policy's silence is no evidence
            lk = Likelihood(value=norm.L, path="norm", reason=f"norm of the flow ({norm.name}): {norm.says}")
        else:
            lk = run_stage("likelihood", self.likelihood.estimate, action, evidence)
        r = run_stage("risk", self.scorer.score, action, evidence, lk, ctx)
        kind, level = risk_mod.decide(r, action, ctx)
        explanation = risk_mod.explain(action, r, kind, ctx, evidence, level, norm.says if norm else None)
        override_text = None
        if override is not None:
            kind, level, explanation, override_text = apply_override(override, explanation)
        rule = None if override is not None else risk_mod.stated_rule(r, kind)
        stuck = unwritable(req, action) if kind == "transform" else None
        if stuck is not None:  # a rewrite that cannot be put where the values sit blocks instead (R-RAW-DATA, R-HOST-DATA)
            kind, rule, explanation = "deny", stuck[0], f"{explanation}; blocked: {stuck[1]}"
        return Verdict(evidence=evidence, likelihood=lk, risk=r, kind=kind, level=level, explanation=explanation,
                       override=override_text, rule=rule, norm=norm.name if norm is not None else None)
