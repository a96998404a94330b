"""Every chat wire format the session stage knows, one module each (see `chatapi.dialect`).

A module here exports `DIALECTS`, a list of `Dialect` instances; they are found by name, so adding a
service is adding one file. Lookup order: priority (web apps that name their hosts first), then name.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from ..dialect import Dialect


@cache
def all_dialects() -> tuple[Dialect, ...]:
    found: list[Dialect] = []
    for mod in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        found += getattr(importlib.import_module(f"{__name__}.{mod.name}"), "DIALECTS", [])
    names = [d.name for d in found]
    dupes = {n for n in names if names.count(n) > 1}
    if dupes:
        raise RuntimeError(f"two chat dialects share a name: {sorted(dupes)}")
    return tuple(sorted(found, key=lambda d: (-d.priority, d.name)))


@cache
def by_name() -> dict[str, Dialect]:
    return {d.name: d for d in all_dialects()}


def get(name: str | None) -> Dialect | None:
    return by_name().get(name) if name else None


def find(host: str, path: str, websocket: bool = False) -> list[Dialect]:
    """The dialects a request to `host` + `path` may be (the first whose `parse` accepts the body wins)."""
    path = path.split("?", 1)[0]
    return [d for d in all_dialects() if d.websocket == websocket and d.matches(host, path)]
