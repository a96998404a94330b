"""The pseudonym vault: conversation state, encrypted at rest, in the configured back end (`settings.state`).

    local   <state_dir>/sessions.db    SQLite, WAL journal (guardian_proxy/state/sessions_sqlite.py)
            <state_dir>/vault.key      32 random bytes (base64), mode 0600, created on first use
    redis   hashes under the fleet's prefix (guardian_proxy/state/sessions_redis.py); the key is the fleet's
            (`state.key_file` or $GUARDIAN_VAULT_KEY), the same on every gateway

This module holds the crypto; the back end only stores what it is given. Every value (originals, surrogates,
name parts, types) is sealed with AES-256-GCM (`cryptography`), the row's session id and lookup key bound as
associated data so rows cannot be swapped. Lookup keys, aliases and session ids are HMAC-SHA256 under a key
derived from the same secret: nothing stored reveals a value without the key. Entity rows are only ever
inserted or completed (a surrogate added), never rewritten with less, and they are committed before the
request that uses them leaves the machine. Hard-blocked values (SSN, card, bank account) are stored without
their original. A session idle for longer than `session.idle_expiry_s` is deleted with its entities and
aliases.

If the key file is missing while a database exists, the old database cannot be read: it is moved aside
(`sessions.db.unreadable-<time>`) and a new one started. Rows that fail to decrypt are skipped. Several
processes may open the vault of one state dir at once: the key and the schema are made under a flock
(`<state_dir>/vault.lock`), so one key is made and every process reads that one.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import os
import time
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from ..private import make_dirs
from ..state import fleet_key, open_sessions, uses_redis
from ..state.filelock import exclusive
from ..state.sessions import SessionRows

log = logging.getLogger("guardian_proxy")


def _load_key(path: Path, db: Path) -> bytes:
    """The local vault key (call it under the state dir's vault lock): read, or made when there is none."""
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
        f.flush()
        os.fsync(f.fileno())
    return key


class Vault:
    """`Vault(state_dir)`: the local back end under `state_dir`; `Vault.for_settings(settings)`: the configured
    one; `Vault(rows=..., secret=...)`: any back end (guardian_proxy/state/sessions.py) with a 32-byte secret."""

    def __init__(self, state_dir: Path | None = None, *, rows: SessionRows | None = None,
                 secret: bytes | None = None):
        if rows is None:
            state_dir = Path(state_dir)
            make_dirs(state_dir)  # 0700, like every directory the gateway creates
            self.path = state_dir / "sessions.db"
            self.key_path = state_dir / "vault.key"
            with exclusive(state_dir / "vault.lock"):  # several processes start at once: one key, one schema
                secret = _load_key(self.key_path, self.path)
                rows = open_sessions(state_dir=state_dir)
        elif secret is None or len(secret) != 32:
            raise ValueError("a vault back end needs the 32-byte vault key")
        self.rows = rows
        self._aead = AESGCM(hashlib.sha256(b"guardian-vault-enc\0" + secret).digest())
        self._mac = hashlib.sha256(b"guardian-vault-mac\0" + secret).digest()

    @classmethod
    def for_settings(cls, settings) -> Vault:
        """The vault of `settings.state`: local under the state dir, or the fleet's in Redis (its key from
        `state.key_file` / $GUARDIAN_VAULT_KEY: ConfigError naming the fix when there is none)."""
        if not uses_redis(settings):
            return cls(settings.state_dir)
        return cls(rows=open_sessions(settings), secret=fleet_key(settings))

    @property
    def _db(self):
        """The local back end's SQLite connection (tests)."""
        return self.rows.db

    # ------------------------------------------------------------------ crypto

    def mac(self, *parts: str) -> str:
        return hmac.new(self._mac, "\x1f".join(parts).encode("utf-8"), hashlib.sha256).hexdigest()

    def _seal(self, obj, aad: str) -> bytes:
        nonce = os.urandom(12)
        return nonce + self._aead.encrypt(nonce, json.dumps(obj, ensure_ascii=False).encode(), aad.encode())

    def _open(self, blob: bytes, aad: str):
        try:
            return json.loads(self._aead.decrypt(blob[:12], blob[12:], aad.encode()))
        except (InvalidTag, ValueError, TypeError):
            return None

    # ------------------------------------------------------------------ sessions

    def head(self, sid: str) -> tuple[int, float] | None:
        """(rev, last_seen) of the stored session: one cheap read, to tell whether a cached copy is current."""
        return self.rows.head(sid)

    def load_rev(self, sid: str) -> tuple[int, tuple[float, float, dict, list[dict]]] | None:
        """(rev, (created, last_seen, meta, entities)) read as one snapshot, or None."""
        rec = self.rows.load(sid)
        if rec is None:
            return None
        created, last_seen, rev, meta, rows = rec
        ents = [d for lk, b in rows if (d := self._open(b, sid + lk)) is not None]
        return rev, (created, last_seen, self._open(meta, sid) or {}, ents)

    def load(self, sid: str) -> tuple[float, float, dict, list[dict]] | None:
        rec = self.load_rev(sid)
        return rec[1] if rec else None

    def save(self, sid: str, created: float, last_seen: float, meta: dict, entities: list[dict]) -> int:
        """Entities (dicts with key "n", the normalised value) and the session meta in one transaction,
        durable (fsynced, locally) when it carries entities; the session's new rev."""
        sealed = [(lk, self._seal(d, sid + lk)) for d in entities for lk in [self.mac(sid, d["n"])]]
        return self.rows.save(sid, created, last_seen, self._seal(meta, sid), sealed)

    def add_alias(self, alias: str, sid: str) -> None:
        self.rows.add_alias(self.mac("alias", alias), sid)

    def resolve(self, alias: str) -> str | None:
        return self.rows.resolve(self.mac("alias", alias))

    def sessions(self) -> list[tuple[str, float, float, dict, int]]:
        """(sid, created, last_seen, meta, entity count) for every session, newest first."""
        return [(sid, c, ls, self._open(m, sid) or {}, n) for sid, c, ls, m, n in self.rows.sessions()]

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
        return self.rows.wipe(sid, older_than)

    def lock(self, sid: str):
        """The session's lock across every process of the back end (a context manager)."""
        return self.rows.lock(sid)

    def close(self) -> None:
        self.rows.close()
