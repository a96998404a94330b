"""Recipient class and owner of a destination.

Order of the rules (the first that applies decides):
  1 local model servers: a loopback/private host on Ollama's port 11434, or with a chat-API path → ai_service
  2 LLM/AI API hosts (`ai_hosts`, `ai_patterns`) → ai_service
  3 first party: the initiating site has the same registrable domain, the same related-website set, or the
    same owner (tracker-DB company, company web site) — unless a CNAME resolver (optional) shows the
    first-party-looking host is an alias of a known tracker (→ that tracker's class, flag `cname_cloaked`)
  4 California-registered data brokers → data_broker
  5 WhoTracks.me 2022 tracker DB by host suffix (category → class, `category_class`), plus the project's extras
  6 trackers seen behind CNAMEs (AdGuard list) reached directly → analytics
  7 any other host with an OpenAI/Anthropic-style chat path (/v1/chat/completions, /v1/messages …) → ai_service
  8 stated default: unknown_third_party (no owner)
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

from ..domains import registrable_domain
from ..resources import DATA_DIR

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


@lru_cache(maxsize=1)
def table() -> dict:
    return json.loads((DATA_DIR / "recipients.json").read_text(encoding="utf-8"))


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


def _ai_host(host: str) -> str | None:
    t = table()
    owner = _lookup(t["ai_hosts"], host)
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


def classify(host: str, site: str | None, port: int | None = None, path: str = "/",
             resolve_cname: Callable[[str], str | None] | None = None) -> Recipient:
    """Recipient of a request to `host` (lower case) initiated by page `site` (registrable domain or None)."""
    host = (host or "").lower().rstrip(".")
    p = (path or "/").rstrip("/") or "/"
    if _is_local(host):
        if port == OLLAMA_PORT or p.endswith(LOCAL_AI_PATHS):
            return Recipient("ai_service", "local model server", "local-ai")
        return Recipient("first_party", None, "local")
    ai = _ai_host(host)
    if ai:
        return Recipient("ai_service", ai, "ai-host")
    if site:
        dom = registrable_domain(host)
        if dom == registrable_domain(site) or _same_owner(host, site):
            if resolve_cname is not None and host != dom:
                target = resolve_cname(host)
                if target and registrable_domain(target) != dom:
                    hidden = _by_tables(target.lower().rstrip("."))
                    if hidden is not None and hidden.cls != "service_provider":
                        return Recipient(hidden.cls, hidden.owner, "cname-cloaked", ["cname_cloaked"])
            rule = "same-site" if dom == registrable_domain(site) else "same-owner"
            return Recipient("first_party", owner_of(host), rule)
    known = _by_tables(host)
    if known is not None:
        return known
    if p.endswith(PUBLIC_AI_PATHS):
        return Recipient("ai_service", None, "ai-path")
    return Recipient(DEFAULT_CLASS, None, "default")
