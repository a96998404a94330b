"""The decision log: JSON Lines, one object per evaluated request, appended and flushed per line.

Fields (see README "Decision log"): ts, id, method, scheme, host, path (no query values), recipient,
categories ({name: count}), purposes, basis, evidence (statement ids), L, l_path, u, Sd, Seff, MT,
R, tier, action, start_level, final_level, rounds, latency_ms, explanation, override, rule, flags,
spans ({entity: count}), plus stage extras (session, turn, cpe …). Never raw values.

Rotation by size: when a line would take the file past `max_bytes`, `decisions.jsonl` becomes
`decisions.jsonl.1` (older ones shift to `.2` … `.<backups>`; the oldest beyond that is deleted), and
rotated files older than `retention_days` are deleted. `read_all` reads the rotated files oldest first.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit

from .types import Action, Decision, RawRequest

_DATA_SEGMENT = re.compile(r"[%@=+~]|\d{6}")  # encoded text, e-mail, key=value, long numbers


def safe_path(url: str, action: Action | None = None) -> str:
    """Path with query keys kept and values dropped: `/collect?uid=&ev=`. With the decision's action, the
    personal values found in the path become their type (`/u/[EMAIL_ADDRESS]/orders`) and segments that
    look like data rather than route names (percent-encoded text, `@`, `=`, runs of 6+ digits) become `…`;
    a path that was not inspected (no `path:` field: extraction failed or did not finish, or the body was
    unreadable) keeps only its first segment (`/u/…`)."""
    s = urlsplit(url)
    path = s.path or "/"
    if action is not None and len(path) > 1:
        field = next((f for f in action.fields if f.path == "path:"), None)
        if field is None or field.text != s.path:
            head = path.split("/", 2)[1]
            path = "/…" if _DATA_SEGMENT.search(head) or len(head) > 40 else \
                f"/{head}/…" if path.count("/") > 1 else path
        else:
            for sp in sorted((x for x in action.spans if x.path == "path:"), key=lambda x: -x.start):
                path = path[: sp.start] + f"[{sp.entity}]" + path[sp.end:]
            path = "/".join("…" if _DATA_SEGMENT.search(seg) else seg for seg in path.split("/"))
    if not s.query:
        return path
    keys = [(k, "") for k, _ in parse_qsl(s.query, keep_blank_values=True)]
    return path + "?" + urlencode(keys)


def record(req: RawRequest, d: Decision) -> dict:
    a = d.six
    lk, rk = d.likelihood, d.risk
    rec = {
        "ts": round(d.ts, 3),
        "id": d.id,
        "method": req.method,
        "scheme": req.scheme,
        "host": req.host,
        "path": safe_path(req.url, a),
        "recipient": a.recipient,
        "role": a.role,
        "categories": dict(a.categories),
        "purposes": list(a.purposes),
        "basis": a.basis,
        "evidence": [s.statement.id for s in d.evidence.statements],
        "transparency": d.evidence.transparency,
        "L": round(lk.value, 4) if lk else None,
        "l_path": lk.path if lk else None,
        "u": round(lk.u, 4) if lk and lk.u is not None else None,
        "Sd": rk.Sd if rk else None,
        "Seff": round(rk.Seff, 4) if rk else None,
        "MT": rk.MT if rk else None,
        "R": round(rk.R, 4) if rk else None,
        "tier": rk.tier if rk else None,
        "action": d.action,
        "start_level": d.start_level,
        "final_level": d.final_level,
        "rounds": d.rounds,
        "latency_ms": round(d.latency_ms, 2),
        "explanation": d.explanation,
        "override": d.override,
        "rule": d.rule,
        "flags": list(a.flags),
        "spans": dict(d.rewrite.span_counts) if d.rewrite else {},
    }
    rec.update(d.extra)
    return rec


class DecisionLog:
    """Append-only JSONL writer; one `write` + flush per line so a killed process leaves whole lines.

    `max_bytes` 0 never rotates; `backups` rotated files are kept (0: the file is truncated instead);
    `retention_days` (None: no age limit) deletes rotated files by age."""

    def __init__(self, path: Path, max_bytes: int = 0, backups: int = 5, retention_days: float | None = None):
        self.path = Path(path)
        self.max_bytes = max(0, int(max_bytes))
        self.backups = max(0, int(backups))
        self.retention_days = retention_days
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._open()
        self._expire()

    def _open(self) -> None:
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        self._f = os.fdopen(fd, "a", encoding="utf-8", buffering=1)
        self._size = os.fstat(fd).st_size

    def write(self, rec: dict) -> None:
        line = json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n"
        n = len(line.encode("utf-8"))
        with self._lock:
            if self.max_bytes and self._size and self._size + n > self.max_bytes:
                self._rotate()
            self._f.write(line)
            self._f.flush()
            self._size += n

    def _rotate(self) -> None:
        self._f.close()
        if self.backups == 0:
            os.truncate(self.path, 0)
        else:
            for f in rotated_files(self.path):  # oldest first: .N → .N+1, dropping those past `backups`
                i = int(f.name.rsplit(".", 1)[1])
                if i >= self.backups:
                    f.unlink(missing_ok=True)
                else:
                    os.replace(f, self._numbered(i + 1))
            os.replace(self.path, self._numbered(1))
        self._open()
        self._expire()

    def _numbered(self, i: int) -> Path:
        return self.path.with_name(f"{self.path.name}.{i}")

    def _expire(self) -> None:
        if self.retention_days is None:
            return
        cutoff = time.time() - self.retention_days * 86400
        for f in rotated_files(self.path):
            try:
                if f.stat().st_mtime < cutoff:
                    f.unlink()
            except OSError:
                continue

    def close(self) -> None:
        with self._lock:
            self._f.close()


def rotated_files(path: Path) -> list[Path]:
    """`decisions.jsonl.N` … `decisions.jsonl.1` (oldest first), those that exist."""
    path = Path(path)
    found = []
    for f in path.parent.glob(path.name + ".*"):
        suffix = f.name[len(path.name) + 1:]
        if suffix.isdigit():
            found.append((int(suffix), f))
    return [f for _, f in sorted(found, reverse=True)]


def read_all(path: Path) -> Iterator[dict]:
    """The rotated files oldest first, then the live file."""
    for f in [*rotated_files(path), Path(path)]:
        try:
            yield from read(f)
        except FileNotFoundError:
            continue


def read(path: Path) -> Iterator[dict]:
    """Every complete line of a log (a torn last line from a crash is skipped)."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                yield json.loads(line)
            except ValueError:
                continue
