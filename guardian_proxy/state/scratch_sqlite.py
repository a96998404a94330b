"""The scratch on one machine: <state_dir>/scratch.db (0600), one table `scratch(ns, key, value, expires)`,
WAL journal, synchronous=OFF (a crash may lose the last writes: nothing here must outlive one). Every process
of the gateway opens it; a swap is one `BEGIN IMMEDIATE` transaction (the write lock, waited for up to 10 s).
Expired rows are deleted at most once a minute by the process that writes."""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from pathlib import Path

from ..private import make_dirs
from .filelock import exclusive

PRUNE_EVERY_S = 60.0


class SqliteScratch:
    def __init__(self, state_dir: Path, namespace: str):
        self.ns = namespace
        state_dir = make_dirs(Path(state_dir))
        self.path = state_dir / "scratch.db"
        self._lock = threading.Lock()
        self._pruned = 0.0
        with exclusive(state_dir / "scratch.lock"):  # one schema, made once, whoever starts first
            os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o600))
            self.db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=10)
            os.chmod(self.path, 0o600)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=OFF")
            self.db.execute("CREATE TABLE IF NOT EXISTS scratch(ns TEXT, key TEXT, value BLOB, expires REAL, "
                            "PRIMARY KEY(ns, key))")

    def swap(self, key: str, value: bytes | None, ttl_s: float) -> bytes | None:
        now = time.time()
        with self._lock:
            if value is None:  # nothing to store: a read, and a write only when there was something
                row = self.db.execute("SELECT 1 FROM scratch WHERE ns=? AND key=?", (self.ns, key)).fetchone()
                if row is None:
                    return None
            self.db.execute("BEGIN IMMEDIATE")
            try:
                row = self.db.execute("SELECT value, expires FROM scratch WHERE ns=? AND key=?",
                                      (self.ns, key)).fetchone()
                self._write(key, value, now + ttl_s)
                if now - self._pruned > PRUNE_EVERY_S:
                    self._pruned = now
                    self.db.execute("DELETE FROM scratch WHERE expires < ?", (now,))
                self.db.execute("COMMIT")
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
        return row[0] if row is not None and row[1] > now else None

    def put(self, key: str, value: bytes | None, ttl_s: float) -> None:
        with self._lock:
            self._write(key, value, time.time() + ttl_s)

    def _write(self, key: str, value: bytes | None, expires: float) -> None:
        if value is None:
            self.db.execute("DELETE FROM scratch WHERE ns=? AND key=?", (self.ns, key))
        else:
            self.db.execute("INSERT OR REPLACE INTO scratch(ns, key, value, expires) VALUES(?,?,?,?)",
                            (self.ns, key, value, expires))

    def close(self) -> None:
        with self._lock:
            self.db.close()
