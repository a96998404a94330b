"""Pydantic models that travel between the pipeline stages.

Stages never import each other; everything they exchange is defined here. Raw personal values
live only in `TextField.text` and `Span.text` (memory only); `Decision.log_record()` is the one
place a decision becomes a log line and it never copies them.
"""

from __future__ import annotations

import time
import uuid
from enum import IntEnum
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

#: Sensitivity categories shared by extraction, policy evidence and the factor tables.
CATEGORIES: tuple[str, ...] = (
    "credentials",
    "health",
    "financial",
    "government_id",
    "precise_location",
    "contact",
    "identity",
    "demographic",
    "behavioural",
    "device_id",
    "cookie",
    "other",
)
RECIPIENT_CLASSES: tuple[str, ...] = (
    "first_party",
    "service_provider",
    "analytics",
    "ad_network",
    "social",
    "data_broker",
    "ai_service",
    "unknown_third_party",
)
#: roles a destination can have in the user's own flows (guardian_proxy/data/services.yaml)
ROLES: tuple[str, ...] = ("identity_provider", "payment_processor", "platform", "account_protocol")
#: recipient classes whose business is tracking (basis and purpose inference treat them alike)
TRACKER_CLASSES: tuple[str, ...] = ("analytics", "ad_network", "data_broker", "social")
PURPOSES: tuple[str, ...] = (
    "functionality",
    "authentication",
    "payment",
    "analytics",
    "advertising",
    "profiling",
    "personalization",
    "security",
    "ai_processing",
    "unknown",
)
#: Entity labels that travel in `Span.entity`: label → (category, direct identifier?). Presidio's labels
#: plus the project's own recognizers. Quasi-identifiers (direct=False) are generalized at L3+.
ENTITIES: dict[str, tuple[str, bool]] = {
    "PERSON": ("identity", True),
    "USERNAME": ("identity", True),
    "EMAIL_ADDRESS": ("contact", True),
    "HASHED_IDENTIFIER": ("contact", True),  # an MD5/SHA digest sent to ad tech: a hashed e-mail or phone match key
    "PHONE_NUMBER": ("contact", True),
    "STREET_ADDRESS": ("precise_location", True),
    "LATLONG": ("precise_location", True),
    "LOCATION": ("demographic", False),
    "NRP": ("demographic", False),
    "AGE": ("demographic", False),
    "DATE_TIME": ("other", False),
    "ORGANIZATION": ("other", False),
    "CASE_NUMBER": ("other", True),
    "AMOUNT": ("financial", False),
    "CREDIT_CARD": ("financial", True),
    "IBAN_CODE": ("financial", True),
    "US_BANK_NUMBER": ("financial", True),
    "ACCOUNT_NUMBER": ("financial", True),
    "CRYPTO": ("financial", True),
    "US_SSN": ("government_id", True),
    "US_ITIN": ("government_id", True),
    "US_PASSPORT": ("government_id", True),
    "US_DRIVER_LICENSE": ("government_id", True),
    "UK_NHS": ("government_id", True),
    "MEDICAL_LICENSE": ("government_id", True),
    "GOVERNMENT_ID": ("government_id", True),
    "MEDICAL_CONDITION": ("health", False),
    "MEDICATION": ("health", False),
    "PASSWORD": ("credentials", True),
    "API_KEY": ("credentials", True),
    "AUTH_TOKEN": ("credentials", True),
    "PRIVATE_KEY": ("credentials", True),
    "SESSION_ID": ("cookie", True),
    "ADVERTISING_ID": ("device_id", True),
    "DEVICE_ID": ("device_id", True),
    "IP_ADDRESS": ("device_id", True),
    "URL": ("other", False),
    "NARRATIVE": ("other", False),
    # field-name context (extract/keys.py): account ids, birth dates, gender, search terms, page views/events
    "USER_ID": ("identity", True),
    "DATE_OF_BIRTH": ("demographic", False),
    "GENDER": ("demographic", False),
    "SEARCH_QUERY": ("behavioural", False),
    "BROWSING_ACTIVITY": ("behavioural", False),
    # narrative quasi-identifiers (extract/narrative.py); DATE is a calendar date/time/year, kept apart from
    # Presidio's noisier DATE_TIME, which the detector skips
    "DATE": ("other", False),
    "QUANTITY": ("other", False),
    "OCCUPATION": ("demographic", False),
    "FAMILY": ("demographic", False),
}
#: whole-field behavioural spans (a page address, an event name, a search term): other spans may sit inside them,
#: and a rewrite replaces only those, never the container itself (an event name is not a person)
CONTAINER_ENTITIES = frozenset({"SEARCH_QUERY", "BROWSING_ACTIVITY"})
BASES: tuple[str, ...] = ("user", "default", "background")
TRANSPARENCY: tuple[str, ...] = ("full", "partial", "vague", "none")
#: Policy statement vocabularies (guardian_proxy.policy; OPP-115 categories guide them).
PRACTICES: tuple[str, ...] = ("collect", "use", "share", "sell", "retain", "delete", "protect", "choice")
CONDITIONS: tuple[str, ...] = ("opt-in", "opt-out", "legal requirement", "aggregated/de-identified")

