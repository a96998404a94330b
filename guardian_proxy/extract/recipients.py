"""Recipient class and owner of a destination: the class follows the destination, not the navigation.

Order of the rules (the first that applies decides):
  1 local model servers: a loopback/private host on Ollama's port 11434, or with a chat-API path → ai_service;
    any other loopback, private or `.local` host (a developer's own server, whatever its port) → first_party
  2 LLM/AI API hosts and AI chat web apps (`ai_hosts`, `ai_patterns`, services.yaml `ai_service`) → ai_service,
    whatever page, navigation or form sent the request — except the AI app's own analytics client on that host
    (services.yaml `ai_telemetry`: `/ces/v1/t`, `/rgstr`, `/telemetry/intake`) → analytics (rule `ai-telemetry`)
  3 California-registered data brokers → data_broker, whatever page, navigation or form sent the request; a hosted
    analytics service's own collection protocol (services.yaml `tracker_paths`: Adobe's `/b/ss/…`, AT Internet's
    `hit.xiti`, GA4's `/g/collect`) → analytics of that vendor on any host (rule `vendor-path`, flag `vendor_path`:
    a CNAME-cloaked collector the DNS answer cannot show; a self-hosted Matomo stays the site's own)
  4 identity providers, payment processors and site platforms (services.yaml; role `identity_provider`,
    `payment_processor`, `platform`)
    → first_party on their own site, service_provider from another site (the role travels in `Action.role`)
  5 addressed: no page made the request and the user's own client sent it (curl, a script, an agent:
    extract.addressee), and neither its host nor its path says it measures (`measures`: a collector, telemetry,
    a pixel) → first_party (rule and flag `addressed`), unless the tracker DB, the broker registry or
    the CNAME-tracker list names the host as a tracker, ad network, social tracker or broker (it keeps that class),
    or a CNAME resolver shows it is an alias of one (flag `cname_cloaked`)
  6 first party: the same registrable domain as the initiating page (the site itself, even when the tracker DB
    lists that domain: on google.com, www.google.com/search is Google's own function) — unless the tracker DB
    lists the host itself under a more specific name as a tracker (`ads.example.com`), or a CNAME resolver
    (optional) shows the first-party-looking host is an alias of a known tracker (flag `cname_cloaked`)
  7 WhoTracks.me 2022 tracker DB by host suffix (category → class, `category_class`), plus the project's extras:
    a tracker keeps its class even when its owner also owns the page (doubleclick.net on youtube.com), but a
    social network's own domains on its own pages are the site (twimg.com or x.com on twitter.com; not a more
    specific tracker host such as analytics.twitter.com)
  8 trackers seen behind CNAMEs (AdGuard list) reached directly → analytics
  9 the site's family (`_family`): the same related-website set or owner as the initiating page (rule
    `same-owner`), or a name that extends the site's brand (`redditspace.com` on reddit.com, rule `same-brand`)
    → first_party
 10 any other host on an open account protocol's path (services.yaml `account_protocol`: Matrix's Client-Server API,
    JMAP, WebDAV/CalDAV/CardDAV, Nextcloud's OCS) → service_provider with role `account_protocol` (rule
    `account-protocol`): the user's own client talking to the user's account on the server the user chose (Element on
    app.element.io to the user's homeserver); the owner is the host's owner or the protocol's name
 11 any other host with an OpenAI/Anthropic-style chat path (/v1/chat/completions, /v1/messages …) → ai_service
 12 stated default: unknown_third_party (no owner)
"""
from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from functools import lru_cache

from ..domains import EXTRACTOR, is_ip, registrable_domain
from ..resources import DATA_DIR
from ..types import ROLES, TRACKER_CLASSES

DEFAULT_CLASS = "unknown_third_party"
OLLAMA_PORT = 11434
LOCAL_AI_PATHS = ("/api/chat", "/api/generate", "/api/embed", "/api/embeddings", "/v1/chat/completions",
                  "/v1/completions", "/v1/messages", "/v1/responses", "/v1/embeddings", "/completion")
