"""The decision feed of one gateway (state.backend local): its JSONL decision log read as the feed. Publishing
does nothing (the log holds every record already); reading reads the rotated files, then the live one, and
`follow` tails the log across a rotation. Every record read gets `gateway`: this gateway's id."""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from pathlib import Path

from ..decision_log import read_all, tail_lines
from .base import gateway_id
from .decisions import SEEN_WINDOW_S


class LocalFeed:
    """One gateway: the JSONL decision log read as the feed (every record `gateway`: this gateway's id)."""

    shared = False

    def __init__(self, settings, path: Path | None = None):
        self.path = Path(path or settings.decision_log)
        self.gateway = gateway_id(settings)

    def publish(self, rec: dict) -> None:
        return None  # the JSONL log holds it already

    def _tag(self, rec) -> dict | None:
        if not isinstance(rec, dict):
            return None
        rec.setdefault("gateway", self.gateway)
        return rec

    def records(self) -> Iterator[dict]:
        for rec in read_all(self.path):
            rec = self._tag(rec)
            if rec is not None:
                yield rec

    def recent(self, n: int, keep: Callable[[dict], bool] | None = None) -> list[dict]:
        return list(deque((r for r in self.records() if keep is None or keep(r)), maxlen=max(0, n)))

    def follow(self, stop: threading.Event | None = None) -> Iterator[dict]:
        for raw in tail_lines(self.path, stop):
            try:
                rec = self._tag(json.loads(raw))
            except (UnicodeDecodeError, ValueError, RecursionError):
                continue
            if rec is not None:
                yield rec

    def count(self) -> int:
        return sum(1 for _ in self.records())

    def gateways(self, within_s: float = SEEN_WINDOW_S) -> dict[str, float]:
        try:
            mtime = self.path.stat().st_mtime
        except OSError:
            return {}
        return {self.gateway: mtime} if time.time() - mtime <= within_s else {}

    def close(self) -> None:
        return None
