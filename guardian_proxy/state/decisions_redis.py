"""The decision feed in Redis: the stream `<prefix>:decisions`, shared by every gateway of the fleet.

Each entry is `{g: <gateway id>, r: <the log record as JSON>}`: the record the JSONL log got (masked: never a raw
value), so the stream holds nothing the log does not. The stream is capped near `state.recent_decisions` entries
(XADD MAXLEN ~). The hash `<prefix>:decisions:gateways` holds, per gateway id, when it last published.

Publishing never blocks the caller: `publish` puts the record on a bounded queue (QUEUE_MAX) that one background
thread sends in pipelined batches. A full queue, or a Redis that is down or slower than `state.timeout_s`, drops
those decisions from the feed (counted in `dropped`, one warning a minute): the JSONL log has them all.

Reading (`records`, `recent`, `follow`, `count`, `gateways`) raises StateUnavailable when Redis cannot answer
within `state.timeout_s`; `follow` polls with XREAD BLOCK for less than that.
"""

from __future__ import annotations

import atexit
import json
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator

from redis.exceptions import RedisError

from .base import StateUnavailable, gateway_id, key, redis_client, where
from .decisions import SEEN_WINDOW_S

log = logging.getLogger("guardian_proxy.state")
QUEUE_MAX = 10_000  # records waiting to be sent; past it a new one is dropped from the feed
BATCH = 500  # records per pipelined round trip
PAGE = 500  # entries per XRANGE / XREVRANGE / XREAD when reading
WARN_EVERY_S = 60.0
_STOP = object()


def _text(v) -> str:
    return v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)


def _entry(fields: dict) -> dict | None:
    """A stream entry as a record with its `gateway`; None for an entry that is not one."""
    try:
        rec = json.loads(fields.get(b"r") or b"")
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    if not isinstance(rec, dict):
        return None
    rec["gateway"] = _text(fields.get(b"g") or b"?")
    return rec