BRAND_MIN = 5  # letters of a site's name that a family domain must start with (`reddit` → `redditspace`)
#: path segments of a chat turn on an AI host: a path with one of them is never its telemetry
AI_TURN_SEGMENTS = frozenset({"conversation", "conversations", "chat", "completions", "completion", "messages",
                              "responses", "generatecontent", "streamgeneratecontent", "prompt"})
#: words of a host or path that say it measures (a collector, telemetry, a pixel): never "addressed" by the user
MEASURING_WORDS = frozenset({"telemetry", "analytics", "metrics", "tracking", "track", "tracker", "collect",
                             "collector", "beacon", "rum", "ingest", "pixel", "pageview", "impression", "impressions",
                             "stats", "statistics"})
_WORD_SPLIT = re.compile(r"[./\-_:;,=?&]+")
_VERSION = re.compile(r"v\d+(?:beta\d*|alpha\d*)?")
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
    """(role, owner) of a host in the user's own flows (services.yaml), or None. `account_protocol` is known by
    its path on any host (`account_protocol()`), after the tracker tables: it is not a host role."""
    for role in ROLES:
        owner = _service(role, host, path)
        if owner:
            return role, owner
    return None


def _path_entry(key: str, path: str) -> str | None:
    """The name paired with the first glob of services.yaml `key` (a list of [path glob, name]) that `path` matches."""
    lp = (path or "/").split("?", 1)[0].lower()
    entries = services().get(key) or []
    for glob, name in entries.get("paths") or [] if isinstance(entries, dict) else entries:
        if fnmatchcase(lp, glob):
            return name
    return None


@lru_cache(maxsize=4096)
def tracker_path(path: str) -> str | None:
    """The analytics vendor whose collection protocol a path is (services.yaml `tracker_paths`), or None."""
    return _path_entry("tracker_paths", path)


@lru_cache(maxsize=4096)
def account_protocol(path: str) -> str | None:
    """The open account protocol a path belongs to (services.yaml `account_protocol.paths`: Matrix's Client-Server
    API, JMAP, WebDAV/CalDAV/CardDAV, Nextcloud's OCS), or None. Only the path counts: these servers are
    self-hosted as often as not."""
    return _path_entry("account_protocol", path)


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


def _below_ai_app(host: str, site: str, path: str) -> bool:
    """A request the AI app's own page made to a name below the listed AI host (`tcr9i.chat.openai.com` under
    `chat.openai.com`: an anti-bot vendor served in the app's name) whose path no chat dialect addresses: the
    page's own machinery, not a prompt to the model, so the same-site rules decide (docs/design/extraction.md: a chat turn is
    known by the dialect's path and shape, not by the host)."""
    if registrable_domain(host) != registrable_domain(site) or _lookup(table()["ai_hosts"], host) is None:
        return False
    if host in table()["ai_hosts"] or host.startswith("www.") and host[4:] in table()["ai_hosts"]:
        return False
    from .. import chatapi

    return chatapi.kind_of(path, host) is None and not any(s in AI_TURN_SEGMENTS for s in path.lower().split("/"))


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


#: subdomain labels that name a tracker's collection or ad host (`p.twitter.com/f.gif`, `px.ads.linkedin.com`,
#: `pixel.facebook.com`): under a domain the tracker DB lists with a tracking class, such a host is a tracker even
#: when the DB has no entry of its own for it
TRACKING_LABELS = frozenset({"p", "px", "pixel", "pixels", "t", "tr", "analytics", "stats", "metrics", "telemetry",
                             "beacon", "beacons", "collect", "collector", "track", "tracking", "tracker", "events",
                             "log", "logs", "logging"})
AD_LABELS = frozenset({"ad", "ads", "adserver", "adservice", "advertising", "adsrv"})


