"""The sessions of this process: a cache in front of the vault, one lock per conversation that holds across
processes, idle expiry (checked on access and swept every 10 minutes), and the de-masker of each session.

Several processes (the proxy's evaluation workers, the proxy itself, other gateways on one Redis) serve
turns of one conversation, so no cached copy is trusted: every session carries a revision `rev` in the
store, bumped by each save. A turn takes the session's lock (a flock locally, a Redis lock in a fleet),
reads the stored rev (one cheap read) and reloads the session when it differs from the cached one's, then
applies the turn and saves under the same lock. `demasker(sid)` (the proxy's, for replies to requests a
worker rewrote) compares the stored rev likewise and rebuilds when it is newer; when the store cannot be
reached it keeps to the de-masker it has, if any. A session wiped elsewhere (`sessions wipe`, expiry) starts
afresh at its next turn. Aliases (response ids that continue a conversation) are written off the request
path on a one-thread pool, straight to the store, so another process resolves them at the next turn.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

from .demask import Demasker
from .registry import SessionState
from .surrogates import _COMMON, _NAME_PART
from .vault import Vault

log = logging.getLogger("guardian_proxy")


class SessionStore:
    """`settings` (optional) chooses the back end (`settings.state`); without it, the local one in `state_dir`."""

    def __init__(self, state_dir: Path, idle_expiry_s: int, settings=None):
        self.state_dir = Path(state_dir)
        self.idle = idle_expiry_s
        self.settings = settings
        self._vault: Vault | None = None
        self._glock = threading.Lock()
        self._states: dict[str, SessionState] = {}
        self._revs: dict[str, int] = {}  # the stored rev each cached state matches
        self._locks: dict[str, threading.Lock] = {}
        self._dm: dict[str, tuple[tuple[int, int], Demasker]] = {}
        self._last_sweep = 0.0
        self._bg = ThreadPoolExecutor(max_workers=1, thread_name_prefix="guardian-vault")

    @property
    def vault(self) -> Vault:
        with self._glock:
            if self._vault is None:
                self._vault = Vault.for_settings(self.settings) if self.settings is not None else Vault(self.state_dir)
            return self._vault

    @contextmanager
    def lock(self, sid: str):
        """The conversation's lock: this process's threads, then every process of the store."""
        with self._glock:
            tlock = self._locks.setdefault(sid, threading.Lock())
        with tlock:
            with self.vault.lock(sid):
                yield

    def state(self, sid: str) -> SessionState:
        """The session as stored now (call it under `lock(sid)`): the cached copy when the stored rev is the
        one it was read or saved at, else read again; a fresh one when none is stored or it expired."""
        now = time.time()
        idle = self.idle
        head = self.vault.head(sid)
        st = self._states.get(sid)
        if st is not None and (head is None or head[0] != self._revs.get(sid)):
            st = None  # changed or wiped by another process
        last = st.last_seen if st is not None else head[1] if head is not None else now
        if now - last > idle:
            self._forget(sid)
            st, head = None, None
        if st is None:
            rec = self.vault.load_rev(sid) if head is not None else None
            if rec is not None and now - rec[1][1] <= idle:
                rev, st = rec[0], SessionState.from_meta(sid, *rec[1])
                st.saved_sig = json.dumps(st.meta(), sort_keys=True)
            else:
                if rec is not None:
                    self.vault.wipe(sid)
                rev, st = 0, SessionState(sid=sid)
            with self._glock:
                self._states[sid] = st
                self._revs[sid] = rev
        if now - self._last_sweep > 600:
            self._last_sweep = now
            self.vault.wipe(older_than=now - idle)
            with self._glock:
                for k in [k for k, s in self._states.items() if now - s.last_seen > min(idle, 900) and k != sid]:
                    self._drop(k)
                    lock = self._locks.get(k)
                    if lock is not None and not lock.locked():
                        self._locks.pop(k, None)
        return st

    def _drop(self, sid: str) -> None:
        self._states.pop(sid, None)
        self._revs.pop(sid, None)
        self._dm.pop(sid, None)

    def _forget(self, sid: str) -> None:
        with self._glock:
            self._drop(sid)
        self.vault.wipe(sid)

    def wipe(self, sid: str | None = None) -> int:
        with self._glock:
            for k in [k for k in self._states if sid is None or k.startswith(sid)]:
                self._drop(k)
        return self.vault.wipe(sid)

    def persist(self, st: SessionState) -> None:
        """New mappings are committed (fsynced locally) before the request leaves; an unchanged session only
        refreshes its last-seen time, at most once a minute. Each save bumps the stored rev."""
        now = time.time()
        meta = st.meta()
        sig = json.dumps(meta, sort_keys=True)
        if st.dirty or sig != st.saved_sig or now - st.last_seen > 60:
            st.last_seen = now
            rev = self.vault.save(st.sid, st.created, st.last_seen, meta,
                                  [st.entities[n].to_dict() for n in st.dirty if n in st.entities])
            st.dirty.clear()
            st.saved_sig = sig
            with self._glock:
                self._revs[st.sid] = rev

    def refresh(self, st: SessionState) -> Demasker:
        """Rebuild the session's de-masker if its mapping changed (called under the session lock)."""
        key = (self._revs.get(st.sid, 0), st.version + len(st.entities))
        cached = self._dm.get(st.sid)
        if cached is None or cached[0] != key:
            cached = self._dm[st.sid] = (key, Demasker(mapping_pairs(st), age_numbers(st)))
        return cached[1]

    def demasker(self, sid: str) -> Demasker:
        """The de-masker of a session as stored now. Called on the event loop for responses: one cheap read
        of the stored rev; the session is read again (without the lock: a snapshot) only when it is newer
        than the cached de-masker's. The store unreachable: the cached one, else StateUnavailable."""
        cached = self._dm.get(sid)
        try:
            head = self.vault.head(sid)
        except Exception as e:
            if cached is None:
                raise
            log.warning("guardian: session store unreachable (%s): replies de-masked with the mapping known here",
                        type(e).__name__)
            return cached[1]
        if head is None:
            self._dm.pop(sid, None)
            return Demasker([])
        if cached is not None and cached[0][0] == head[0]:
            return cached[1]
        rec = self.vault.load_rev(sid)
        if rec is None:
            return Demasker([])
        st = SessionState.from_meta(sid, *rec[1])
        dm = Demasker(mapping_pairs(st), age_numbers(st))
        self._dm[sid] = ((rec[0], st.version + len(st.entities)), dm)
        return dm

    def alias(self, alias: str, sid: str) -> None:
        self._bg.submit(self._add_alias, alias, sid)

    def _add_alias(self, alias: str, sid: str) -> None:
        try:
            self.vault.add_alias(alias, sid)
        except Exception as e:  # the next turn that names this response starts its own session
            log.warning("guardian: a response id of a session was not recorded (%s)", type(e).__name__)

    def flush(self) -> None:
        """Wait for the aliases submitted so far to be written."""
        self._bg.submit(lambda: None).result()

    def close(self) -> None:
        self._bg.shutdown(wait=True)
        if self._vault is not None:
            self._vault.close()


def age_numbers(st: SessionState) -> dict[int, int]:
    """The stand-in age → the real one, from the AGE values with one number each ("39 years old" for "41 years
    old"); a stand-in number two real ages share is left out (ambiguous)."""
    out: dict[int, int] = {}
    clash: set[int] = set()
    for e in st.entities.values():
        if e.entity != "AGE" or e.blocked or not e.surrogate or not e.original:
            continue
        real, fake = re.findall(r"\d+", e.original), re.findall(r"\d+", e.surrogate)
        if len(real) == 1 and len(fake) == 1 and real != fake and len(fake[0]) <= 3:
            f, r = int(fake[0]), int(real[0])
            if out.get(f, r) != r:
                clash.add(f)
            out[f] = r
    return {f: r for f, r in out.items() if f not in clash}


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