class RedisFeed:
    """The fleet's recent decisions in one Redis stream (see the module's docstring)."""

    shared = True

    def __init__(self, settings):
        st = settings.state
        self.settings = settings
        self.gateway = gateway_id(settings)
        self.stream = key(settings, "decisions")
        self.seen = key(settings, "decisions", "gateways")
        self.maxlen = st.recent_decisions
        self.timeout_s = st.timeout_s
        self.where = where(settings)
        self.client = redis_client(settings)  # ConfigError here for a URL the client cannot use
        self.published = 0
        self.dropped = 0
        self._q: queue.Queue = queue.Queue(QUEUE_MAX)
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self._drop_lock = threading.Lock()
        self._unwarned = 0  # dropped since the last warning
        self._warned_at: float | None = None

    # ------------------------------------------------------------------ publishing

    def publish(self, rec: dict) -> None:
        """Queue one record for the stream (the caller's cost: one put_nowait); never blocks, never raises."""
        try:
            self._q.put_nowait(rec)
        except queue.Full:
            self._drop(1, "too many decisions waiting for Redis")
            return
        if self._thread is None:
            self._start()

    def _start(self) -> None:
        with self._start_lock:
            if self._thread is None:
                t = threading.Thread(target=self._run, name="guardian-decision-feed", daemon=True)
                t.start()
                self._thread = t
                atexit.register(self.close, self.timeout_s)  # what is queued at exit is sent, briefly

    def _run(self) -> None:
        while True:
            item = self._q.get()
            batch, stop = [], item is _STOP
            if not stop:
                batch.append(item)
            while not stop and len(batch) < BATCH:
                try:
                    item = self._q.get_nowait()
                except queue.Empty:
                    break
                if item is _STOP:
                    stop = True
                else:
                    batch.append(item)
            try:
                if batch:
                    self._send(batch)
            finally:
                for _ in range(len(batch) + (1 if stop else 0)):
                    self._q.task_done()
            if stop:
                return

    def _send(self, batch: list[dict]) -> None:
        try:
            pipe = self.client.pipeline(transaction=False)
            for rec in batch:
                pipe.xadd(self.stream, {"g": self.gateway,
                                        "r": json.dumps(rec, ensure_ascii=False, separators=(",", ":"))},
                          maxlen=self.maxlen, approximate=True)
            pipe.hset(self.seen, self.gateway, f"{time.time():.3f}")
            pipe.execute()
            self.published += len(batch)
        except (RedisError, OSError, TypeError, ValueError) as e:  # down, slow, or a record JSON cannot hold
            self._drop(len(batch), f"{self.where} did not take them ({_one_line(e)})")

    def _drop(self, n: int, why: str) -> None:
        with self._drop_lock:
            self.dropped += n
            self._unwarned += n
            now = time.monotonic()
            if self._warned_at is not None and now - self._warned_at < WARN_EVERY_S:
                return
            self._warned_at, count, self._unwarned = now, self._unwarned, 0
        log.warning("decision feed: %d decision%s not published: %s; the decision log has them", count,
                    "" if count == 1 else "s", why)

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until the queue is sent (or dropped); True when it was within `timeout`."""
        deadline = time.monotonic() + timeout
        while self._q.unfinished_tasks:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.005)
        return True

    def close(self, timeout: float | None = None) -> None:
        """Send what is queued (waiting at most `timeout`, default twice state.timeout_s), then stop the thread."""
        t = self._thread
        if t is None:
            return
        try:
            self._q.put(_STOP, timeout=0.1)
        except queue.Full:
            return  # still sending to a slow Redis: the daemon thread ends with the process
        t.join(2 * self.timeout_s if timeout is None else timeout)
        if not t.is_alive():
            self._thread = None

    # ------------------------------------------------------------------ reading

    def _ask(self, fn, *args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (RedisError, OSError) as e:
            raise StateUnavailable(f"{self.where}: {_one_line(e)}") from None

    def ping(self) -> None:
        """Raises StateUnavailable when Redis does not answer."""
        self._ask(self.client.ping)

    def records(self) -> Iterator[dict]:
        lo = "-"
        while True:
            rows = self._ask(self.client.xrange, self.stream, min=lo, max="+", count=PAGE)
            for _id, fields in rows:
                rec = _entry(fields)
                if rec is not None:
                    yield rec
            if len(rows) < PAGE:
                return
            lo = "(" + _text(rows[-1][0])

    def recent(self, n: int, keep: Callable[[dict], bool] | None = None, end: str = "+") -> list[dict]:
        """The latest `n` decisions up to the entry `end` (an id from `last_id`, or "+"), oldest first."""
        out: list[dict] = []
        hi = end
        while len(out) < n:
            rows = self._ask(self.client.xrevrange, self.stream, max=hi, min="-", count=PAGE)
            for _id, fields in rows:
                rec = _entry(fields)
                if rec is not None and (keep is None or keep(rec)):
                    out.append(rec)
                    if len(out) >= n:
                        break
            if len(rows) < PAGE:
                break
            hi = "(" + _text(rows[-1][0])
        out.reverse()
        return out

    def last_id(self) -> str:
        """The id of the newest entry ("0-0" for an empty stream): where a `follow` from now starts."""
        rows = self._ask(self.client.xrevrange, self.stream, max="+", min="-", count=1)
        return _text(rows[0][0]) if rows else "0-0"

    def block_ms(self) -> int:
        """XREAD BLOCK time: under the per-command timeout, so that a wait is never taken for a dead server."""
        return max(1, min(1000, int(self.timeout_s * 500)))

    def read_after(self, last: str) -> tuple[str, list[dict]]:
        """One XREAD BLOCK: the entries after `last` (waiting up to `block_ms`), and the new `last`."""
        got = self._ask(self.client.xread, {self.stream: last}, count=PAGE, block=self.block_ms())
        out = []
        for _stream, rows in got or ():
            for entry_id, fields in rows:
                last = _text(entry_id)
                rec = _entry(fields)
                if rec is not None:
                    out.append(rec)
        return last, out

    def follow(self, stop: threading.Event | None = None, since: str | None = None) -> Iterator[dict]:
        last = since or self.last_id()
        while stop is None or not stop.is_set():
            last, recs = self.read_after(last)
            yield from recs

    def count(self) -> int:
        return int(self._ask(self.client.xlen, self.stream))

    def gateways(self, within_s: float = SEEN_WINDOW_S) -> dict[str, float]:
        now = time.time()
        out = {}
        for gw, ts in (self._ask(self.client.hgetall, self.seen) or {}).items():
            try:
                t = float(_text(ts))
            except ValueError:
                continue
            if now - t <= within_s:
                out[_text(gw)] = t
        return out


def _one_line(e: BaseException) -> str:
    return " ".join(str(e).split()) or type(e).__name__
