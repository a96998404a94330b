"""Filters shared by `log` and `stats`: action, host, category, minimum risk, `--since`, the sending app."""

from __future__ import annotations

import datetime as dt
import re
import time
from dataclasses import dataclass

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_REL = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$", re.IGNORECASE)


def parse_since(text: str | None, now: float | None = None) -> float | None:
    """`24h`, `30m`, `7d`, `90s`, `2w` (ago), or an ISO date/time (local time unless it has an offset)."""
    if text is None or not str(text).strip():
        return None
    now = time.time() if now is None else now
    m = _REL.match(text)
    if m:
        return now - float(m.group(1)) * _UNITS[m.group(2).lower()]
    try:
        when = dt.datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(f"--since expects e.g. 24h, 30m, 7d or an ISO time like 2025-01-31T08:00, got {text!r}") \
            from None
    return when.timestamp()


@dataclass
class RecordFilter:
    action: str | None = None
    host: str | None = None
    category: str | None = None
    min_risk: float | None = None
    since: float | None = None  # epoch seconds
    app: str | None = None  # part of the sending program's name, its executable's name, or its pid

    def __call__(self, rec: dict) -> bool:
        if self.action and rec.get("action") != self.action:
            return False
        if self.host and self.host.lower() not in (rec.get("host") or "").lower():
            return False
        if self.category and (rec.get("categories") or {}).get(self.category, 0) <= 0:
            return False
        if self.min_risk is not None:
            r = rec.get("R")
            if not isinstance(r, int | float) or r < self.min_risk:
                return False
        if self.since is not None and (rec.get("ts") or 0) < self.since:
            return False
        if self.app and not app_matches(rec.get("app"), self.app):
            return False
        return True


def app_name(rec: dict) -> str:
    """The sending program's display name (`curl`, `python3 agent.py`, `remote`, `unknown`), "" when the record
    has none (written before the field existed, or outside the proxy)."""
    app = rec.get("app")
    return str(app.get("name") or "") if isinstance(app, dict) else ""


def app_matches(app, text: str) -> bool:
    """`--app` / `app:`: `text` (case-insensitive) is part of the program's name (`python3` or `agent.py` match
    `python3 agent.py`), is its executable's file name, or is its pid."""
    if not isinstance(app, dict):
        return False
    t = text.strip().lower()
    if not t:
        return True
    name = str(app.get("name") or "").lower()
    exe = str(app.get("exe") or "").rsplit("/", 1)[-1].lower()
    return t in name or t == exe or t == str(app.get("pid"))
