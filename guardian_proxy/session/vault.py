"""The pseudonym vault: conversation state in SQLite under the state dir, encrypted at rest.

    <state_dir>/sessions.db    SQLite, WAL journal, synchronous=FULL (a commit survives a crash)
    <state_dir>/vault.key      32 random bytes (base64), mode 0600, created on first use

Every value (originals, surrogates, name parts, types) is sealed with AES-256-GCM (`cryptography`),
the row's session id and lookup key bound as associated data so rows cannot be swapped. Lookup keys and
session ids are HMAC-SHA256 under a key derived from the same secret: nothing in the file reveals a
value without the key. Entity rows are only ever inserted or completed (a surrogate added), never
rewritten with less, and they are committed before the request that uses them leaves the machine.
Hard-blocked values (SSN, card, bank account) are stored without their original. A session idle for
longer than `session.idle_expiry_s` is deleted with its entities and aliases.

If the key file is missing while a database exists, the old database cannot be read: it is moved aside
(`sessions.db.unreadable-<time>`) and a new one started. Rows that fail to decrypt are skipped.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import os
import sqlite3
import threading
import time
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from ..private import make_dirs

log = logging.getLogger("guardian_proxy")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions(sid TEXT PRIMARY KEY, created REAL, last_seen REAL, meta BLOB);
CREATE TABLE IF NOT EXISTS entities(sid TEXT, lookup TEXT, blob BLOB, PRIMARY KEY(sid, lookup));
CREATE TABLE IF NOT EXISTS aliases(alias TEXT PRIMARY KEY, sid TEXT, created REAL);
CREATE INDEX IF NOT EXISTS aliases_sid ON aliases(sid);
"""


def _load_key(path: Path, db: Path) -> bytes:
    if path.exists():
        mode = path.stat().st_mode & 0o777
        if mode & 0o077:
            log.warning("vault key %s had mode %o; set to 0600", path, mode)
            os.chmod(path, 0o600)
        try:
            key = base64.b64decode(path.read_bytes().strip())
        except ValueError:
            key = b""
        if len(key) != 32:
            raise ValueError(f"vault key {path} is not a base64-encoded 32-byte key: restore it from a backup, or "
                             f"move it and {db.name} aside to start with no conversation sessions")
        return key
    if db.exists():
        aside = db.with_name(f"{db.name}.unreadable-{int(time.time())}")
        log.warning("vault key missing: %s moved to %s", db, aside)
        for suffix in ("", "-wal", "-shm"):
            p = Path(str(db) + suffix)
            if p.exists():
                p.rename(Path(str(aside) + suffix))
    key = AESGCM.generate_key(bit_length=256)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(base64.b64encode(key) + b"\n")
    return key


