"""Client connections: a hostile client cannot hold the proxy's sockets (R-CONNECTION-CAPS, docs/security.md).

A mitmproxy addon (put in the chain by mitm/app.py `build`; it imports nothing of mitmproxy at load time: the
hooks get mitmproxy's objects, `running` gets the proxy's listening servers from mitm/serve.py
`listening_servers`, and `close(client_id, why)` is mitm/serve.py `close_client`). Rules, for TCP client
connections:

- header timeout: a connection must send a complete request head within `header_timeout_s` of opening (after a
  CONNECT, the tunnelled request's head within `header_timeout_s` of the CONNECT); else it is closed;
- idle timeout: a connection with no request in flight (between keep-alive requests) is closed after
  `idle_timeout_s`; while a request, a streamed response (SSE), a WebSocket or a TCP tunnel is in flight this
  timer never runs (mitmproxy's own 10-minute inactivity timeout then applies: any byte resets it);
- caps: at most `total` connections in all, and at most `per_client` per remote client address; loopback
  clients have no count of their own (every local program, browser, agent or fleet comes from 127.0.0.1 / ::1:
  many honest programs, not one client): the header timeout is their slowloris defence. At a cap, a new
  connection replaces the oldest idle keep-alive connection (one served, with no request in flight), else the
  oldest one still waiting for its request head, and is refused only when every one has a request in flight.
  A flood of half-open connections therefore never locks a client out.
- the open-file limit: the soft limit is raised towards the hard one so that `total` connections fit (each
  client connection may hold an upstream one too); `total` is kept under half of what the limit then is;
- the listen backlog of the proxy's TCP servers is raised (`BACKLOG`, within the kernel's somaxconn) so that a
  burst of connections waits in the kernel's queue instead of being dropped and retried a second later.

Closings are counted and reported in one log line at most every 10 s (never an address or a value).
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import resource
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field

log = logging.getLogger("guardian_proxy")

REPORT_EVERY_S = 10.0
_MARK = "guardian_inflight"  # flow.metadata key: this flow is counted as in flight on its client connection


BACKLOG = 4096


def open_file_cap(wanted: int) -> int:
    """`wanted`, kept under half the open-file limit (each client connection may hold an upstream one too), after
    raising the soft limit towards the hard one as far as `wanted` needs."""
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (OSError, ValueError):
        return wanted
    if soft == resource.RLIM_INFINITY:
        return wanted
    need = 2 * wanted + 64
    if soft < need:
        target = need if hard == resource.RLIM_INFINITY else min(need, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (OSError, ValueError):
            pass
    if soft <= 0:
        return wanted
    return min(wanted, max(16, (soft - 64) // 2))


def is_loopback(addr: str) -> bool:
    try:
        ip = ipaddress.ip_address(addr.split("%", 1)[0])
    except ValueError:
        return False
    mapped = getattr(ip, "ipv4_mapped", None)
    return (mapped or ip).is_loopback


def widen_backlog(servers, backlog: int = BACKLOG) -> int:
    """Call listen(backlog) again on every listening TCP socket of `servers` (asyncio.Server objects; the kernel
    caps it at somaxconn); returns how many sockets were widened."""
    n = 0
    for srv in servers:
        for ts in getattr(srv, "sockets", None) or ():
            try:
                if ts.type != socket.SOCK_STREAM:
                    continue
                with socket.socket(ts.family, ts.type, fileno=socket.dup(ts.fileno())) as s:
                    s.listen(backlog)
                n += 1
            except (OSError, ValueError, AttributeError) as e:
                log.debug("guardian: widening a listen backlog: %s", type(e).__name__)
    return n


@dataclass
class _Conn:
    cid: str
    addr: str
    inflight: int = 0
    served: bool = False  # a request head has come: with no request in flight it is an idle keep-alive connection
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
        if is_loopback(addr):
            addr = "loopback"  # many programs: no count of their own (see the module's docstring)
        mine = self.by_addr.setdefault(addr, {})
        if addr != "loopback" and len(mine) >= self.per_client and not self._replace(mine.values()):
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
        """Close the oldest idle keep-alive candidate, else the oldest still waiting for its request head; False
        when every one has a request in flight."""
        victim = waiting = None
        for c in candidates:
            if c.inflight == 0:
                if c.served:
                    victim = c
                    break
                waiting = waiting or c
        victim = victim or waiting
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

    def running(self) -> None:
        """The proxy's servers listen by now: a burst of connections waits in a deep enough accept queue."""
        try:
            from .mitm.serve import listening_servers  # mitm/app.py imports this module: a late import

            widen_backlog(listening_servers())
        except Exception as e:  # no mitmproxy master (a unit test)
            log.debug("guardian: the listen backlog stays as it is: %s", type(e).__name__)

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
        c.served = True
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
