"""Short-lived state shared by every process of the gateway (and every gateway of a Redis fleet): a few bytes
per hashed key that expire after a TTL. The split-value window (guardian_proxy/fragments.py) keeps its
fragment states here, so two consecutive requests still pair when different worker processes serve them.

    local   <state_dir>/scratch.db, SQLite (guardian_proxy/state/scratch_sqlite.py)
    redis   P:x:<namespace>:<key> strings with a TTL (guardian_proxy/state/scratch_redis.py)

Keys are hashes made by the caller, never values; what is stored is the caller's own encoding of states that
hold no value either (lengths, checksums' partial sums, shapes). Losing the scratch (a crash) loses nothing
that matters: it is written without fsync.
"""

from __future__ import annotations

from typing import Protocol


class Scratch(Protocol):
    def swap(self, key: str, value: bytes | None, ttl_s: float) -> bytes | None:
        """Store `value` under `key` for `ttl_s` seconds (None: delete it) and return the value it replaced
        (None when there was none or it had expired), in one atomic step."""

    def put(self, key: str, value: bytes | None, ttl_s: float) -> None:
        """Store (None: delete) without reading."""

    def close(self) -> None: ...
