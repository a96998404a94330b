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
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import yaml
from pydantic import ValidationError

from .config import Override, Settings, read_yaml, validation_problem
from .errors import ConfigError

log = logging.getLogger("guardian_proxy.overrides")

FILE_NAME = "overrides.yaml"
_HEADER = ("# guardian-proxy user overrides (last match wins). Edit with `guardian-proxy allow|deny|level`,\n"
           "# list/remove with `guardian-proxy overrides [--remove N]`, or from the dashboard.\n")


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


class OverrideStore:
    """The config's overrides plus the persistent file's. `path=None` keeps only the config's."""

    def __init__(self, path: Path | None, base: list[Override] | None = None):
        self.path = Path(path) if path is not None else None
        self.base = list(base or [])
        self._stamp: tuple | None = None
        self._entries: list[Override] = []
        self._lock = threading.Lock()
        self._warned: tuple | None = None

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
        return _parse(read_yaml(self.path, "overrides file", FIX), str(self.path))

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
        """The effective list, in match order (config first, then the store; last match wins)."""
        return self.base + self.stored(strict=False)

    def listing(self) -> list[tuple[int, str, Override]]:
        """(number, source, override) with numbers from 1 as `guardian-proxy overrides` shows them."""
        rows = [("config", o) for o in self.base] + [("store", o) for o in self.stored()]
        return [(i, src, o) for i, (src, o) in enumerate(rows, 1)]

    # ------------------------------------------------------------------ writing

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        if self.path is None:
            raise ConfigError("no override store (no state directory)")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.with_name(self.path.name + ".lock"), "a") as fh:
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

    def _write(self, entries: list[Override]) -> None:
        assert self.path is not None
        data = {"overrides": [o.model_dump(exclude_none=True) for o in entries]}
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_text(_HEADER + yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
        os.replace(tmp, self.path)

    def add(self, override: Override) -> int:
        """Append (replacing an identical target's earlier entry); returns its number in `listing()`."""
        with self._locked():
            entries = self._read()
            same = {k: v for k, v in override.model_dump().items() if k not in ("action", "level")}
            entries = [o for o in entries
                       if {k: v for k, v in o.model_dump().items() if k not in ("action", "level")} != same]
            entries.append(override)
            self._write(entries)
        return len(self.base) + len(entries)

    def remove(self, number: int) -> Override:
        """Remove the entry numbered as in `listing()`; config entries cannot be removed here."""
        if 1 <= number <= len(self.base):
            raise ConfigError(f"override {number} comes from the config file; edit that file to remove it")
        with self._locked():
            entries = self._read()
            i = number - len(self.base) - 1
            if not 0 <= i < len(entries):
                total = len(self.base) + len(entries)
                raise ConfigError(f"no override numbered {number} (there are {total})")
            gone = entries.pop(i)
            self._write(entries)
        return gone
