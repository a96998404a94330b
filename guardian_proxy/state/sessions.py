"""Where the rows of the pseudonym vault are kept (guardian_proxy/session/vault.py seals them): one small
interface, two back ends.

    local   <state_dir>/sessions.db (SQLite, WAL): guardian_proxy/state/sessions_sqlite.py
    redis   hashes under the fleet's prefix: guardian_proxy/state/sessions_redis.py

A back end only ever sees opaque ids and sealed blobs: session ids and lookups are HMACs, every value
(meta, entities) is AES-GCM ciphertext. Each session has a revision `rev`, bumped by every save, so a process
holding a cached copy can tell with one cheap read whether another process changed (or wiped) it. `lock(sid)`
holds across every process of the back end (a flock on one machine, a Redis lock across machines) and is
taken around load → apply → save.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Protocol

#: the length of a session id (hex of an HMAC, guardian_proxy/session/stage.py); a wipe prefix this long is one id
SID_LEN = 32
#: (created, last_seen, rev, sealed meta, [(lookup, sealed entity)])
Record = tuple[float, float, int, bytes, list[tuple[str, bytes]]]


class SessionRows(Protocol):
    def head(self, sid: str) -> tuple[int, float] | None:
        """(rev, last_seen) of a stored session, None when there is none."""

    def load(self, sid: str) -> Record | None:
        """The session row and its entity rows, read as one consistent snapshot."""

    def save(self, sid: str, created: float, last_seen: float, meta: bytes,
             entities: list[tuple[str, bytes]]) -> int:
        """Entity rows (inserted or replaced by lookup) and the session row in one transaction; the new rev."""

    def add_alias(self, alias: str, sid: str) -> None:
        """`alias` (an HMAC of a response id) continues session `sid`."""

    def resolve(self, alias: str) -> str | None: ...

    def sessions(self) -> list[tuple[str, float, float, bytes, int]]:
        """(sid, created, last_seen, sealed meta, entity count) of every session, newest first."""

    def wipe(self, prefix: str | None = None, older_than: float | None = None) -> int:
        """Delete the sessions whose id starts with `prefix` (one of SID_LEN characters or more: that session
        only), or last seen before `older_than`, or all (both None), with their entities and aliases; the number
        of sessions deleted."""

    def lock(self, sid: str) -> AbstractContextManager:
        """Exclusive across every process of the back end; StateUnavailable when it cannot be had in time."""

    def close(self) -> None: ...