ActionKind = Literal["allow", "transform", "deny"]
LPath = Literal["fast", "slow", "fallback", "fixed", "norm"]


class Level(IntEnum):
    """Anonymization levels (see guardian_proxy.anonymize)."""

    L1 = 1  # partial masking
    L2 = 2  # typed placeholders
    L3 = 3  # generalization of quasi-identifiers + L2
    L4 = 4  # minimal-edit rewrite with surrogates
    L5 = 5  # semantic rewrite (escalation ceiling only)


class RawRequest(BaseModel):
    """An outbound HTTP request as the proxy saw it (wire bytes, nothing decoded yet)."""

    model_config = ConfigDict(frozen=True)

    method: str
    url: str
    headers: list[tuple[str, str]] = Field(default_factory=list)
    body: bytes = b""
    client: str | None = None
    #: one client→server WebSocket message: the connection's id (the body is the message, the URL and headers
    #: are the handshake's); None for an HTTP request
    websocket: str | None = None
    #: the name the Host header (or HTTP/2 :authority) claims when it is not where the request goes (`url`'s host
    #: is the real destination: guardian_proxy.addon.destination); None when they agree
    claimed_host: str | None = None
    #: the last name of the CNAME chain of the proxy's own DNS answer for the host (guardian_proxy/dns_answer.py),
    #: None when there is none or it was not asked
    canonical_host: str | None = None
    #: the program that sent it (guardian_proxy/procinfo.py, `App.record()`): {"name", "pid", "exe", "kind"}, or
    #: {"name": "remote"} / {"name": "unknown", "why"}; None outside the proxy (check, bench)
    app: dict | None = None

    def header(self, name: str, default: str | None = None) -> str | None:
        lname = name.lower()
        for k, v in self.headers:
            if k.lower() == lname:
                return v
        return default

    @property
    def cookie(self) -> str | None:
        """Every Cookie field joined with "; " (HTTP/2 clients such as Chromium send one field per cookie)."""
        values = [v for k, v in self.headers if k.lower() == "cookie"]
        return "; ".join(values) if values else None

    @property
    def host(self) -> str:
        return (urlsplit(self.url).hostname or "").lower()

    @property
    def scheme(self) -> str:
        return urlsplit(self.url).scheme

    @property
    def path(self) -> str:
        return urlsplit(self.url).path or "/"


class TextField(BaseModel):
    """One piece of outgoing text and the path that writes it back (e.g. ``json:$.user.email``)."""

    path: str
    text: str
    key: str | None = None  # the field name, used as detection context ("ssn", "password")
    protocol: bool = False  # a protocol value (user agent, version, enum, URL path): never free text to rewrite


class Span(BaseModel):
    """A located sensitive value inside one TextField."""

    path: str
    start: int
    end: int
    entity: str  # detector label (EMAIL_ADDRESS, PERSON, CREDIT_CARD ...)
    category: str  # one of CATEGORIES
    score: float = 1.0
    text: str = Field(default="", repr=False)  # raw value: memory only, never logged
    direct: bool = True  # direct identifier (True) or quasi-identifier (False)
    #: provenance, log-safe (never the value): the registered recognizer that won the span (`pattern:email`,
    #: `key:email`, `ner:PERSON`, `propagated`) and why, in a few words (`key:em+validator`, `from json:$.email`)
    recognizer: str = ""
    reason: str = ""


#: the text field of a request's host labels: read, never written (a host cannot be rewritten, it is the destination)
HOST_PATH = "host:"
#: parse flags meaning the body was not inspected (it could hold anything)
UNREADABLE_FLAGS = frozenset({"unparsed", "too_large", "binary"})


