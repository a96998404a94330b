"""The recent decisions of a fleet: the dashboard's and `log --fleet` / `stats --fleet`'s view of every gateway.

Every decision line the gateway writes to its JSONL log (a record the log's masking has passed: never a raw
value) is also handed to the feed (`Gateway.write_log`). Two back ends behind `DecisionFeed`:

    local   nothing new: one gateway, and its JSONL log is its fleet. Publishing does nothing (`feed_for` gives
            None); reading reads the log (rotated files, then the live one).
    redis   the stream `<prefix>:decisions` (decisions_redis.py), kept to `state.recent_decisions` entries
            (XADD MAXLEN ~), each entry the record and the id of the gateway that decided it. Publishing is off
            the caller's thread: a bounded queue and one background thread; a full queue or an unreachable
            Redis drops the decision from the feed (one warning a minute), never blocks or fails the request:
            the JSONL log stays the record of truth.

Read records carry `gateway`: the id of the gateway that decided them (`state.gateway_id`).
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Protocol

from . import gateway_id, uses_redis

#: the feed's answer to "gateways seen lately" (`state status`): this many seconds back
SEEN_WINDOW_S = 600.0


class DecisionFeed(Protocol):
    """The recent decisions of every gateway sharing the store."""

    shared: bool  # True: other gateways' decisions reach it (redis); False: this gateway's log only (local)

    def publish(self, rec: dict) -> None:
        """Hand one written log record to the feed; never blocks, never raises."""

    def records(self) -> Iterator[dict]:
        """Every decision the feed holds, oldest first."""

    def recent(self, n: int, keep: Callable[[dict], bool] | None = None) -> list[dict]:
        """The latest `n` decisions (those `keep` accepts), oldest first."""

    def follow(self, stop: threading.Event | None = None) -> Iterator[dict]:
        """Decisions as they are published from now on, until `stop` is set."""

    def count(self) -> int:
        """How many decisions the feed holds."""

    def gateways(self, within_s: float = SEEN_WINDOW_S) -> dict[str, float]:
        """Gateway id → when it last published, for those seen in the last `within_s` seconds."""

    def close(self) -> None: ...


def open_feed(settings) -> DecisionFeed:
    """The feed of `settings.state` for reading (and, for redis, publishing). Raises ConfigError for an unusable
    Redis URL; reading an unreachable Redis raises StateUnavailable."""
    if uses_redis(settings):
        from .decisions_redis import RedisFeed

        return RedisFeed(settings)
    return LocalFeed(settings)


def feed_for(settings):
    """The feed a gateway publishes its decisions to: a RedisFeed, or None for the local back end (its JSONL log
    is the whole feed, so there is nothing more to write)."""
    return open_feed(settings) if uses_redis(settings) else None


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
        from ..decision_log import read_all

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


def tail_lines(path: Path, stop: threading.Event | None = None, poll: float = 0.25) -> Iterator[bytes]:
    """The complete lines appended to a log from now on (raw bytes, newline included); follows the log across a
    rotation or truncation (the new file is read from its start). A partial last line waits for its newline."""
    f = open(path, "rb")
    f.seek(0, 2)
    ino = os.fstat(f.fileno()).st_ino
    buf = b""
    try:
        while stop is None or not stop.is_set():
            chunk = f.readline()
            if chunk:
                buf += chunk
                if not buf.endswith(b"\n"):
                    continue
                line, buf = buf, b""
                yield line
                continue
            try:
                st = os.stat(path)
            except FileNotFoundError:
                time.sleep(poll)
                continue
            if st.st_ino != ino or st.st_size < f.tell():  # rotated or truncated: start the new file
                f.close()
                f = open(path, "rb")
                ino, buf = os.fstat(f.fileno()).st_ino, b""
                continue
            time.sleep(poll)
    finally:
        f.close()
