"""Given names and surnames of several languages, from Faker's person providers (already a dependency): the one
place that reads them, for the chat session's name rules and its stand-ins' sex."""

from __future__ import annotations

import importlib
from functools import cache

#: the locales whose names a person in the traffic most often carries
LOCALES = ("en_US", "en_GB", "en_IN", "de_DE", "fr_FR", "es_ES", "it_IT", "nl_NL", "pt_BR", "pl_PL", "sv_SE")


@cache
def faker_names(*attrs: str) -> frozenset[str]:
    """The casefolded union of the providers' lists `attrs` ("first_names", "first_names_male",
    "first_names_female", "last_names") over `LOCALES`."""
    out: set[str] = set()
    for loc in LOCALES:
        try:
            p = importlib.import_module(f"faker.providers.person.{loc}").Provider
        except ImportError:  # pragma: no cover - a trimmed Faker
            continue
        for attr in attrs:
            out.update(str(x).casefold() for x in getattr(p, attr, ()) or ())
    return frozenset(out)
