"""The recent decisions of a fleet: the dashboard's and `log --fleet` / `stats --fleet`'s view of every gateway.

Every decision line the gateway writes to its JSONL log (a record the log's masking has passed: never a raw
value) is also handed to the feed (evaluator.py `write_line`). Two back ends behind `DecisionFeed`:

    local   nothing new: one gateway, and its JSONL log is its fleet. Publishing does nothing (`feed_for` gives
            None); reading reads the log (rotated files, then the live one): decisions_local.py.
    redis   the stream `<prefix>:decisions` (decisions_redis.py), kept to `state.recent_decisions` entries
            (XADD MAXLEN ~), each entry the record and the id of the gateway that decided it. Publishing is off
            the caller's thread: a bounded queue and one background thread; a full queue or an unreachable
            Redis drops the decision from the feed (one warning a minute), never blocks or fails the request:
            the JSONL log stays the record of truth.

Read records carry `gateway`: the id of the gateway that decided them (`state.gateway_id`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Protocol

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
