"""What an override may name: a domain, owners known to the recipient tables, recipient classes, data categories.

A domain is given as a person writes it (`https://Shop.Example.com/x`, `*.tracker.net`) and stored as a host
name (`normalize_domain`); '*' or nothing is any domain.

An owner is accepted when guardian_proxy/data knows it (recipients.json: the tracker DB's companies, the owners of
company web sites, data brokers, CNAME trackers, AI services; services.yaml: identity providers, payment processors,
platforms), case-insensitively, and is stored as the tables spell it (`google` → `Google`). An unknown owner is
refused with the closest known ones (difflib), e.g. `--owner Googel` → "did you mean 'Google'?". Recipient
classes and categories are checked by the Override model (config.py) the same way, listing the valid values.
"""

from __future__ import annotations

from functools import lru_cache

from ..suggest import canonical, unknown


@lru_cache(maxsize=1)
def known_owners() -> tuple[str, ...]:
    """Every owner name the recipient tables can give a destination (Action.owner), sorted."""
    from ..extract.recipients import services, table

    t = table()
    names: set[str] = {"local model server"}
    names.update(v[1] for v in t["trackers"].values() if isinstance(v, list) and len(v) > 1 and v[1])
    for key in ("owner_sites", "brokers", "cname_trackers", "ai_hosts"):
        names.update(v for v in t[key].values() if isinstance(v, str) and v)
    names.update(p[2] for p in t["ai_patterns"] if len(p) > 2 and p[2])
    for role in (services() or {}).values():
        if isinstance(role, dict):
            names.update(v for v in (role.get("hosts") or {}).values() if isinstance(v, str) and v)
            names.update(p[1] for p in role.get("patterns") or [] if len(p) > 1 and isinstance(p[1], str))
    return tuple(sorted(names, key=str.lower))


def check_owner(owner: str) -> str:
    """The owner as the tables spell it; ValueError naming the closest known owners when it is unknown."""
    owners = known_owners()
    hit = canonical(owner, owners)
    if hit is None:
        raise ValueError(unknown("owner", owner, owners) + " (owners are the companies in the recipient tables)")
    return hit


def normalize_domain(value: str) -> str:
    """'https://Shop.Example.com:443/x' → 'shop.example.com'; '*' or '' → '' (any domain)."""
    v = value.strip().lower()
    if v in ("", "*"):
        return ""
    if "://" in v:
        v = v.split("://", 1)[1]
    v = v.split("/", 1)[0].split("?", 1)[0].rsplit("@", 1)[-1]
    if v.count(":") == 1:
        v = v.split(":", 1)[0]
    v = v.strip(".")
    if v.startswith("*."):
        v = v[2:]
    if not v or any(c.isspace() for c in v):
        raise ValueError(f"not a domain: {value!r}")
    return v