def _tracker_host(host: str) -> Recipient | None:
    """A tracker-DB entry more specific than the registrable domain (`ads.linkedin.com`, not `linkedin.com`)
    whose class is a tracking class, or a host of a tracking owner's domain whose subdomain labels name collection
    or ads (`TRACKING_LABELS`, `AD_LABELS`: `p.twitter.com`): such a host is a tracker even on its owner's own
    pages."""
    t = table()
    reg = registrable_domain(host)
    for h in _suffixes(host):
        if h == reg:
            break
        hit = t["trackers"].get(h)
        if hit and hit[0] in TRACKER_CLASSES:
            return Recipient(hit[0], hit[1], "tracker-host")
    if host == reg or not host.endswith("." + reg):
        return None
    owner = t["trackers"].get(reg)
    if not owner or owner[0] not in TRACKER_CLASSES:
        return None
    labels = set(host[: -len(reg) - 1].split("."))
    if labels & AD_LABELS:
        return Recipient("ad_network", owner[1], "tracker-label")
    if labels & TRACKING_LABELS:
        return Recipient("analytics", owner[1], "tracker-label")
    return None


def _cloaked(host: str, dom: str, resolve_cname: Callable[[str], str | None] | None) -> Recipient | None:
    """A first-party-looking name whose canonical name (the CNAME chain of its DNS answer) is a known tracker's:
    the tracker itself (AdGuard's cloaked-tracker vendors, the tracker DB, brokers), flag `cname_cloaked`."""
    if resolve_cname is None or host == dom:
        return None
    target = resolve_cname(host)
    if not target or registrable_domain(target) == dom:
        return None
    hidden = _by_tables(target.lower().rstrip("."))
    if hidden is None or hidden.cls == "service_provider":  # a CDN or host serving the site's own name
        return None
    return Recipient(hidden.cls, hidden.owner, "cname-cloaked", ["cname_cloaked"])


@lru_cache(maxsize=8192)
def _label(domain: str) -> str:
    """The name of a registrable domain without its public suffix: `redditspace.com` → `redditspace`."""
    reg = registrable_domain(domain)
    suffix = EXTRACTOR(reg).suffix
    return reg[: -len(suffix) - 1] if suffix and reg.endswith("." + suffix) else reg


def _family(host: str, site: str) -> str | None:
    """The site's own family of domains: the same related-website set or the same owner in the owner tables
    (WhoTracks.me company, its web site, a broker's name), or a name that is the site's own brand extended
    (`redditspace.com`, `redditstatic.com` for `reddit.com`; `shop-example.de` for `shop-example.com`; at least
    five letters of brand, so `x.com` extends to nothing)."""
    if _same_owner(host, site):
        return "same-owner"
    brand, name = _label(site), _label(host)
    if len(brand) >= BRAND_MIN and "." not in brand and name.startswith(brand) and not is_ip(host):
        return "same-brand"
    return None


