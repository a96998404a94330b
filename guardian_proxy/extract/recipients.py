"""Recipient class and owner of a destination: the class follows the destination, not the navigation.

Order of the rules (the first that applies decides):
  1 local model servers: a loopback/private host on Ollama's port 11434, or with a chat-API path → ai_service
  2 LLM/AI API hosts and AI chat web apps (`ai_hosts`, `ai_patterns`, services.yaml `ai_service`) → ai_service,
    whatever page, navigation or form sent the request
  3 California-registered data brokers → data_broker, whatever page, navigation or form sent the request
  4 identity providers, payment processors and site platforms (services.yaml; role `identity_provider`,
    `payment_processor`, `platform`)
    → first_party on their own site, service_provider from another site (the role travels in `Action.role`)
  5 first party: the same registrable domain as the initiating page (the site itself, even when the tracker DB
    lists that domain: on google.com, www.google.com/search is Google's own function) — unless the tracker DB
    lists the host itself under a more specific name as a tracker (`ads.example.com`), or a CNAME resolver
    (optional) shows the first-party-looking host is an alias of a known tracker (flag `cname_cloaked`)
  6 WhoTracks.me 2022 tracker DB by host suffix (category → class, `category_class`), plus the project's extras:
    a tracker keeps its class even when its owner also owns the page (doubleclick.net on youtube.com)
  7 trackers seen behind CNAMEs (AdGuard list) reached directly → analytics
  8 first party by owner: the same related-website set or owner as the initiating page
  9 any other host with an OpenAI/Anthropic-style chat path (/v1/chat/completions, /v1/messages …) → ai_service
 10 stated default: unknown_third_party (no owner)
"""
from __future__ import annotations

import ipaddress
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from functools import lru_cache

from ..domains import registrable_domain
from ..resources import DATA_DIR
from ..types import ROLES, TRACKER_CLASSES

DEFAULT_CLASS = "unknown_third_party"
OLLAMA_PORT = 11434
LOCAL_AI_PATHS = ("/api/chat", "/api/generate", "/api/embed", "/api/embeddings", "/v1/chat/completions",
                  "/v1/completions", "/v1/messages", "/v1/responses", "/v1/embeddings", "/completion")
PUBLIC_AI_PATHS = ("/v1/chat/completions", "/v1/completions", "/v1/messages", "/v1/responses",
                   "/chat/completions", "/openai/v1/chat/completions")


@dataclass
class Recipient:
    cls: str
    owner: str | None = None
    rule: str = "default"
    flags: list[str] = field(default_factory=list)
    role: str | None = None  # identity_provider | payment_processor | platform (services.yaml)



