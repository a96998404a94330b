"""The sessions of this proxy: an in-memory cache in front of the vault, one lock per conversation,
idle expiry (checked on access and swept every 10 minutes), and the de-masker of each session (rebuilt
when its mapping grows). Aliases (response ids that continue a conversation) are written off the
request path on a one-thread pool.
"""

from __future__ import annotations

import json
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .demask import Demasker
from .registry import SessionState
from .surrogates import _COMMON, _NAME_PART
from .vault import Vault


class SessionStore:
    def __init__(self, state_dir: Path, idle_expiry_s: int):
        self.state_dir = Path(state_dir)
        self.idle = idle_expiry_s
        self._vault: Vault | None = None
        self._glock = threading.Lock()
        self._states: dict[str, SessionState] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._dm: dict[str, tuple[int, Demasker]] = {}
        self._last_sweep = 0.0
        self._bg = ThreadPoolExecutor(max_workers=1, thread_name_prefix="guardian-vault")

    @property
    def vault(self) -> Vault:
        with self._glock:
            if self._vault is None:
                self._vault = Vault(self.state_dir)
            return self._vault

    def lock(self, sid: str) -> threading.Lock:
        with self._glock:
            return self._locks.setdefault(sid, threading.Lock())

    def state(self, sid: str) -> SessionState:
        now = time.time()
        idle = self.idle
        st = self._states.get(sid)
        if st is not None and now - st.last_seen > idle:
            self._forget(sid)
            st = None
        if st is None:
            rec = self.vault.load(sid)
            if rec is not None and now - rec[1] <= idle:
                st = SessionState.from_meta(sid, *rec)
            else:
                if rec is not None:
                    self.vault.wipe(sid)
                st = SessionState(sid=sid)
            with self._glock:
                self._states[sid] = st
        if now - self._last_sweep > 600:
            self._last_sweep = now
            self.vault.wipe(older_than=now - idle)
            with self._glock:
                for k in [k for k, s in self._states.items() if now - s.last_seen > min(idle, 900) and k != sid]:
                    self._states.pop(k, None)
                    self._dm.pop(k, None)
                    lock = self._locks.get(k)
                    if lock is not None and not lock.locked():
                        self._locks.pop(k, None)
        return st

    def _forget(self, sid: str) -> None:
        with self._glock:
            self._states.pop(sid, None)
            self._dm.pop(sid, None)
        self.vault.wipe(sid)

    def wipe(self, sid: str | None = None) -> int:
        with self._glock:
            for k in [k for k in self._states if sid is None or k.startswith(sid)]:
                self._states.pop(k, None)
                self._dm.pop(k, None)
        return self.vault.wipe(sid)

    def persist(self, st: SessionState) -> None:
        """New mappings are committed (fsynced) before the request leaves; an unchanged session only
        refreshes its last-seen time, at most once a minute."""
        now = time.time()
        meta = st.meta()
        sig = json.dumps(meta, sort_keys=True)
        if st.dirty or sig != st.saved_sig or now - st.last_seen > 60:
            st.last_seen = now
            self.vault.save(st.sid, st.created, st.last_seen, meta,
                            [st.entities[n].to_dict() for n in st.dirty if n in st.entities])
            st.dirty.clear()
            st.saved_sig = sig

    def refresh(self, st: SessionState) -> Demasker:
        """Rebuild the session's de-masker if its mapping grew (called under the session lock)."""
        key = st.version + len(st.entities)
        cached = self._dm.get(st.sid)
        if cached is None or cached[0] != key:
            cached = self._dm[st.sid] = (key, Demasker(mapping_pairs(st)))
        return cached[1]

    def demasker(self, sid: str) -> Demasker:
        """The de-masker of a session. Called on the event loop for responses: it reads the one built
        when the request was rewritten and only takes the session lock when none is cached."""
        cached = self._dm.get(sid)
        if cached is not None:
            return cached[1]
        with self.lock(sid):
            st = self._states.get(sid)
            if st is None:
                rec = self.vault.load(sid)
                st = SessionState.from_meta(sid, *rec) if rec else SessionState(sid=sid)
            return self.refresh(st)

    def alias(self, alias: str, sid: str) -> None:
        self._bg.submit(self.vault.add_alias, alias, sid)

    def close(self) -> None:
        self._bg.shutdown(wait=True)
        if self._vault is not None:
            self._vault.close()


def mapping_pairs(st: SessionState) -> list[tuple[str, str, bool]]:
    """(surrogate, real, case-insensitive) for de-masking; bare short numbers are left out (ambiguous)."""
    pairs: list[tuple[str, str, bool]] = []
    for e in st.entities.values():
        sur = e.surrogate
        if e.blocked or not sur or not e.original or len(sur) < 3 or re.fullmatch(r"[\d.,\s]{1,4}", sur):
            continue
        pairs.append((sur, e.original, True))
        if e.entity == "PERSON":
            real = [m.group(0) for m in _NAME_PART.finditer(e.original)]
            fake = [m.group(0) for m in _NAME_PART.finditer(sur)]
            if len(real) == len(fake):
                for r, f in zip(real, fake, strict=True):
                    if r != f and len(f) >= 3 and f.casefold() not in _COMMON:
                        pairs.append((f, r, False))
    return pairs
