"""The vault's rows on one machine: <state_dir>/sessions.db, shared by every process of the gateway.

    sessions(sid, created, last_seen, meta, rev)    entities(sid, lookup, blob)    aliases(alias, sid, created)

SQLite in WAL mode is safe for several processes on one machine: readers see a consistent snapshot and never
wait, a writer takes the database's write lock (`BEGIN IMMEDIATE`, waiting up to 10 s for another one). A
save that carries entity rows is committed with synchronous=FULL (fsynced: it survives a crash of the OS);
a meta-only save with NORMAL. The `rev` column (added to a database of an earlier version on first open) is
bumped by every save. The per-session lock is a flock on one of 64 files `<state_dir>/locks/sessions-<n>.lock`.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from pathlib import Path

from .filelock import BucketLocks
from .sessions import SID_LEN, Record

log = logging.getLogger("guardian_proxy")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions(sid TEXT PRIMARY KEY, created REAL, last_seen REAL, meta BLOB,
                                    rev INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS entities(sid TEXT, lookup TEXT, blob BLOB, PRIMARY KEY(sid, lookup));
CREATE TABLE IF NOT EXISTS aliases(alias TEXT PRIMARY KEY, sid TEXT, created REAL);
CREATE INDEX IF NOT EXISTS aliases_sid ON aliases(sid);
"""


class SqliteSessions:
    """Open it under the state dir's start-up lock (`Vault` does): creating the schema is not safe to race."""

    def __init__(self, state_dir: Path):
        self.path = Path(state_dir) / "sessions.db"
        self._lock = threading.Lock()  # the writing connection, shared by this process's threads
        self._rlock = threading.Lock()  # the reading one: a read (the event loop's rev check) never waits for a
        os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o600))  # commit's fsync (0600 first: umask)
        self.db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=10)
        os.chmod(self.path, 0o600)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.executescript(_SCHEMA)
        if "rev" not in {r[1] for r in self.db.execute("PRAGMA table_info(sessions)")}:
            self.db.execute("ALTER TABLE sessions ADD COLUMN rev INTEGER NOT NULL DEFAULT 0")  # an earlier version's
        self.rdb = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=10)
        self._locks = BucketLocks(Path(state_dir) / "locks", "sessions")

    def head(self, sid: str) -> tuple[int, float] | None:
        with self._rlock:
            row = self.rdb.execute("SELECT rev, last_seen FROM sessions WHERE sid=?", (sid,)).fetchone()
        return (row[0], row[1]) if row else None

    def load(self, sid: str) -> Record | None:
        with self._rlock:
            self.rdb.execute("BEGIN")  # one snapshot for the session row and its entities
            try:
                row = self.rdb.execute("SELECT created, last_seen, rev, meta FROM sessions WHERE sid=?",
                                       (sid,)).fetchone()
                rows = self.rdb.execute("SELECT lookup, blob FROM entities WHERE sid=?", (sid,)).fetchall() \
                    if row else []
            finally:
                self.rdb.execute("COMMIT")
        return (row[0], row[1], row[2], row[3], rows) if row else None

    def save(self, sid: str, created: float, last_seen: float, meta: bytes,
             entities: list[tuple[str, bytes]]) -> int:
        with self._lock:
            self.db.execute(f"PRAGMA synchronous={'FULL' if entities else 'NORMAL'}")
            self.db.execute("BEGIN IMMEDIATE")
            try:
                self.db.executemany("INSERT OR REPLACE INTO entities(sid, lookup, blob) VALUES(?,?,?)",
                                    [(sid, lk, b) for lk, b in entities])
                self.db.execute("INSERT INTO sessions(sid, created, last_seen, meta, rev) VALUES(?,?,?,?,1) "
                                "ON CONFLICT(sid) DO UPDATE SET last_seen=excluded.last_seen, meta=excluded.meta, "
                                "rev=sessions.rev+1", (sid, created, last_seen, meta))
                rev = self.db.execute("SELECT rev FROM sessions WHERE sid=?", (sid,)).fetchone()[0]
                self.db.execute("COMMIT")
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
        return rev

    def add_alias(self, alias: str, sid: str) -> None:
        with self._lock:
            self.db.execute("INSERT OR REPLACE INTO aliases(alias, sid, created) VALUES(?,?,?)",
                            (alias, sid, time.time()))

    def resolve(self, alias: str) -> str | None:
        with self._rlock:
            row = self.rdb.execute("SELECT sid FROM aliases WHERE alias=?", (alias,)).fetchone()
        return row[0] if row else None

    def sessions(self) -> list[tuple[str, float, float, bytes, int]]:
        with self._rlock:
            return [tuple(r) for r in self.rdb.execute(
                "SELECT s.sid, s.created, s.last_seen, s.meta, (SELECT COUNT(*) FROM entities e WHERE e.sid=s.sid) "
                "FROM sessions s ORDER BY s.last_seen DESC")]

    def wipe(self, prefix: str | None = None, older_than: float | None = None) -> int:
        with self._lock:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                if prefix is not None and len(prefix) >= SID_LEN:  # a whole id: the primary key, no scan
                    sids = [r[0] for r in self.db.execute("SELECT sid FROM sessions WHERE sid=?", (prefix,))]
                elif prefix is not None:
                    sids = [r[0] for r in self.db.execute("SELECT sid FROM sessions WHERE sid LIKE ?", (prefix + "%",))]
                elif older_than is not None:
                    sids = [r[0] for r in self.db.execute("SELECT sid FROM sessions WHERE last_seen < ?",
                                                          (older_than,))]
                else:
                    sids = [r[0] for r in self.db.execute("SELECT sid FROM sessions")]
                for s in sids:
                    for table in ("entities", "aliases", "sessions"):
                        self.db.execute(f"DELETE FROM {table} WHERE sid=?", (s,))
                self.db.execute("COMMIT")
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            if prefix is None and older_than is None:
                try:
                    self.db.execute("VACUUM")  # no deleted value left in free pages
                except sqlite3.OperationalError as e:  # another process is reading: the rows are gone all the same
                    log.warning("sessions.db: wiped, not compacted (%s)", type(e).__name__)
        return len(sids)

    def lock(self, sid: str):
        return self._locks.hold(sid)

    def close(self) -> None:
        with self._lock, self._rlock:
            self.db.close()
            self.rdb.close()
        self._locks.close()