@lru_cache(maxsize=1)
def table() -> dict:
    return json.loads((DATA_DIR / "recipients.json").read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def services() -> dict:
    """services.yaml: role → {hosts: {host or host/path-prefix: owner}, patterns: [[host glob, owner]]}."""
    import yaml

    return yaml.safe_load((DATA_DIR / "services.yaml").read_text(encoding="utf-8"))


@lru_cache(maxsize=16)
def _with_paths(role: str) -> tuple[tuple[str, str, str], ...]:
    """The `host/path-prefix` entries of a role: (host, path glob, owner)."""
    hosts = (services().get(role) or {}).get("hosts") or {}
    return tuple((k.partition("/")[0], "/" + k.partition("/")[2] + "*", owner) for k, owner in hosts.items() if "/" in k)


@lru_cache(maxsize=8192)
def _service(role: str, host: str, path: str = "/") -> str | None:
    entry = services().get(role) or {}
    hosts = entry.get("hosts") or {}
    for h in _suffixes(host):
        if h in hosts:
            return hosts[h]
    for kh, glob, owner in _with_paths(role):  # host/path-prefix, `*` matching any run of characters in the path
        if (host == kh or host.endswith("." + kh)) and fnmatchcase(path.lower(), glob):
            return owner
    for glob, owner in entry.get("patterns") or []:
        if fnmatchcase(host, glob):
            return owner
    return None


def role_of(host: str, path: str = "/") -> tuple[str, str] | None:
    """(role, owner) of a host in the user's own flows (services.yaml), or None."""
    for role in ROLES:
        owner = _service(role, host, path)
        if owner:
            return role, owner
    return None


def _suffixes(host: str):
    """`a.b.example.co.uk` → itself, `b.example.co.uk`, `example.co.uk` (never the bare suffix)."""
    reg = registrable_domain(host)
    h = host
    while True:
        yield h
        if h == reg or "." not in h:
            return
        h = h.split(".", 1)[1]


def _lookup(table_: dict, host: str):
    for h in _suffixes(host):
        if h in table_:
            return table_[h]
    return None


def _is_local(host: str) -> bool:
    if host in ("localhost", "host.docker.internal") or host.endswith(".localhost") or host.endswith(".local"):
        return True
    try:
        ip = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return ip.is_loopback or ip.is_private or ip.is_link_local or ip.is_unspecified


def _ai_host(host: str, path: str = "/") -> str | None:
    t = table()
    owner = _lookup(t["ai_hosts"], host) or _service("ai_service", host, path)
    if owner:
        return owner
    for prefix, suffix, owner in t["ai_patterns"]:
        if host.startswith(prefix) and host.endswith(suffix):
            return owner
    return None


def owner_of(domain: str) -> str | None:
    """Owner of a registrable domain (or host): tracker-DB company, company web site, broker name."""
    t = table()
    hit = _lookup(t["trackers"], domain)
    if hit:
        return hit[1]
    reg = registrable_domain(domain)
    return t["owner_sites"].get(reg) or t["brokers"].get(reg)


def _same_owner(host: str, site: str) -> bool:
    t = table()
    dom, sreg = registrable_domain(host), registrable_domain(site)
    sets = t["related_sets"]
    if dom in sets and sets[dom] == sets.get(sreg):
        return True
    a, b = owner_of(host), owner_of(sreg)
    return a is not None and a == b


def _by_tables(host: str) -> Recipient | None:
    t = table()
    reg = registrable_domain(host)
    if reg in t["brokers"]:
        return Recipient("data_broker", t["brokers"][reg], "data-broker")
    hit = _lookup(t["trackers"], host)
    if hit:
        return Recipient(hit[0], hit[1], "tracker-db")
    cname = _lookup(t["cname_trackers"], host)
    if cname:
        return Recipient("analytics", cname, "cname-tracker")
    return None


def _tracker_host(host: str) -> Recipient | None:
    """A tracker-DB entry more specific than the registrable domain (`ads.linkedin.com`, not `linkedin.com`)
    whose class is a tracking class: such a host is a tracker even on its owner's own pages."""
    t = table()
    reg = registrable_domain(host)
    for h in _suffixes(host):
        if h == reg:
            return None
        hit = t["trackers"].get(h)
        if hit and hit[0] in TRACKER_CLASSES:
            return Recipient(hit[0], hit[1], "tracker-host")
    return None


def classify(host: str, site: str | None, port: int | None = None, path: str = "/",
             resolve_cname: Callable[[str], str | None] | None = None) -> Recipient:
    """Recipient of a request to `host` (lower case) initiated by page `site` (registrable domain or None)."""
    host = (host or "").lower().rstrip(".")
    p = (path or "/").rstrip("/") or "/"
    if _is_local(host):
        if port == OLLAMA_PORT or p.endswith(LOCAL_AI_PATHS):
            return Recipient("ai_service", "local model server", "local-ai")
        return Recipient("first_party", None, "local")
    ai = _ai_host(host, p)
    if ai:
        return Recipient("ai_service", ai, "ai-host")
    t = table()
    dom = registrable_domain(host)
    if dom in t["brokers"]:
        return Recipient("data_broker", t["brokers"][dom], "data-broker")
    same_site = site is not None and dom == registrable_domain(site)
    role = role_of(host, p)
    if role is not None:
        return Recipient("first_party" if same_site else "service_provider", role[1], role[0], role=role[0])
    if same_site:
        tracker = _tracker_host(host)
        if tracker is not None:
            return tracker
        if resolve_cname is not None and host != dom:
            target = resolve_cname(host)
            if target and registrable_domain(target) != dom:
                hidden = _by_tables(target.lower().rstrip("."))
                if hidden is not None and hidden.cls != "service_provider":
                    return Recipient(hidden.cls, hidden.owner, "cname-cloaked", ["cname_cloaked"])
        return Recipient("first_party", owner_of(host), "same-site")
    known = _by_tables(host)
    if known is not None and known.cls in TRACKER_CLASSES:
        return known
    if site and _same_owner(host, site):
        return Recipient("first_party", owner_of(host), "same-owner")
    if known is not None:
        return known
    if p.endswith(PUBLIC_AI_PATHS):
        return Recipient("ai_service", None, "ai-path")
    return Recipient(DEFAULT_CLASS, None, "default")