class Vault:
    def __init__(self, state_dir: Path):
        state_dir = Path(state_dir)
        make_dirs(state_dir)  # 0700, like every directory the gateway creates
        self.path = state_dir / "sessions.db"
        self.key_path = state_dir / "vault.key"
        secret = _load_key(self.key_path, self.path)
        self._aead = AESGCM(hashlib.sha256(b"guardian-vault-enc\0" + secret).digest())
        self._mac = hashlib.sha256(b"guardian-vault-mac\0" + secret).digest()
        self._lock = threading.Lock()
        os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o600))  # 0600 from the start (sqlite: umask)
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=10)
        os.chmod(self.path, 0o600)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.executescript(_SCHEMA)

    # ------------------------------------------------------------------ crypto

    def mac(self, *parts: str) -> str:
        return hmac.new(self._mac, "\x1f".join(parts).encode("utf-8"), hashlib.sha256).hexdigest()

    def _seal(self, obj, aad: str) -> bytes:
        nonce = os.urandom(12)
        return nonce + self._aead.encrypt(nonce, json.dumps(obj, ensure_ascii=False).encode(), aad.encode())

    def _open(self, blob: bytes, aad: str):
        try:
            return json.loads(self._aead.decrypt(blob[:12], blob[12:], aad.encode()))
        except (InvalidTag, ValueError):
            return None

    # ------------------------------------------------------------------ sessions

    def load(self, sid: str) -> tuple[float, float, dict, list[dict]] | None:
        with self._lock:
            row = self._db.execute("SELECT created, last_seen, meta FROM sessions WHERE sid=?", (sid,)).fetchone()
            if row is None:
                return None
            rows = self._db.execute("SELECT lookup, blob FROM entities WHERE sid=?", (sid,)).fetchall()
        meta = self._open(row[2], sid) or {}
        ents = [d for lk, b in rows if (d := self._open(b, sid + lk)) is not None]
        return row[0], row[1], meta, ents

    def save(self, sid: str, created: float, last_seen: float, meta: dict, entities: list[dict]) -> None:
        """Entities (dicts with key "n", the normalised value) and the session meta in one transaction,
        fsynced (synchronous=FULL) when it carries entities; a meta-only update is durable against a
        crash of the proxy but not of the OS (synchronous=NORMAL), which costs no fsync."""
        sealed = [(sid, lk, self._seal(d, sid + lk)) for d in entities for lk in [self.mac(sid, d["n"])]]
        blob = self._seal(meta, sid)
        with self._lock:
            self._db.execute(f"PRAGMA synchronous={'FULL' if sealed else 'NORMAL'}")
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.executemany("INSERT OR REPLACE INTO entities(sid, lookup, blob) VALUES(?,?,?)", sealed)
                self._db.execute("INSERT INTO sessions(sid, created, last_seen, meta) VALUES(?,?,?,?) "
                                 "ON CONFLICT(sid) DO UPDATE SET last_seen=excluded.last_seen, meta=excluded.meta",
                                 (sid, created, last_seen, blob))
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def add_alias(self, alias: str, sid: str) -> None:
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO aliases(alias, sid, created) VALUES(?,?,?)",
                             (self.mac("alias", alias), sid, time.time()))

    def resolve(self, alias: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT sid FROM aliases WHERE alias=?", (self.mac("alias", alias),)).fetchone()
        return row[0] if row else None

    def sessions(self) -> list[tuple[str, float, float, dict, int]]:
        """(sid, created, last_seen, meta, entity count) for every session, newest first."""
        with self._lock:
            rows = self._db.execute("SELECT s.sid, s.created, s.last_seen, s.meta, "
                                    "(SELECT COUNT(*) FROM entities e WHERE e.sid=s.sid) FROM sessions s "
                                    "ORDER BY s.last_seen DESC").fetchall()
        return [(sid, c, ls, self._open(m, sid) or {}, n) for sid, c, ls, m, n in rows]

    def entity_types(self, sid: str) -> dict[str, int]:
        data = self.load(sid)
        out: dict[str, int] = {}
        for d in data[3] if data else []:
            out[d["e"]] = out.get(d["e"], 0) + 1
        return out

    def wipe(self, sid: str | None = None, older_than: float | None = None) -> int:
        """Delete one session (by id or id prefix), the sessions last seen before `older_than`, or all."""
        if sid is not None and not sid.isalnum():
            return 0
        with self._lock:
            if sid is not None:
                sids = [r[0] for r in self._db.execute("SELECT sid FROM sessions WHERE sid LIKE ?", (sid + "%",))]
            elif older_than is not None:
                sids = [r[0] for r in self._db.execute("SELECT sid FROM sessions WHERE last_seen < ?", (older_than,))]
            else:
                sids = [r[0] for r in self._db.execute("SELECT sid FROM sessions")]
            self._db.execute("BEGIN IMMEDIATE")
            for s in sids:
                for table in ("entities", "aliases", "sessions"):
                    self._db.execute(f"DELETE FROM {table} WHERE sid=?", (s,))
            self._db.execute("COMMIT")
            if sid is None and older_than is None:
                self._db.execute("VACUUM")
        return len(sids)

    def close(self) -> None:
        with self._lock:
            self._db.close()
