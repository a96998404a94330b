"""User overrides that persist: `<state_dir>/overrides.yaml`, merged with `settings.overrides`.

    overrides:
      - {action: deny,  domain: tracker.example}
      - {action: allow, domain: bank.example, category: financial}
      - {action: level, domain: chat.example, level: 4}

The effective list is the config file's entries first, then the store's, and the LAST matching entry
wins (guardian_proxy.risk.find_override), so what the user adds from the CLI or the dashboard beats the
config. The store re-reads the file whenever its size, mtime or inode changes, so a running proxy, the
dashboard and the CLI see each other's changes on the next request. Writers take an exclusive lock on a
sibling `.lock` file and replace the file atomically; a reader never sees half a file.

A file that cannot be used while the proxy runs — it does not validate, is not YAML, is not UTF-8, cannot
be read (permissions), or a directory stands in its place — keeps the last good list, with one warning per
change of the file; the user's deny overrides go on applying. At load (`for_settings`, `guardian-proxy run`)
the same file is an error, in one line naming the file and the fix.

Every rule has a stable id (`guardian-proxy overrides` shows it, `--remove ID` removes it): numbers are
positions and change when a rule is removed, ids never do. A rule written before ids existed gets an id
derived from its content (the same in every process) and keeps it once the file is next written. A rule
can last forever, once, for a time or until the proxy restarts (guardian_proxy/override_terms.py); one
that no longer applies is listed as spent / expired / ended and dropped at the next add or remove.

Match counts: the running proxy counts each rule it applies and adds the counts to the sidecar
`overrides.counts.json` ({id: {matched, last}}) at most every FLUSH_S seconds (a once rule at once, with
its `spent` time written into overrides.yaml), under the same lock; the CLI and the dashboard add what
this process has not written yet. The proxy never rewrites overrides.yaml for a count.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import logging
import os
import secrets
import threading
import weakref
from collections.abc import Iterator
from pathlib import Path

import yaml
from pydantic import ValidationError

from . import override_terms as terms
from .config import Override, Settings, read_yaml, validation_problem
from .errors import ConfigError
from .private import make_dirs, open_append, write_atomic

log = logging.getLogger("guardian_proxy.overrides")

FILE_NAME = "overrides.yaml"
COUNTS_NAME = "overrides.counts.json"
FLUSH_S = 2.0  # the proxy writes match counts at most this often
_HEADER = ("# guardian-proxy user overrides (last match wins). Edit with `guardian-proxy allow|deny|level`,\n"
           "# list/remove with `guardian-proxy overrides [--remove ID]`, or from the dashboard.\n")
_ID_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"
_TARGET = ("domain", "owner", "category", "recipient")


def normalize_domain(value: str) -> str:
    """'https://Shop.Example.com:443/x' → 'shop.example.com'; '*' or '' → '' (any domain)."""
    v = value.strip().lower()
    if v in ("", "*"):
        return ""
    if "://" in v:
        v = v.split("://", 1)[1]
    v = v.split("/", 1)[0].split("?", 1)[0].rsplit("@", 1)[-1]
    if v.count(":") == 1:
        v = v.split(":", 1)[0]
    v = v.strip(".")
    if v.startswith("*."):
        v = v[2:]
    if not v or any(c.isspace() for c in v):
        raise ValueError(f"not a domain: {value!r}")
    return v


FIX = "fix the file, or move it away to run without the stored overrides"


def _parse(data, where: str) -> list[Override]:
    """The entries of a parsed file; anything else is a one-line ConfigError naming the file."""
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
    return out


def _content_id(o: Override, prefix: str, seen: dict[str, int]) -> str:
    """An id derived from a rule's content (and how many identical rules came before it): the same in every
    process reading the same file."""
    body = json.dumps(o.model_dump(mode="json", exclude_none=True, exclude={"id"}), sort_keys=True)
    n = seen.get(body, 0)
    seen[body] = n + 1
    digest = hashlib.sha256(f"{body}#{n}".encode()).digest()
    return prefix + "".join(_ID_ALPHABET[b % len(_ID_ALPHABET)] for b in digest[:5])


def _identify(entries: list[Override], prefix: str) -> list[Override]:
    """The entries, those without an id given one derived from their content."""
    seen: dict[str, int] = {}
    return [o if o.id else o.model_copy(update={"id": _content_id(o, prefix, seen)}) for o in entries]


def _new_id(taken: set[str]) -> str:
    while True:
        i = secrets.choice(_ID_ALPHABET[:23]) + "".join(secrets.choice(_ID_ALPHABET) for _ in range(4))
        if i not in taken:
            return i


def _target(o: Override) -> tuple:
    return tuple(getattr(o, k) for k in _TARGET)


def _term_kind(o: Override) -> str:
    return "once" if o.once else "expires" if o.expires else "run" if o.run else "forever"


class Active(list):
    """The effective list (`OverrideStore.current()`); `claim(o)` records that the proxy applies `o`."""

    def __init__(self, items, claim):
        super().__init__(items)
        self.claim = claim


_LIVE: weakref.WeakSet = weakref.WeakSet()


@atexit.register
def _flush_all() -> None:
    for store in list(_LIVE):
        store.flush()


class OverrideStore:
    """The config's overrides plus the persistent file's. `path=None` keeps only the config's."""

    def __init__(self, path: Path | None, base: list[Override] | None = None):
        self.path = Path(path) if path is not None else None
        self.base = list(base or [])
        self._stamp: tuple | None = None
        self._entries: list[Override] = []
        self._lock = threading.Lock()
        self._warned: tuple | None = None
        # config entries keep their objects as given; their ids (derived from content) are kept beside them
        self._base_ids = {id(o): b.id for o, b in zip(self.base, _identify(self.base, "c"), strict=True)}
        #: False: what-ifs (`check`) look the rules up without counting or spending them
        self.live = True
        self._count_lock = threading.Lock()
        self._pending: dict[str, tuple[int, str]] = {}  # id → (matches not yet written, last match time)
        self._spent: dict = {}  # once rules this process used: id → when (datetime)
        self._spent_unsaved: set[str] = set()
        self._wake = threading.Event()
        self._flusher: threading.Thread | None = None

    @classmethod
    def for_settings(cls, settings: Settings) -> OverrideStore:
        """The store of `<state_dir>/overrides.yaml`; a file that does not validate is a ConfigError here
        (a proxy must not start with the user's overrides silently missing)."""
        store = cls(Path(settings.state_dir) / FILE_NAME, settings.overrides)
        store.stored()
        return store

    # ------------------------------------------------------------------ reading

    def _stat(self) -> tuple | None:
        try:
            st = os.stat(self.path)  # type: ignore[arg-type]
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as e:  # cannot even stat it: unreadable, never "no overrides"
            return ("unreadable", e.errno)
        return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_mode)

    def _read(self) -> list[Override]:
        """The file's entries ([] when there is none); every way it can be unusable is a ConfigError."""
        if self.path is None:
            return []
        try:
            if not self.path.exists():
                return []
        except OSError as e:
            raise ConfigError(f"cannot read overrides file {self.path} ({e.strerror}); {FIX}") from e
        return _identify(_parse(read_yaml(self.path, "overrides file", FIX), str(self.path)), "")

    def stored(self, strict: bool = True) -> list[Override]:
        """The file's entries, re-read only when the file changed. strict=False keeps the last good
        list when the file cannot be used (a running proxy must not fail on a bad edit); strict=True
        raises a one-line ConfigError."""
        if self.path is None:
            return []
        with self._lock:
            stamp = self._stat()
            if stamp == self._stamp or (not strict and stamp is not None and stamp == self._warned):
                return list(self._entries)
            try:
                entries = self._read()
            except Exception as e:  # noqa: BLE001 — a running proxy keeps the last good list, whatever broke
                if strict:
                    if isinstance(e, ConfigError):
                        raise
                    raise ConfigError(f"cannot read overrides file {self.path} ({type(e).__name__}); {FIX}") from e
                if self._warned != stamp:
                    why = str(e) if isinstance(e, ConfigError) else type(e).__name__
                    log.warning("ignoring the new %s (keeping the previous overrides): %s", self.path, why)
                    self._warned = stamp
                return list(self._entries)
            self._entries, self._stamp = entries, stamp
            return list(entries)

    def current(self) -> list[Override]:
        """The effective list, in match order (config first, then the store; last match wins), with
        `claim` for guardian_proxy.risk.find_override. Rules that no longer apply are still in it:
        find_override skips them (their term is checked at every request)."""
        return Active(self.base + self.stored(strict=False), self.claim)

    def listing(self) -> list[tuple[int, str, Override]]:
        """(number, source, override) with numbers from 1 in match order (positions: they change)."""
        rows = [("config", o) for o in self.base] + [("store", o) for o in self.stored()]
        return [(i, src, self._overlay(o)) for i, (src, o) in enumerate(rows, 1)]

    def rows(self) -> list[dict]:
        """What `guardian-proxy overrides` and the dashboard show: each rule with its id, source, state,
        term, when it was made, when it ends, how often it matched and when last."""
        counts = self.counts()
        out = []
        for n, src, o in self.listing():
            c = counts.get(o.id or "", {})
            out.append({"n": n, "id": o.id, "source": src, **o.model_dump(mode="json", exclude_none=True),
                        "state": terms.state(o), "term": terms.term_of(o),
                        "matched": int(c.get("matched", 0)), "last_matched": c.get("last")})
        return out

    def key(self, o: Override) -> str:
        """The rule's id (a config entry's derived one)."""
        return o.id or self._base_ids.get(id(o), "")

    def _overlay(self, o: Override) -> Override:
        if not o.id and id(o) in self._base_ids:
            o = o.model_copy(update={"id": self._base_ids[id(o)]})
        spent = self._spent.get(o.id or "")
        return o.model_copy(update={"spent": spent}) if spent and o.once and o.spent is None else o

    # ------------------------------------------------------------------ matches

    def claim(self, o: Override) -> bool:
        """The proxy applies `o` to a request: count it; a once rule is spent by its first claim (False for
        every later one, so no second request gets it). With `live` False nothing is counted or spent."""
        if not self.live:
            return not (o.once and (o.spent is not None or self.key(o) in self._spent))
        key = self.key(o)
        when = terms.now()
        stamp = when.isoformat()
        with self._count_lock:
            if o.once:
                if o.spent is not None or key in self._spent:
                    return False
                self._spent[key] = when
                self._spent_unsaved.add(key)
            n, _ = self._pending.get(key, (0, stamp))
            self._pending[key] = (n + 1, stamp)
        self._start_flusher(now=bool(o.once))
        return True

    def _start_flusher(self, now: bool = False) -> None:
        if self.path is None:
            return
        if self._flusher is None:
            with self._count_lock:
                if self._flusher is None:
                    _LIVE.add(self)
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

    def _counts_path(self) -> Path | None:
        return self.path.with_name(COUNTS_NAME) if self.path is not None else None

    def _read_counts(self) -> dict:
        p = self._counts_path()
        try:
            data = json.loads(p.read_text(encoding="utf-8")) if p is not None else {}
        except (OSError, ValueError):
            return {}
        rules = data.get("rules") if isinstance(data, dict) else None
        return {k: v for k, v in rules.items() if isinstance(v, dict)} if isinstance(rules, dict) else {}

    def counts(self) -> dict[str, dict]:
        """id → {matched, last}: the sidecar's counts plus this process's not yet written."""
        out = {k: dict(v) for k, v in self._read_counts().items()}
        with self._count_lock:
            for key, (n, last) in self._pending.items():
                c = out.setdefault(key, {"matched": 0})
                c["matched"] = int(c.get("matched", 0)) + n
                c["last"] = last
        return out

    def flush(self) -> None:
        """Write the counts not yet written (and the spent once rules) under the store's lock. Never raises:
        what could not be written is kept for the next try."""
        if self.path is None:
            return
        with self._count_lock:
            pending, self._pending = self._pending, {}
            spent = {k: self._spent[k] for k in self._spent_unsaved}
            self._spent_unsaved = set()
        if not pending and not spent:
            return
        try:
            with self._locked():
                if pending:
                    rules = self._read_counts()
                    for key, (n, last) in pending.items():
                        c = rules.setdefault(key, {"matched": 0})
                        c["matched"] = int(c.get("matched", 0)) + n
                        c["last"] = last
                    live = set(self._base_ids.values()) | {o.id for o in self._read_or_last()}
                    rules = {k: v for k, v in rules.items() if k in live or k in pending}
                    self._atomic(self._counts_path(), json.dumps({"version": 1, "rules": rules}, indent=1))
                if spent:
                    entries = self._read()
                    if any(o.id in spent and o.once and o.spent is None for o in entries):
                        self._write([o.model_copy(update={"spent": spent[o.id]})
                                     if o.id in spent and o.once and o.spent is None else o for o in entries])
        except Exception as e:  # noqa: BLE001 — a count must never cost a request; retried next time
            log.warning("could not write override counts next to %s: %s", self.path, e)
            with self._count_lock:
                for key, (n, last) in pending.items():
                    m, _ = self._pending.get(key, (0, last))
                    self._pending[key] = (m + n, last)
                self._spent_unsaved |= set(spent)

    def _read_or_last(self) -> list[Override]:
        try:
            return self._read()
        except ConfigError:
            return list(self._entries)

    # ------------------------------------------------------------------ writing

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        if self.path is None:
            raise ConfigError("no override store (no state directory)")
        make_dirs(self.path.parent)
        with os.fdopen(open_append(self.path.with_name(self.path.name + ".lock")), "a") as fh:
            try:
                import fcntl
            except ImportError:  # not POSIX: the atomic replace still keeps readers safe
                fcntl = None
            if fcntl is not None:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                if fcntl is not None:
                    fcntl.flock(fh.fileno(), fcntl.LOCK_UN)

    def _atomic(self, path: Path, text: str) -> None:
        write_atomic(path, text)  # 0600 whatever the umask, renamed into place

    def _write(self, entries: list[Override]) -> None:
        assert self.path is not None
        data = {"overrides": [o.model_dump(mode="json", exclude_none=True) for o in entries]}
        self._atomic(self.path, _HEADER + yaml.safe_dump(data, sort_keys=False, allow_unicode=True))

    def _in_force(self, entries: list[Override]) -> list[Override]:
        """The entries that still apply (spent, expired and ended rules are dropped when the file is written)."""
        return [o for o in entries if terms.state(self._overlay(o)) == "active"]

    def add(self, override: Override) -> int:
        """Append (see `add_rule`); returns its number in `listing()`."""
        self.add_rule(override)
        return next(n for n, _, o in self.listing() if o.id == self._last_added)

    def add_rule(self, override: Override) -> Override:
        """Append a rule with a new id and `created` now, replacing an earlier rule for the same target with
        the same kind of term (a rule for an hour does not remove the permanent one under it: when it ends,
        that one applies again). Rules that no longer apply are dropped. Returns the rule as stored."""
        with self._locked():
            entries = self._in_force(self._read())
            entries = [o for o in entries
                       if not (_target(o) == _target(override) and _term_kind(o) == _term_kind(override))]
            taken = {o.id for o in entries} | set(self._base_ids.values())
            rule = override.model_copy(update={"id": override.id if override.id and override.id not in taken
                                               else _new_id(taken),
                                               "created": override.created or terms.now().replace(microsecond=0)})
            entries.append(rule)
            self._write(entries)
        self._last_added = rule.id
        return rule

    def remove(self, key: int | str) -> Override:
        """Remove the rule with this id (a str), or — for old callers — the one numbered as in `listing()`
        (an int). Config entries cannot be removed here."""
        if isinstance(key, str):
            if key in self._base_ids.values():
                raise ConfigError(f"override {key} comes from the config file; edit that file to remove it")
        elif 1 <= key <= len(self.base):
            raise ConfigError(f"override {key} comes from the config file; edit that file to remove it")
        with self._locked():
            entries = self._read()
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
            gone = entries.pop(i)
            self._write(self._in_force(entries))
        return gone
