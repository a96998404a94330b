"""Registrable domains, offline.

tldextract is built with `suffix_list_urls=()` so it only ever reads the public suffix list
snapshot it ships. `make_offline()` also points the module-level `tldextract.extract` (which
Presidio's e-mail recognizer calls) at this extractor, so no library can trigger a download.
"""

from __future__ import annotations

from functools import lru_cache

import tldextract

EXTRACTOR = tldextract.TLDExtract(cache_dir=None, suffix_list_urls=(), fallback_to_snapshot=True)


def make_offline() -> None:
    tldextract.extract = EXTRACTOR
    tldextract.tldextract.TLD_EXTRACTOR = EXTRACTOR


make_offline()


@lru_cache(maxsize=65536)
def registrable_domain(host: str) -> str:
    """`tracker.eu.example.co.uk` → `example.co.uk`. A name outside the public suffix list (`app.corp.internal`,
    `wiki.eng.lan`, `shop.test.example`) → its last two labels, so every subdomain of a private site is the same
    site. IP addresses and single labels are returned as they are. The one definition of "the same site" in the
    project (recipients, the initiating page, policies and overrides all use it)."""
    host = (host or "").strip().lower().rstrip(".")
    if not host:
        return ""
    r = EXTRACTOR(host)
    if r.domain and r.suffix:
        return f"{r.domain}.{r.suffix}"
    if ":" in host or host.replace(".", "").isdigit() or host.count(".") < 2:
        return host
    return ".".join(host.split(".")[-2:])


def split_hostport(value: str) -> tuple[str, int]:
    """`HOST:PORT` (IPv6 in brackets or not) → (host, port); a ValueError saying the form otherwise."""
    host, sep, port = value.strip().rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ValueError(f"expected HOST:PORT, got {value!r}")
    return host.strip("[]"), int(port)


def is_ip(host: str) -> bool:
    """An IP address literal (IPv6 with or without brackets), not a name."""
    import ipaddress

    try:
        ipaddress.ip_address(host.strip("[]"))
        return True
    except ValueError:
        return False