class Action(BaseModel):
    """The action six-tuple plus the located spans and parse flags."""

    domain: str  # registrable domain of the destination
    host: str
    categories: dict[str, int] = Field(default_factory=dict)  # category -> count
    recipient: str = "unknown_third_party"  # one of RECIPIENT_CLASSES
    owner: str | None = None
    purposes: list[str] = Field(default_factory=lambda: ["unknown"])
    basis: str = "default"  # one of BASES
    fields: list[TextField] = Field(default_factory=list, repr=False)
    spans: list[Span] = Field(default_factory=list, repr=False)
    body_format: str = "none"  # none|json|form|multipart|text|ndjson|graphql|protobuf|binary|unparsed|too_large
    flags: list[str] = Field(default_factory=list)  # unparsed, truncated, too_large, binary ...
    site: str | None = None  # registrable domain of the initiating page, if known
    role: str | None = None  # the destination's role in the user's own flows: identity_provider | payment_processor | platform
    #: the program that sent it (RawRequest.app, guardian_proxy/procinfo.py): the block page's words name it
    app: dict | None = None
    _parsed: object = PrivateAttr(default=None)  # bodies.ParsedBody, kept for write-back

    @property
    def text(self) -> str:
        return "\n".join(f.text for f in self.fields)

    def personal(self) -> dict[str, int]:
        """The personal-data categories found (count > 0), in the order they were found."""
        return {c: n for c, n in self.categories.items() if n > 0 and c in CATEGORIES}

    def unreadable(self) -> set[str]:
        """The parse flags that say the body was not inspected."""
        return UNREADABLE_FLAGS & set(self.flags)


class Statement(BaseModel):
    """One atomic privacy-policy statement with structured fields."""

    id: str
    domain: str
    text: str
    practice: str = "collect"
    data_categories: list[str] = Field(default_factory=list)
    recipients: list[str] = Field(default_factory=list)
    purposes: list[str] = Field(default_factory=list)
    condition: str | None = None
    retention: str | None = None
    start: int = 0
    end: int = 0
    negated: bool = False  # the statement says the practice is NOT done ("we do not sell ...")
    section: str | None = None  # heading the statement sits under
    source: str | None = None  # title of the source document


class ScoredStatement(BaseModel):
    statement: Statement
    score: float


class Evidence(BaseModel):
    statements: list[ScoredStatement] = Field(default_factory=list)
    transparency: str = "none"  # one of TRANSPARENCY
    policy_source: str | None = None


class Likelihood(BaseModel):
    value: float
    path: LPath
    u: float | None = None
    risky_mass: float | None = None
    reason: str = ""


class Risk(BaseModel):
    Sd: float
    Mtr: float
    Mp: float
    Mb: float
    MT: float
    Seff: float
    R: float
    tier: str
    allow_ceiling: float
    deny_floor: float


class Context(BaseModel):
    """A fixed context that replaces extraction's recipient/purpose/basis and the evidence's
    transparency (used by `check --context`, `sweep` and `anonymize`)."""

    name: str
    recipient: str
    purpose: str
    basis: str
    transparency: str


class Rewrite(BaseModel):
    """What the addon applies for a transform: wire-ready body and header changes."""

    body: bytes | None = None  # encoded as the request's Content-Encoding says
    url: str | None = None
    set_headers: dict[str, str] = Field(default_factory=dict)
    remove_headers: list[str] = Field(default_factory=list)
    span_counts: dict[str, int] = Field(default_factory=dict)  # entity -> rewritten count
    stats: dict[str, int | float | str | list[int]] = Field(default_factory=dict)  # log-safe anonymizer facts


class Verdict(BaseModel):
    """Stages 2–5 on a request with personal data, before any rewrite: the evidence, likelihood and risk, what
    they decide (a user override applied, a rewrite that cannot be put where the values sit turned into a block)
    and why. The stage that rewrites (stage 6, or the session stage for a chat request) builds the Decision."""

    evidence: Evidence
    likelihood: Likelihood
    risk: Risk
    kind: ActionKind
    level: int | None = None
    explanation: str
    override: str | None = None  # the user override's text, when one replaced the outcome
    rule: str | None = None
    norm: str | None = None  # the norm of the flow that set the likelihood (flow_norms.py)


class Decision(BaseModel):
    id: str = Field(default_factory=lambda: uuid.uuid4().hex[:16])
    ts: float = Field(default_factory=time.time)
    action: ActionKind
    six: Action
    evidence: Evidence = Field(default_factory=Evidence)
    likelihood: Likelihood | None = None
    risk: Risk | None = None
    start_level: int | None = None
    final_level: int | None = None
    rounds: int = 0
    explanation: str = ""
    override: str | None = None
    rule: str | None = None  # a stated rule that decided (e.g. "unparsed-high-risk")
    rewrite: Rewrite | None = None
    latency_ms: float = 0.0
    extra: dict = Field(default_factory=dict)  # stage-specific, log-safe fields (session, cpe ...)
