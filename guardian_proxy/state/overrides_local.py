"""The user's overrides on local files (state.backend local), shared by every process of this machine: the
proxy, its worker processes, the CLI and the dashboard.

    overrides.yaml           the rules; replaced atomically under an exclusive lock on `overrides.yaml.lock`
                             (a reader never sees half a file)
    change check             the file's (inode, size, mtime, mode): one stat per request, so a change made by
                             any process is seen by every other at its next request
    overrides.spent/<id>     a once rule is spent by creating this file with O_EXCL: of all the processes
                             racing for the rule exactly one creates it, and only that request gets the rule
    overrides.counts.json    match counts, added (never overwritten) under the same lock: the counts of several
                             processes add up

The spent time is also written into overrides.yaml (`spent:`) for the person reading it. A spent mark is
kept a day after its rule is gone (a process that still holds the old list cannot spend it again).
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import datetime
from pathlib import Path

import yaml

from ..config import Override, read_yaml
from ..errors import ConfigError
from ..private import make_dirs, write_atomic
from .filelock import exclusive
from .overrides import COUNTS_NAME, FIX, dump_rules, parse_rules

SPENT_DIR = "overrides.spent"
PRUNE_S = 86400.0  # spent marks of removed rules are dropped after this long
HEADER = ("# guardian-proxy user overrides (last match wins). Edit with `guardian-proxy allow|deny|level`,\n"
          "# list/remove with `guardian-proxy overrides [--remove ID]`, or from the dashboard.\n")


class LocalOverrides:
    """overrides.yaml and its sidecars. `atomic(path, text)` writes a file 0600 through a rename (every write
    of the rules and the counts goes through it)."""

    shared = False  # one machine: an until-restart rule names a process every reader can see
    check_s = 0.0  # the stat is cheap: checked at every request

    def __init__(self, path: Path, atomic: Callable[[Path, str], None] = write_atomic):
        self.path = Path(path)
        self.atomic = atomic
        self.where = str(self.path)
        self._fspath = os.fspath(self.path)

    # ------------------------------------------------------------------ rules

    def stamp(self) -> tuple | None:
        """Changes whenever the file may have; None when there is none."""
        try:
            st = os.stat(self._fspath)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as e:  # cannot even stat it: unreadable, never "no overrides"
            return ("unreadable", e.errno)
        return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_mode)

    def load(self) -> list[Override]:
        """The file's rules ([] when there is none); every way it can be unusable is a ConfigError."""
        try:
            if not self.path.exists():
                return []
        except OSError as e:
            raise ConfigError(f"cannot read overrides file {self.path} ({e.strerror}); {FIX}") from e
        return parse_rules(read_yaml(self.path, "overrides file", FIX), str(self.path))

    def locked(self) -> AbstractContextManager:
        """Exclusive against every other writer of this machine (readers never wait: the file is replaced)."""
        return exclusive(self.path.with_name(self.path.name + ".lock"), wait_s=None)

    def _write(self, entries: list[Override]) -> None:
        data = {"overrides": dump_rules(entries)}
        self.atomic(self.path, HEADER + yaml.safe_dump(data, sort_keys=False, allow_unicode=True))

    def update(self, change: Callable[[list[Override]], list[Override] | None]) -> None:
        """Read, change and write the rules under the lock (`change` returns None: nothing to write)."""
        with self.locked():
            old = self.load()
            new = change(old)
            if new is None:
                return
            self._write(new)
            self._prune({o.id for o in new if o.id})

    # ------------------------------------------------------------------ once rules

    def _spent_dir(self) -> Path:
        return self.path.with_name(SPENT_DIR)

    def spend(self, key: str, when: datetime) -> bool:
        """True when this call spent the once rule `key`, False when some process already had. OSError when
        the mark cannot be made (the caller's fail rule applies)."""
        d = self._spent_dir()
        make_dirs(d)
        try:
            fd = os.open(d / key, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        except FileExistsError:
            return False
        with os.fdopen(fd, "w") as fh:
            fh.write(when.isoformat())
        return True

    def spent(self) -> dict[str, datetime]:
        """id → when, for every once rule spent by any process."""
        out: dict[str, datetime] = {}
        try:
            names = os.listdir(self._spent_dir())
        except OSError:
            return out
        for name in names:
            p = self._spent_dir() / name
            try:
                out[name] = datetime.fromisoformat(p.read_text(encoding="utf-8").strip())
            except (OSError, ValueError):
                try:
                    out[name] = datetime.fromtimestamp(p.stat().st_mtime).astimezone()
                except OSError:
                    continue
        return out

    def _prune(self, live: set[str]) -> None:
        cutoff = time.time() - PRUNE_S
        try:
            names = os.listdir(self._spent_dir())
        except OSError:
            return
        for name in names:
            if name in live:
                continue
            p = self._spent_dir() / name
            with contextlib.suppress(OSError):
                if p.stat().st_mtime < cutoff:
                    p.unlink()

    # ------------------------------------------------------------------ counts

    def _counts_path(self) -> Path:
        return self.path.with_name(COUNTS_NAME)

    def counts(self) -> dict[str, dict]:
        """id → {matched, last} as written so far by every process."""
        try:
            data = json.loads(self._counts_path().read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        rules = data.get("rules") if isinstance(data, dict) else None
        return {k: v for k, v in rules.items() if isinstance(v, dict)} if isinstance(rules, dict) else {}

    def flush(self, pending: dict[str, tuple[int, str]], spent: dict[str, datetime], keep: set[str]) -> None:
        """Add this process's counts to the sidecar (counts of rules gone from the file and not in `keep`,
        the config's ids, are dropped) and write the spent times into the file, under the lock."""
        with self.locked():
            if pending:
                rules = self.counts()
                for key, (n, last) in pending.items():
                    c = rules.setdefault(key, {"matched": 0})
                    c["matched"] = int(c.get("matched", 0)) + n
                    c["last"] = last
                try:
                    live = keep | {o.id for o in self.load()}
                except ConfigError:  # the file is bad just now: drop nothing
                    live = set(rules)
                rules = {k: v for k, v in rules.items() if k in live or k in pending}
                self.atomic(self._counts_path(), json.dumps({"version": 1, "rules": rules}, indent=1))
            if spent:
                entries = self.load()
                if any(o.id in spent and o.once and o.spent is None for o in entries):
                    self._write([o.model_copy(update={"spent": spent[o.id]})
                                 if o.id in spent and o.once and o.spent is None else o for o in entries])
