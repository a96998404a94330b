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
    """`tracker.eu.example.co.uk` → `example.co.uk`; IPs and single labels are returned as they are."""
    host = (host or "").strip().lower().rstrip(".")
    if not host:
        return ""
    r = EXTRACTOR(host)
    if r.domain and r.suffix:
        return f"{r.domain}.{r.suffix}"
    return host
