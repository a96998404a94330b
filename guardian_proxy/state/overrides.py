"""Where the user's override rules are stored: one interface (`OverrideBackend`) and two back ends, opened by
guardian_proxy.state.open_overrides.

    local   <state_dir>/overrides.yaml and its sidecars (guardian_proxy/state/overrides_local.py)
    redis   keys under the fleet's prefix (guardian_proxy/state/overrides_redis.py)

The record is the `Override` of the settings (guardian_proxy/config.py). A stored list is read into rules here
(`parse_rules`): every entry validated, and an entry written before ids existed given an id derived from its
content (the same in every process reading the same list). What the rules mean — terms, matching, counting and
spending — is guardian_proxy/overrides/.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Protocol

from pydantic import ValidationError

from ..config import Override, validation_problem
from ..errors import ConfigError

FILE_NAME = "overrides.yaml"
COUNTS_NAME = "overrides.counts.json"
#: the end of the message for a stored list that cannot be used
FIX = "fix the file, or move it away to run without the stored overrides"
ID_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"


class OverrideBackend(Protocol):
    """Where the stored rules, their spent marks and match counts live. Every method may raise
    StateUnavailable (Redis down or slow: bounded by state.timeout_s)."""

    where: str  # the store in words, for messages (never a password)
    path: Path | None  # the rules' file (local), None for a store without one
    shared: bool  # True: several gateways share it
    check_s: float  # how often a reader asks `stamp` (0: at every request)

    def stamp(self) -> object:
        """Cheap: a value that changes whenever the rules may have."""

    def load(self) -> list[Override]:
        """The stored rules, with ids; ConfigError when they cannot be used."""

    def update(self, change: Callable[[list[Override]], list[Override] | None]) -> None:
        """Read, change and write the rules atomically against every other writer."""

    def spend(self, key: str, when: datetime) -> bool:
        """Spend a once rule: True for exactly one caller among all processes, False for every other."""

    def spent(self) -> dict[str, datetime]:
        """Every spent once rule: id → when."""

    def counts(self) -> dict[str, dict]:
        """id → {matched, last}, every process's counts added up."""

    def flush(self, pending: dict[str, tuple[int, str]], spent: dict[str, datetime], keep: set[str]) -> None:
        """Add this process's counts (and record its spent times); `keep`: the config's rule ids."""


# --------------------------------------------------------------------------- the stored list ↔ rules


def parse_rules(data, where: str) -> list[Override]:
    """A stored list (parsed YAML or JSON: `{overrides: [...]}` or the list itself) → rules, those without an
    id given one derived from their content; anything else is a one-line ConfigError naming `where`."""
    data = data or {}
    items = data.get("overrides", []) if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise ConfigError(f"overrides file {where}: expected a list under 'overrides'; {FIX}")
    out = []
    for n, item in enumerate(items, 1):
        try:
            out.append(Override.model_validate(item))
        except ValidationError as e:
            raise ConfigError(f"overrides file {where}: entry {n}: {validation_problem(e)}; {FIX}") from e
    return identify(out, "")


def dump_rules(entries: list[Override]) -> list[dict]:
    """The rules as stored (JSON-ready; unset fields left out)."""
    return [o.model_dump(mode="json", exclude_none=True) for o in entries]


def _content_id(o: Override, prefix: str, seen: dict[str, int]) -> str:
    """An id derived from a rule's content (and how many identical rules came before it): the same in every
    process reading the same list."""
    body = json.dumps(o.model_dump(mode="json", exclude_none=True, exclude={"id"}), sort_keys=True)
    n = seen.get(body, 0)
    seen[body] = n + 1
    digest = hashlib.sha256(f"{body}#{n}".encode()).digest()
    return prefix + "".join(ID_ALPHABET[b % len(ID_ALPHABET)] for b in digest[:5])


def identify(entries: list[Override], prefix: str) -> list[Override]:
    """The entries, those without an id given one derived from their content (`prefix` first: "c" for the
    config file's rules)."""
    seen: dict[str, int] = {}
    return [o if o.id else o.model_copy(update={"id": _content_id(o, prefix, seen)}) for o in entries]