def classify(host: str, site: str | None, port: int | None = None, path: str = "/",
             resolve_cname: Callable[[str], str | None] | None = None, addressed: bool = False) -> Recipient:
    """Recipient of a request to `host` (lower case) initiated by page `site` (registrable domain or None).
    `addressed`: no page made the request and the user's own client sent it (extract.addressee), so the host is
    the user's addressee unless it is a tracker, ad network, social tracker or broker (rule `addressed`)."""
    host = (host or "").lower().rstrip(".")
    p = (path or "/").rstrip("/") or "/"
    if _is_local(host):
        if port == OLLAMA_PORT or p.endswith(LOCAL_AI_PATHS):
            return Recipient("ai_service", "local model server", "local-ai")
        return Recipient("first_party", None, "local")
    ai = _ai_host(host, p)
    if ai and site is not None and _below_ai_app(host, site, p):
        ai = None  # the AI app's page machinery on a name below the app's (a captcha vendor's frame): the site's rules
    if ai:
        if ai_telemetry(p):  # the AI app's own analytics client (Segment- or Statsig-like), not a prompt
            return Recipient("analytics", ai, "ai-telemetry")
        return Recipient("ai_service", ai, "ai-host")
    t = table()
    dom = registrable_domain(host)
    if dom in t["brokers"]:
        return Recipient("data_broker", t["brokers"][dom], "data-broker")
    vendor = tracker_path(p)
    if vendor is not None:  # a listed tracker host keeps the tables' class and owner
        listed = _by_tables(host)
        return listed if listed is not None and listed.cls in TRACKER_CLASSES else \
            Recipient("analytics", vendor, "vendor-path", ["vendor_path"])
    same_site = site is not None and dom == registrable_domain(site)
    role = role_of(host, p)
    if role is not None:
        return Recipient("first_party" if same_site else "service_provider", role[1], role[0], role=role[0])
    if addressed and site is None and not measures(host, p):
        known = _by_tables(host)
        if known is not None and known.cls in TRACKER_CLASSES:
            return known
        cloaked = _cloaked(host, dom, resolve_cname)
        if cloaked is not None:
            return cloaked
        return Recipient("first_party", owner_of(host) or (known.owner if known else None), "addressed",
                         ["addressed"])
    if same_site:
        tracker = _tracker_host(host)
        if tracker is not None:
            return tracker
        cloaked = _cloaked(host, dom, resolve_cname)
        if cloaked is not None:
            return cloaked
        return Recipient("first_party", owner_of(host), "same-site")
    known = _by_tables(host)
    family = _family(host, site) if site is not None else None
    if known is not None and known.cls in TRACKER_CLASSES:
        # a social network's own domains on its own pages are the site (twimg.com, x.com on twitter.com), but a
        # tracker host keeps its class even on its owner's pages (doubleclick.net on youtube.com, ads.x.com)
        if not (family and known.cls == "social" and _tracker_host(host) is None):
            return known
    if family:
        return Recipient("first_party", owner_of(host) or (known.owner if known else None), family)
    protocol = account_protocol(p)
    if protocol is not None and (known is None or known.cls == "service_provider"):
        return Recipient("service_provider", owner_of(host) or (known.owner if known else None) or protocol,
                         "account-protocol", role="account_protocol")
    if known is not None:
        return known
    if p.endswith(PUBLIC_AI_PATHS):
        return Recipient("ai_service", None, "ai-path")
    return Recipient(DEFAULT_CLASS, None, "default")


def measures(host: str, path: str) -> bool:
    """The name says it collects measurements (`collector.example.net/in`, `api.example.com/v1/telemetry`,
    `t.tracker-example.com`): a tool's own telemetry is not the host the user addressed, even when no list names
    it, so the `addressed` rule leaves it to the other rules (word list: `MEASURING_WORDS`)."""
    dom = registrable_domain(host)
    words = set(_WORD_SPLIT.split(host.lower())) | set(_WORD_SPLIT.split(_label(dom)))
    words |= set(_WORD_SPLIT.split((path or "/").lower().split("?", 1)[0]))
    return not MEASURING_WORDS.isdisjoint(words)


def ai_telemetry(path: str) -> bool:
    """An AI host's analytics endpoint: a path segment in the telemetry vocabulary (services.yaml
    `ai_telemetry.segments`: `telemetry`, `metrics`, `rgstr`, …) or a Segment-style one-letter tail (`/v1/t` track,
    `/v1/p` page, `/v1/i` identify, `/v1/m` metrics), never a chat, completion or conversation path."""
    lp = (path or "/").lower().split("?", 1)[0]
    segs = [s for s in lp.split("/") if s]
    if not segs or any(s in AI_TURN_SEGMENTS for s in segs):
        return False
    vocab = _telemetry_vocab()
    if any(s in vocab["segments"] or s.startswith(vocab["prefixes"]) for s in segs):
        return True
    return len(segs) >= 2 and len(segs[-1]) == 1 and segs[-1].isalpha() and _VERSION.fullmatch(segs[-2]) is not None


@lru_cache(maxsize=1)
def _telemetry_vocab() -> dict:
    entry = services().get("ai_telemetry") or {}
    return {"segments": frozenset(entry.get("segments") or ()), "prefixes": tuple(entry.get("prefixes") or ())}
