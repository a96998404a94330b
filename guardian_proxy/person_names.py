"""Given names and surnames of several languages, from Faker's person providers (already a dependency): the one
place that reads them, for the chat session's name rules, its stand-ins' sex and the text hit filter."""

from __future__ import annotations

import importlib
from functools import cache

#: the locales whose names a person in the traffic most often carries
LOCALES = ("en_US", "en_GB", "en_IN", "de_DE", "fr_FR", "es_ES", "it_IT", "nl_NL", "pt_BR", "pl_PL", "sv_SE")


#: the English-speaking locales (the text anonymizer's hit filter reads English)
ENGLISH = ("en", "en_US", "en_GB", "en_IE", "en_IN", "en_NZ")


@cache
def faker_names(*attrs: str, locales: tuple[str, ...] = LOCALES) -> frozenset[str]:
    """The casefolded union of the providers' lists `attrs` ("first_names", "first_names_male",
    "first_names_female", "first_names_nonbinary", "last_names") over `locales`."""
    out: set[str] = set()
    for loc in locales:
        try:
            p = importlib.import_module(f"faker.providers.person.{loc}").Provider
        except (ImportError, AttributeError):  # pragma: no cover - a trimmed Faker
            continue
        for attr in attrs:
            out.update(str(x).casefold() for x in getattr(p, attr, ()) or ())
    return frozenset(out)
