"""The decision log: JSON Lines, one object per evaluated request, appended and flushed per line.

Fields (see README "Decision log"): ts, id, method, scheme, host, path (no query values), recipient,
categories ({name: count}), purposes, basis, evidence (statement ids), L, l_path, u, Sd, Seff, MT,
R, tier, action, start_level, final_level, rounds, latency_ms, explanation, override, rule, flags,
spans ({entity: count}), plus stage extras (session, turn, cpe …). Never raw values.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit

from .types import Decision, RawRequest


def safe_path(url: str) -> str:
    """Path with query keys kept and values dropped: `/collect?uid=&ev=`."""
    s = urlsplit(url)
    if not s.query:
        return s.path or "/"
    keys = [(k, "") for k, _ in parse_qsl(s.query, keep_blank_values=True)]
    return (s.path or "/") + "?" + urlencode(keys)


def record(req: RawRequest, d: Decision) -> dict:
    a = d.six
    lk, rk = d.likelihood, d.risk
    rec = {
        "ts": round(d.ts, 3),
        "id": d.id,
        "method": req.method,
        "scheme": req.scheme,
        "host": req.host,
        "path": safe_path(req.url),
        "recipient": a.recipient,
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
    """Append-only JSONL writer; one `write` + flush per line so a killed process leaves whole lines."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        self._f = os.fdopen(fd, "a", encoding="utf-8", buffering=1)
        self._lock = threading.Lock()

    def write(self, rec: dict) -> None:
        line = json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n"
        with self._lock:
            self._f.write(line)
            self._f.flush()

    def close(self) -> None:
        with self._lock:
            self._f.close()


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
