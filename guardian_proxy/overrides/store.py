"""User overrides that persist, merged with `settings.overrides`: `<state_dir>/overrides.yaml` (state.backend
local), or the fleet's list in Redis (state.backend redis); guardian_proxy.state.open_overrides opens the
back end.

    overrides:
      - {action: deny,  domain: tracker.example}
      - {action: allow, domain: bank.example, category: financial}
      - {action: level, domain: chat.example, level: 4}

The effective list is the config file's entries first, then the store's, and the LAST matching entry
wins (guardian_proxy/overrides/match.py), so what the user adds from the CLI or the dashboard beats the
config. Several processes hold a store on the same state (the proxy, its worker processes, the CLI, the
dashboard; with Redis every gateway of the fleet), and none trusts its copy: the local store stats the file
at every request, the Redis store reads a generation counter at most every 0.5 s, and both reload the list
only when it changed. Writes are atomic against every other writer (a file lock and a rename; WATCH/MULTI).

A store that cannot be used while the proxy runs — the file does not validate, is not YAML, is not UTF-8,
cannot be read (permissions), a directory stands in its place; Redis does not answer — keeps the last good
list, with one warning per change of the file (per outage of Redis, asked again every RETRY_S); the user's
deny overrides go on applying. At load (`for_settings`, `guardian-proxy run`) a bad file is an error, in one
line naming the file and the fix.

Every rule has a stable id (`guardian-proxy overrides` shows it, `--remove ID` removes it): numbers are
positions and change when a rule is removed, ids never do. A rule written before ids existed gets an id
derived from its content (the same in every process) and keeps it once the file is next written. A rule
can last forever, once, for a time or until the proxy restarts (guardian_proxy/overrides/terms.py); one
that no longer applies is listed as spent / expired / ended and dropped at the next add or remove.

A once rule is spent exactly once across all processes and gateways: its first claim makes the back end's
spent mark (a file made with O_EXCL; HSETNX), and whoever finds the mark made does not get the rule.
Match counts: the running proxy counts each rule it applies and adds the counts to the store
(`overrides.counts.json` {id: {matched, last}} under the lock; HINCRBY) at most every FLUSH_S seconds, so
the counts of several processes add up; the CLI and the dashboard add what this process has not written yet.
The proxy never rewrites overrides.yaml for a count.
"""

from __future__ import annotations

import atexit
import logging
import os
import secrets
import threading
import time
import weakref
from pathlib import Path

from ..config import Override, Settings
from ..errors import ConfigError
from ..state import StateUnavailable, open_overrides
from ..state.overrides import FIX, ID_ALPHABET, OverrideBackend, identify
from . import terms

log = logging.getLogger("guardian_proxy.overrides")

FLUSH_S = 2.0  # the proxy writes match counts at most this often
RETRY_S = 5.0  # a shared store that did not answer is asked again after this long (the last good list applies)
_TARGET = ("domain", "owner", "category", "recipient", "app")
_STALE = object()


def _new_id(taken: set[str]) -> str:
    while True:
        i = secrets.choice(ID_ALPHABET[:23]) + "".join(secrets.choice(ID_ALPHABET) for _ in range(4))
        if i not in taken:
            return i


def _target(o: Override) -> tuple:
    return tuple(getattr(o, k) for k in _TARGET)


def _term_kind(o: Override) -> str:
    return "once" if o.once else "expires" if o.expires else "run" if o.run else "forever"


class Active(list):
    """The effective list (`OverrideStore.current()`); `claim(o)` records that the proxy applies `o`; `peek(o)`:
    whether `o` would apply now, without counting or spending it (a CORS preflight: overrides/match.py)."""

    def __init__(self, items, claim, peek=None):
        super().__init__(items)
        self.claim = claim
        self.peek = peek


_LIVE: weakref.WeakSet = weakref.WeakSet()


@atexit.register
def _flush_all() -> None:
    for store in list(_LIVE):
        store.flush()


