"""Client connections: a hostile client cannot hold the proxy's sockets (README "Under load, faults and attack").

A mitmproxy addon (registered by addon._serve; it imports nothing of mitmproxy: the hooks get mitmproxy's
objects, and `close(client_id, why)` is addon.py's). Rules, for TCP client connections:

- header timeout: a connection must send a complete request head within `header_timeout_s` of opening (after a
  CONNECT, the tunnelled request's head within `header_timeout_s` of the CONNECT); else it is closed;
- idle timeout: a connection with no request in flight (between keep-alive requests) is closed after
  `idle_timeout_s`; while a request, a streamed response (SSE), a WebSocket or a TCP tunnel is in flight this
  timer never runs (mitmproxy's own 10-minute inactivity timeout then applies: any byte resets it);
- caps: at most `per_client` connections per client address and `total` in all; at a cap, a new connection
  replaces the oldest one (of that address, or any) that has no request in flight, and is refused only when
  every one has a request in flight. A flood of half-open connections therefore never locks a client out.

Closings are counted and reported in one log line at most every 10 s (never an address or a value).
"""

from __future__ import annotations

import asyncio
import logging
import resource
import time
from collections.abc import Callable
from dataclasses import dataclass, field

log = logging.getLogger("guardian_proxy")

REPORT_EVERY_S = 10.0
_MARK = "guardian_inflight"  # flow.metadata key: this flow is counted as in flight on its client connection


def open_file_cap(wanted: int) -> int:
    """`wanted`, kept under half the soft open-file limit (each client connection may hold an upstream one too)."""
    try:
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (OSError, ValueError):
        return wanted
    if soft == resource.RLIM_INFINITY or soft <= 0:
        return wanted
    return min(wanted, max(16, (soft - 64) // 2))


@dataclass
class _Conn:
    cid: str
    addr: str
    inflight: int = 0
    timer: asyncio.TimerHandle | None = field(default=None, repr=False)


class ConnectionGuard:
    def __init__(self, close: Callable[[str, str], None], header_timeout_s: float = 20.0,
                 idle_timeout_s: float = 300.0, per_client: int = 256, total: int = 4096):
        self.close = close
        self.header_timeout_s, self.idle_timeout_s = header_timeout_s, idle_timeout_s
        self.per_client, self.total = per_client, open_file_cap(total)
        self.conns: dict[str, _Conn] = {}  # insertion order: oldest first
        self.by_addr: dict[str, dict[str, _Conn]] = {}
        self.counts = {"header timeout": 0, "idle": 0, "replaced at the cap": 0, "refused at the cap": 0}
        self._reported = 0.0

    @classmethod
    def from_limits(cls, close: Callable[[str, str], None], limits) -> ConnectionGuard:
        return cls(close, limits.header_timeout_s, limits.idle_timeout_s, limits.max_connections_per_client,
                   limits.max_connections)

    # ------------------------------------------------------------------ connections

    def client_connected(self, client) -> None:
        if getattr(client, "transport_protocol", "tcp") != "tcp":
            return  # UDP/QUIC/DNS have mitmproxy's own 20 s timeout
        addr = str(client.peername[0]) if getattr(client, "peername", None) else "?"
        mine = self.by_addr.setdefault(addr, {})
        if len(mine) >= self.per_client and not self._replace(mine.values()):
            return self._refuse(client, addr)
        if len(self.conns) >= self.total and not self._replace(self.conns.values()):
            return self._refuse(client, addr)
        c = _Conn(client.id, addr)
        self.conns[c.cid] = mine[c.cid] = c
        self._arm(c, self.header_timeout_s, "header timeout")

    def client_disconnected(self, client) -> None:
        self._forget(client.id)

    def _refuse(self, client, addr: str) -> None:
        client.error = "too many connections from this client"
        if not self.by_addr.get(addr):
            self.by_addr.pop(addr, None)
        self._count("refused at the cap")

    def _replace(self, candidates) -> bool:
        """Close the oldest candidate with no request in flight; False when there is none."""
        victim = next((c for c in candidates if c.inflight == 0), None)
        if victim is None:
            return False
        self._drop(victim.cid, "replaced at the cap")
        return True

    def _forget(self, cid: str) -> _Conn | None:
        c = self.conns.pop(cid, None)
        if c is None:
            return None
        if c.timer is not None:
            c.timer.cancel()
        mine = self.by_addr.get(c.addr)
        if mine is not None:
            mine.pop(cid, None)
            if not mine:
                del self.by_addr[c.addr]
        return c

    def _drop(self, cid: str, why: str) -> None:
        if self._forget(cid) is None:
            return
        self._count(why)
        try:
            self.close(cid, why)
        except Exception as e:  # a connection that is already going: nothing to do
            log.debug("guardian: closing a connection (%s): %s", why, type(e).__name__)

    def _arm(self, c: _Conn, after: float, why: str) -> None:
        if c.timer is not None:
            c.timer.cancel()
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop (a unit test calling hooks directly): no timer
            c.timer = None
            return
        c.timer = loop.call_later(after, self._drop, c.cid, why)

    def _count(self, why: str) -> None:
        self.counts[why] = self.counts.get(why, 0) + 1
        now = time.monotonic()
        if now - self._reported >= REPORT_EVERY_S:
            self._reported = now
            log.warning("guardian: client connections closed or refused so far: %s (%d open)",
                        ", ".join(f"{n} {k}" for k, n in self.counts.items() if n), len(self.conns))

    # ------------------------------------------------------------------ requests in flight

    def _conn_of(self, flow) -> _Conn | None:
        client = getattr(flow, "client_conn", None)
        return self.conns.get(client.id) if client is not None else None

    def _begin(self, flow) -> None:
        c = self._conn_of(flow)
        if c is None or flow.metadata.get(_MARK):
            return
        flow.metadata[_MARK] = True
        c.inflight += 1
        if c.timer is not None:
            c.timer.cancel()
            c.timer = None

    def _end(self, flow) -> None:
        if not flow.metadata.pop(_MARK, False):
            return
        c = self._conn_of(flow)
        if c is None:
            return
        c.inflight = max(0, c.inflight - 1)
        if c.inflight == 0:
            self._arm(c, self.idle_timeout_s, "idle")

    def requestheaders(self, flow) -> None:
        self._begin(flow)

    def http_connect(self, flow) -> None:
        """A CONNECT: the tunnelled request's head must follow (TLS handshake included) within the header timeout."""
        c = self._conn_of(flow)
        if c is not None and c.inflight == 0:
            self._arm(c, self.header_timeout_s, "header timeout")

    def response(self, flow) -> None:
        if getattr(flow, "websocket", None) is None:  # a WebSocket stays in flight until it ends
            self._end(flow)

    def error(self, flow) -> None:
        self._end(flow)

    def websocket_end(self, flow) -> None:
        self._end(flow)

    def tcp_start(self, flow) -> None:
        self._begin(flow)

    def tcp_end(self, flow) -> None:
        self._end(flow)

    def tcp_error(self, flow) -> None:
        self._end(flow)
