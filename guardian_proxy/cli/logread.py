"""Reading the decision log for `guardian-proxy log` and `stats`, whatever state the files are in.

The rotated files are read oldest first (`decisions.jsonl.N` … `.1`, each plain or gzip-compressed:
`decisions.jsonl.N.gz`, or gzip content under the plain name), then the live file. A line that is not
valid UTF-8 (cut inside a character, corrupted) or not a JSON object (torn by a crash) is skipped and
counted, and the command says so once on stderr. The live file's last line without its newline is not
counted: it may be the one the proxy is writing now. A rotated file that cannot be read (permissions,
a truncated gzip) is skipped from that point and counted as one unreadable part.

`--fleet` reads the shared decision feed instead (guardian_proxy/state/decisions.py: every gateway of a Redis
fleet, each record with its `gateway`), with the same checks per record. On the local back end there is one
gateway and its log is the fleet: `--fleet` is refused with a one-line error saying so.
"""

from __future__ import annotations

import gzip
import json
import math
import zlib
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from ..decision_log import rotated_files

GZIP_MAGIC = b"\x1f\x8b"


def log_files(path: Path) -> list[Path]:
    """The rotated files (plain `.N` and compressed `.N.gz`), oldest first, then the live file."""
    path = Path(path)
    found: dict[Path, int] = {f: int(f.name[len(path.name) + 1:]) for f in rotated_files(path)}
    for f in path.parent.glob(path.name + ".*.gz"):
        n = f.name[len(path.name) + 1:-3]
        if n.isdigit():
            found[f] = int(n)
    rotated = sorted(found, key=lambda f: (-found[f], f.name.endswith(".gz")))
    return [*rotated, path]


_NUMBER, _TEXT, _MAP = (int, float), (str,), (dict,)
#: the types the writer gives the fields the commands read (None is allowed for each)
SHAPE = {"ts": _NUMBER, "R": _NUMBER, "L": _NUMBER, "Sd": _NUMBER, "Seff": _NUMBER, "latency_ms": _NUMBER,
         "final_level": _NUMBER, "start_level": _NUMBER, "action": _TEXT, "host": _TEXT, "method": _TEXT,
         "path": _TEXT, "recipient": _TEXT, "explanation": _TEXT, "rule": _TEXT, "tier": _TEXT, "id": _TEXT,
         "override": _TEXT, "gateway": _TEXT, "categories": _MAP, "spans": _MAP}


def _finite(v: int | float) -> bool:
    try:
        return math.isfinite(v)
    except OverflowError:  # an integer too large for a float
        return False


def parse_line(raw: bytes) -> dict | None:
    """One log record, or None when the line is not valid UTF-8, not a JSON object, or a field the
    commands read has another type than the writer gives it, or is a number that is not finite (NaN,
    Infinity): a corrupted line, not a decision."""
    try:
        rec = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    return rec if well_formed(rec) else None


def well_formed(rec) -> bool:
    """A JSON object whose fields the commands read have the writer's types and finite numbers."""
    if not isinstance(rec, dict):
        return False
    for key, types in SHAPE.items():
        v = rec.get(key)
        if v is not None and (not isinstance(v, types) or (types is _NUMBER and not _finite(v))):
            return False
    for key in ("categories", "spans"):
        if any(not isinstance(n, _NUMBER) or not _finite(n) for n in (rec.get(key) or {}).values()):
            return False
    return True


class LogReader:
    """Records of a decision log and its rotated files; `skipped` counts unreadable lines per file name."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.skipped: Counter[str] = Counter()

    def _open(self, f: Path):
        fh = open(f, "rb")
        if f.name.endswith(".gz") or fh.read(2) == GZIP_MAGIC:
            fh.close()
            return gzip.open(f, "rb")
        fh.seek(0)
        return fh

    def lines(self, f: Path, live: bool) -> Iterator[dict]:
        try:
            with self._open(f) as fh:
                for raw in fh:
                    if not raw.strip():
                        continue
                    rec = parse_line(raw.strip())
                    if rec is not None:
                        yield rec
                    elif raw.endswith(b"\n") or not live:
                        self.skipped[f.name] += 1
        except FileNotFoundError:
            return
        except (OSError, EOFError, zlib.error):  # unreadable, or a truncated / corrupt gzip
            self.skipped[f.name] += 1

    def records(self) -> Iterator[dict]:
        files = log_files(self.path)
        for f in files:
            yield from self.lines(f, live=f == files[-1])

    def count(self, raw: bytes) -> dict | None:
        """For --follow: one complete line of the live file, counted when unreadable."""
        rec = parse_line(raw.strip()) if raw.strip() else None
        if rec is None and raw.strip():
            self.skipped[self.path.name] += 1
        return rec

    def note(self) -> str | None:
        """One line for stderr when something was skipped, else None."""
        if not self.skipped:
            return None
        total = sum(self.skipped.values())
        where = ", ".join(f"{n} in {name}" for name, n in sorted(self.skipped.items()))
        return (f"skipped {total} unreadable log line{'s' if total != 1 else ''} "
                f"(torn, not UTF-8 or not a JSON object): {where}")



class FleetReader:
    """Records of the fleet's decision feed (state.backend redis), checked like log lines; `skipped` counts those
    that are not well formed. `feed` raises StateUnavailable when Redis does not answer."""

    def __init__(self, feed):
        self.feed = feed
        self.skipped = 0

    def _checked(self, recs) -> Iterator[dict]:
        for rec in recs:
            if well_formed(rec):
                yield rec
            else:
                self.skipped += 1

    def records(self) -> Iterator[dict]:
        return self._checked(self.feed.records())

    def follow(self) -> Iterator[dict]:
        return self._checked(self.feed.follow())

    def note(self) -> str | None:
        if not self.skipped:
            return None
        return f"skipped {self.skipped} malformed record{'s' if self.skipped != 1 else ''} in the decision feed"


LOCAL_FLEET = ("--fleet reads the decision feed that a Redis fleet shares (state.backend: redis); this gateway's "
               "state is local, so it is a fleet of one and its log is the fleet: run without --fleet")


def open_fleet(settings):
    """The fleet's feed for `--fleet`, or a ValueError naming why not (the local back end)."""
    from ..state import open_feed, uses_redis

    if not uses_redis(settings):
        raise ValueError(LOCAL_FLEET)
    return FleetReader(open_feed(settings))
