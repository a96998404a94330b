"""The dashboard's memory: recent decisions, their details, live aggregates, and the SSE subscribers.

`publish` is called from the proxy's worker threads and never blocks: each subscriber has a bounded queue,
and a subscriber that falls behind is dropped (its browser reconnects and re-reads the snapshot). A subscriber
may carry a filter (query.py): it is sent only the decisions that match. Every summary carries its plain-words
verdict and reason (wording.py), so the row and the detail read alike.

A fleet (state.backend redis): the hub also holds the decisions of the other gateways (`publish_remote`, from the
shared feed: guardian_proxy/state/decisions.py), each with its `gateway`; they count in the stats, the sites and apps
and reach the subscribers like this gateway's own. Their detail is kept by the gateway that decided them: here
the detail is the log record and says which gateway that was.
"""

from __future__ import annotations

import json
import os
import queue
import stat
import threading
from collections import OrderedDict, deque
from pathlib import Path

from ..logmask import mask_record
from . import wording
from .apps import group_by_app
from .sites import group_by_site
from .stats import Stats

SUMMARY_FIELDS = ("ts", "id", "method", "scheme", "host", "path", "recipient", "categories", "purposes", "basis",
                  "L", "l_path", "u", "R", "tier", "action", "start_level", "final_level", "rounds", "latency_ms",
                  "explanation", "override", "rule", "flags", "spans", "site", "gateway", "app")


def summary(rec: dict) -> dict:
    s = {k: rec.get(k) for k in SUMMARY_FIELDS if k in rec}
    s["verdict"], s["why"] = wording.verdict(rec), wording.why(rec)
    return s


class Subscriber:
    """One SSE reader: a bounded queue of JSON strings; None or `dropped` ends the stream."""

    def __init__(self, size: int, keep=None):
        self.q: queue.Queue = queue.Queue(size)
        self.dropped = False
        self.keep = keep  # a filter (query.Query) or None: every decision

    def get(self, timeout: float) -> str | None:
        return self.q.get(timeout=timeout)


class Hub:
    def __init__(self, recent: int = 500, details: int = 500, queue_size: int = 1000, gateway: str | None = None):
        self._lock = threading.Lock()
        self.gateway = gateway  # this gateway's id in a fleet (None: one gateway)
        self.recent: deque[dict] = deque(maxlen=recent)
        self.details: OrderedDict[str, dict] = OrderedDict()
        self.max_details = details
        self.stats = Stats()
        self.queue_size = queue_size
        self._subs: list[Subscriber] = []
        self.closed = threading.Event()

    def publish(self, rec: dict, detail: dict | None = None) -> None:
        s = summary(rec)
        msg = json.dumps(s, ensure_ascii=False, separators=(",", ":"))
        with self._lock:
            self.recent.append(s)
            self.stats.add(rec)
            if detail is not None and rec.get("id"):
                self.details[rec["id"]] = detail
                while len(self.details) > self.max_details:
                    self.details.popitem(last=False)
            subs = list(self._subs)
        for sub in subs:
            if sub.keep is not None and not sub.keep(s):
                continue
            try:
                sub.q.put_nowait(msg)
            except queue.Full:  # too slow: drop it; the browser reconnects and re-reads the snapshot
                sub.dropped = True
                self.unsubscribe(sub)

    def publish_remote(self, rec: dict) -> None:
        """A decision of another gateway of the fleet (from the shared feed): no detail here. It passes the log's
        masking function again, like a seeded record (that gateway may run an earlier version)."""
        self.publish(mask_record(rec))

    def seed(self, records) -> int:
        """Load earlier decisions (from the log) without notifying subscribers. They pass the log's masking
        function again: a log written by an earlier version may hold what it now masks."""
        n = 0
        with self._lock:
            for rec in records:
                self.recent.append(mask_record(summary(rec)))
                self.stats.add(rec)
                n += 1
        return n

    def subscribe(self, keep=None) -> Subscriber:
        sub = Subscriber(self.queue_size, keep)
        with self._lock:
            self._subs.append(sub)
        return sub

    def unsubscribe(self, sub: Subscriber) -> None:
        with self._lock:
            if sub in self._subs:
                self._subs.remove(sub)

    @property
    def subscribers(self) -> int:
        with self._lock:
            return len(self._subs)

    def close(self) -> None:
        self.closed.set()
        with self._lock:
            subs, self._subs = self._subs, []
        for sub in subs:
            sub.dropped = True
            try:
                sub.q.put_nowait(None)
            except queue.Full:
                pass

    def snapshot(self, limit: int = 200, keep=None) -> dict:
        """The latest `limit` decisions (those `keep` matches, when given) and the aggregates over all."""
        with self._lock:
            recent = list(self.recent)
            stats = self.stats.to_dict()
        if keep is not None:
            recent = [s for s in recent if keep(s)]
        return {"recent": recent[-limit:], "stats": stats, "matched": len(recent) if keep is not None else None,
                "gateway": self.gateway}

    def sites(self, keep=None) -> list[dict]:
        """The recent decisions grouped by the page that made them (sites.py), those `keep` matches."""
        with self._lock:
            recent = list(self.recent)
        return group_by_site(s for s in recent if keep is None or keep(s))

    def apps(self, keep=None) -> list[dict]:
        """The recent decisions grouped by the program that sent them (apps.py), those `keep` matches."""
        with self._lock:
            recent = list(self.recent)
        return group_by_app(s for s in recent if keep is None or keep(s))

    def stats_dict(self) -> dict:
        with self._lock:
            return self.stats.to_dict()

    def detail(self, decision_id: str) -> dict | None:
        with self._lock:
            d = self.details.get(decision_id)
            if d is not None:
                return d
            for s in reversed(self.recent):  # an earlier run's decision: the log record is all there is
                if s.get("id") == decision_id:
                    s = dict(s)
                    s.setdefault("sentence", mask_record({"sentence": wording.sentence(s)})["sentence"])
                    return self._elsewhere(s)
        return None

    def _elsewhere(self, s: dict) -> dict:
        """A record decided by another gateway of the fleet says so: its detail is kept there."""
        gw = s.get("gateway")
        if self.gateway is not None and gw and gw != self.gateway:
            s["elsewhere"] = gw
            s["note"] = (f"Decided by the gateway {gw} of the fleet: the detail of this decision (what left, the "
                         f"factors, the policy evidence) is kept by that gateway only.")
        return s


def tail_records(path: Path, max_bytes: int = 2 * 1024 * 1024) -> list[dict]:
    """Whole records from the last `max_bytes` of a decision log (empty if it does not exist)."""
    try:
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode):
                return []  # a device (/dev/full, /dev/null) or a pipe: nothing to replay, and never read without end
            size = st.st_size
            f.seek(max(0, size - max_bytes))
            data = f.read(max_bytes)
    except OSError:
        return []
    lines = data.split(b"\n")
    if size > max_bytes:
        lines = lines[1:]  # the first one is probably cut
    out = []
    for line in lines:
        line = line.strip()
        if not line:
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict):
            out.append(rec)
    return out
