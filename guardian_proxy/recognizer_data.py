"""The recognizers' word lists (guardian_proxy/data/recognizers.yaml): vendor vocabularies, the terms that are no
one's name (products, platforms, UI nouns) and common UI words. Loaded once, read by the extract stage's validators
and by the chat session's name rules (which may not import the extract stage)."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

import yaml


@lru_cache(maxsize=1)
def data() -> dict:
    """guardian_proxy/data/recognizers.yaml (vendor vocabulary, name deny lists), loaded once."""
    text = resources.files("guardian_proxy").joinpath("data/recognizers.yaml").read_text(encoding="utf-8")
    d = yaml.safe_load(text) or {}
    return {
        "vendor_vocabulary": {str(k): str(v) for k, v in (d.get("vendor_vocabulary") or {}).items()},
        "vendor_classes": frozenset(d.get("vendor_classes") or ()),
        "vendor_owners": frozenset(str(o).lower() for o in d.get("vendor_owners") or ()),
        "not_name_terms": frozenset(str(w).lower() for w in d.get("not_name_terms") or ()),
        "common_words": frozenset(str(w).lower() for w in d.get("common_words") or ()),
    }