class OverrideStore:
    """The config's overrides plus the stored ones. `path=None` (and no `backend`) keeps only the config's.
    `backend`: where the stored rules live (guardian_proxy.state.open_overrides: the local back end on `path`,
    the default, or the fleet's Redis)."""

    def __init__(self, path: Path | None, base: list[Override] | None = None, backend: OverrideBackend | None = None):
        self.path = Path(path) if path is not None else None
        self.base = list(base or [])
        if backend is None and self.path is not None:
            backend = open_overrides(path=self.path)
        self.backend = backend
        self._stamp: object = None
        self._entries: list[Override] = []
        self._lock = threading.Lock()
        self._warned: object = None
        self._checked = float("-inf")  # when the back end was last asked whether the list changed
        self._down: str | None = None  # why the back end could not be reached (warned once)
        # config entries keep their objects as given; their ids (derived from content) are kept beside them
        self._base_ids = {id(o): b.id for o, b in zip(self.base, identify(self.base, "c"), strict=True)}
        #: False: what-ifs (`check`) look the rules up without counting or spending them
        self.live = True
        self._count_lock = threading.Lock()
        self._flush_lock = threading.Lock()  # held across a whole flush (the flusher thread's and an explicit one)
        self._pending: dict[str, tuple[int, str]] = {}  # id → (matches not yet written, last match time)
        self._spent: dict = {}  # once rules this process knows spent: id → when (datetime)
        self._spent_unsaved: set[str] = set()
        self._wake = threading.Event()
        self._flusher: threading.Thread | None = None
        self._flusher_pid = 0

    @classmethod
    def for_settings(cls, settings: Settings) -> OverrideStore:
        """The store of the configured back end (`settings.state`): `<state_dir>/overrides.yaml`, or the
        fleet's list in Redis. A stored list that does not validate is a ConfigError here (a proxy must not
        start with the user's overrides silently missing); Redis not answering is one warning, and the store
        goes on asking (the config's overrides apply meanwhile)."""
        backend = open_overrides(settings)
        store = cls(backend.path, settings.overrides, backend)
        try:
            store.stored()
        except StateUnavailable as e:  # only a shared store raises it: the local file raises ConfigError
            store._unavailable(e)
        return store

    @property
    def where(self) -> str:
        """The store in words (a file, or `redis HOST:PORT/DB (prefix P)`)."""
        return self.backend.where if self.backend is not None else "the config file only"

    # ------------------------------------------------------------------ reading

    def _unavailable(self, e: Exception) -> None:
        if self._down is None:
            log.warning("keeping the last good overrides: %s", e)
        self._down = str(e)

    def stored(self, strict: bool = True) -> list[Override]:
        """The stored rules, re-read only when the back end says they changed (local: the file's stat, at
        every call; Redis: the generation counter, at most every check_s). strict=False keeps the last good
        list when the store cannot be used (a bad edit, Redis down: one warning; a running proxy must not
        fail); strict=True raises a one-line ConfigError (StateUnavailable for Redis)."""
        b = self.backend
        if b is None:
            return []
        if not strict and b.check_s and time.monotonic() - self._checked < (RETRY_S if self._down else b.check_s):
            return list(self._entries)
        # a shared back end: one request asks, the others go on with the list they have meanwhile
        if not self._lock.acquire(blocking=strict or not b.check_s):
            return list(self._entries)
        try:
            self._checked = time.monotonic()
            try:
                stamp = b.stamp()
                if stamp == self._stamp or (not strict and stamp is not None and stamp == self._warned):
                    self._down = None
                    return list(self._entries)
                entries = b.load()
            except StateUnavailable as e:
                if strict:
                    raise
                self._unavailable(e)
                return list(self._entries)
            except Exception as e:  # noqa: BLE001 — a running proxy keeps the last good list, whatever broke
                if strict:
                    if isinstance(e, ConfigError):
                        raise
                    raise ConfigError(f"cannot read overrides file {b.where} ({type(e).__name__}); {FIX}") from e
                if self._warned != stamp:
                    why = str(e) if isinstance(e, ConfigError) else type(e).__name__
                    log.warning("ignoring the new %s (keeping the previous overrides): %s", b.where, why)
                    self._warned = stamp
                return list(self._entries)
            self._entries, self._stamp, self._down = entries, stamp, None
            return list(entries)
        finally:
            self._lock.release()

    def _changed(self) -> None:
        """This process wrote the store: the next read asks the back end at once."""
        self._checked = float("-inf")
        self._stamp = _STALE

    def current(self) -> list[Override]:
        """The effective list, in match order (config first, then the store; last match wins), with
        `claim` for find_override (overrides/match.py). Rules that no longer apply are still in it:
        find_override skips them (their term is checked at every request)."""
        return Active(self.base + self.stored(strict=False), self.claim, self.peek)

    def _marks(self, strict: bool = True) -> dict:
        """Every spent once rule the back end knows (any process's), plus this process's."""
        try:
            marks = dict(self.backend.spent()) if self.backend is not None else {}
        except StateUnavailable:
            if strict:
                raise
            marks = {}
        marks.update(self._spent)
        return marks

    def listing(self, strict: bool = True) -> list[tuple[int, str, Override]]:
        """(number, source, override) with numbers from 1 in match order (positions: they change).
        strict=False: the last good list when the store cannot be used."""
        rows = [("config", o) for o in self.base] + [("store", o) for o in self.stored(strict)]
        marks = self._marks(strict)
        return [(i, src, self._overlay(o, marks)) for i, (src, o) in enumerate(rows, 1)]

    def rows(self, strict: bool = True) -> list[dict]:
        """What `guardian-proxy overrides` and the dashboard show: each rule with its id, source, state,
        term, when it was made, when it ends, how often it matched and when last. strict=False (the
        dashboard): the last good list and this process's counts when the store cannot be used."""
        try:
            counts = self.counts()
        except StateUnavailable:
            if strict:
                raise
            counts = self.counts(stored=False)
        out = []
        for n, src, o in self.listing(strict):
            c = counts.get(o.id or "", {})
            out.append({"n": n, "id": o.id, "source": src, **o.model_dump(mode="json", exclude_none=True),
                        "state": terms.state(o), "term": terms.term_of(o),
                        "matched": int(c.get("matched", 0)), "last_matched": c.get("last")})
        return out

    def key(self, o: Override) -> str:
        """The rule's id (a config entry's derived one)."""
        return o.id or self._base_ids.get(id(o), "")

    def _overlay(self, o: Override, marks: dict | None = None) -> Override:
        if not o.id and id(o) in self._base_ids:
            o = o.model_copy(update={"id": self._base_ids[id(o)]})
        spent = (self._spent if marks is None else marks).get(o.id or "")
        return o.model_copy(update={"spent": spent}) if spent and o.once and o.spent is None else o

    # ------------------------------------------------------------------ matches

    def claim(self, o: Override) -> bool:
        """The proxy applies `o` to a request: count it; a once rule is spent by its first claim in any
        process (the back end's mark: False for every later claim, here or in another process, so no second
        request gets it). When the mark cannot be made (the store is down) a deny once rule applies without
        being spent and any other once rule does not apply. With `live` False nothing is counted or spent."""
        if not self.live:
            return self.peek(o)
        key = self.key(o)
        when = terms.now()
        stamp = when.isoformat()
        if o.once:
            with self._count_lock:
                if o.spent is not None or key in self._spent:
                    return False
                self._spent[key] = when  # this process's other threads: taken
            got = self._spend(key, when, o)
            if got is None:  # the mark could not be made: the fail rule
                with self._count_lock:
                    self._spent.pop(key, None)
                return o.action == "deny"
            if not got:  # another process had it
                return False
            with self._count_lock:
                self._spent_unsaved.add(key)
        with self._count_lock:
            n, _ = self._pending.get(key, (0, stamp))
            self._pending[key] = (n + 1, stamp)
        self._start_flusher(now=bool(o.once))
        return True

    def peek(self, o: Override) -> bool:
        """Whether `o` would apply to a request now (a once rule not yet spent here nor, as far as this process
        knows, elsewhere), without counting it or spending it: for a request that must not use up a once rule
        (a browser's CORS preflight, which comes before the call the rule is meant for)."""
        return not (o.once and (o.spent is not None or self.key(o) in self._spent))

    def _spend(self, key: str, when, o: Override) -> bool | None:
        if self.backend is None:
            return True  # config only: this process is the only one
        try:
            got = self.backend.spend(key, when)
        except (StateUnavailable, OSError) as e:
            log.warning("cannot mark the once override %s spent in %s (%s): %s", key, self.backend.where, e,
                        "it denies until it can" if o.action == "deny" else "it does not apply until it can")
            return None
        return got

    def _start_flusher(self, now: bool = False) -> None:
        if self.backend is None:
            return
        if self._flusher is None or self._flusher_pid != os.getpid():  # a forked worker starts its own
            with self._count_lock:
                if self._flusher is None or self._flusher_pid != os.getpid():
                    _LIVE.add(self)
                    self._flusher_pid = os.getpid()
                    self._flusher = threading.Thread(target=self._flush_loop, name="guardian-override-counts",
                                                     daemon=True)
                    self._flusher.start()
        if now:
            self._wake.set()

    def _flush_loop(self) -> None:
        while True:  # at most one write every FLUSH_S; a once rule wakes it at once
            self._wake.wait(FLUSH_S)
            self._wake.clear()
            self.flush()

    def counts(self, stored: bool = True) -> dict[str, dict]:
        """id → {matched, last}: the store's counts (every process's) plus this process's not yet written."""
        have = self.backend.counts() if self.backend is not None and stored else {}
        out = {k: dict(v) for k, v in have.items()}
        with self._count_lock:
            for key, (n, last) in self._pending.items():
                c = out.setdefault(key, {"matched": 0})
                c["matched"] = int(c.get("matched", 0)) + n
                c["last"] = last
        return out

    def flush(self) -> None:
        """Add the counts not yet written (and the spent times) to the store. Never raises: what could not
        be written is kept for the next try."""
        if self.backend is None:
            return
        with self._flush_lock:  # one write at a time: a flush returns once what was counted before it is written
            self._flush_once()

    def _flush_once(self) -> None:
        with self._count_lock:
            pending, self._pending = self._pending, {}
            spent = {k: self._spent[k] for k in self._spent_unsaved}
            self._spent_unsaved = set()
        if not pending and not spent:
            return
        try:
            self.backend.flush(pending, spent, set(self._base_ids.values()))
        except Exception as e:  # noqa: BLE001 — a count must never cost a request; retried next time
            log.warning("could not write override counts to %s: %s", self.backend.where, e)
            with self._count_lock:
                for key, (n, last) in pending.items():
                    m, _ = self._pending.get(key, (0, last))
                    self._pending[key] = (m + n, last)
                self._spent_unsaved |= set(spent)

    # ------------------------------------------------------------------ writing

    def _in_force(self, entries: list[Override], marks: dict | None = None) -> list[Override]:
        """The entries that still apply (spent, expired and ended rules are dropped when the store is written)."""
        return [o for o in entries if terms.state(self._overlay(o, marks)) == "active"]

    def _update(self, change) -> None:
        if self.backend is None:
            raise ConfigError("no override store (no state directory)")
        self.backend.update(change)
        self._changed()

    def add(self, override: Override) -> int:
        """Append (see `add_rule`); returns its number in `listing()`."""
        self.add_rule(override)
        return next(n for n, _, o in self.listing() if o.id == self._last_added)

    def add_rule(self, override: Override) -> Override:
        """Append a rule with a new id and `created` now, replacing an earlier rule for the same target with
        the same kind of term (a rule for an hour does not remove the permanent one under it: when it ends,
        that one applies again). Rules that no longer apply are dropped. Returns the rule as stored. A store
        shared by several gateways refuses an until-restart rule (it would end with one gateway's run)."""
        if override.run and self.backend is not None and self.backend.shared:
            raise ConfigError("until-restart names one gateway's run, and this store is shared by the fleet "
                              f"({self.backend.where}); use --for DURATION or --once")
        made: list[Override] = []

        def change(entries: list[Override]) -> list[Override]:
            entries = self._in_force(entries, self._marks())
            entries = [o for o in entries
                       if not (_target(o) == _target(override) and _term_kind(o) == _term_kind(override))]
            taken = {o.id for o in entries} | set(self._base_ids.values())
            rule = override.model_copy(update={"id": override.id if override.id and override.id not in taken
                                               else _new_id(taken),
                                               "created": override.created or terms.now().replace(microsecond=0)})
            made[:] = [rule]
            return entries + [rule]

        self._update(change)
        self._last_added = made[0].id
        return made[0]

    def remove(self, key: int | str) -> Override:
        """Remove the rule with this id (a str), or — for old callers — the one numbered as in `listing()`
        (an int). Config entries cannot be removed here."""
        if isinstance(key, str):
            if key in self._base_ids.values():
                raise ConfigError(f"override {key} comes from the config file; edit that file to remove it")
        elif 1 <= key <= len(self.base):
            raise ConfigError(f"override {key} comes from the config file; edit that file to remove it")
        gone: list[Override] = []

        def change(entries: list[Override]) -> list[Override]:
            if isinstance(key, str):
                idx = [i for i, o in enumerate(entries) if o.id == key]
                if not idx:
                    known = ", ".join(o.id for o in entries if o.id) or "none"
                    raise ConfigError(f"no override with id {key!r} (ids: {known}; `guardian-proxy overrides` "
                                      f"lists them)")
                i = idx[0]
            else:
                i = key - len(self.base) - 1
                if not 0 <= i < len(entries):
                    total = len(self.base) + len(entries)
                    raise ConfigError(f"no override numbered {key} (there are {total})")
            gone[:] = [entries.pop(i)]
            return self._in_force(entries, self._marks())

        self._update(change)
        return gone[0]
