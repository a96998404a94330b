"""Hostile clients (R-CONNECTION-CAPS): half-open connections (slowloris), idle keep-alive connections and
connection floods against a real `guardian-proxy run` and against the dashboard's server; the rules of
guardian_proxy/connections.py unit by unit.

Rules checked: a connection that has not sent a complete request head within the header timeout is closed; one
with no request in flight is closed after the idle timeout, but a stream in flight (SSE) never is; at the
cap a new connection replaces the oldest one without a request in flight (an idle keep-alive one first), so a
flood never locks the client out; loopback clients have no per-address cap (every local program comes
from 127.0.0.1), only the total one, and a remote address keeps its own; the dashboard's handler threads are
bounded and a half-open request head is dropped."""

from __future__ import annotations

import asyncio
import http.client
import socket
import threading
import time
from types import SimpleNamespace

import httpx
import pytest

from guardian_proxy.config import load_settings
from guardian_proxy.connections import ConnectionGuard
from guardian_proxy.dashboard import Dashboard
from guardian_proxy.dashboard import server as dash_server
from tests.support.hostile import HostileUpstream, open_files, proxy_args, write_config
from tests.support.proxy_process import start_proxy

HEADER_S, IDLE_S, CAP = 1.5, 1.0, 100
HALF = b"GET http://www.example.org/small HTTP/1.1\r\nHost: www.exa"


def closed_within(socks: list[socket.socket], seconds: float) -> int:
    """How many of `socks` the other side closed (EOF or reset) within `seconds`."""
    deadline, n = time.monotonic() + seconds, 0
    for s in socks:
        try:
            while True:
                s.settimeout(max(0.01, deadline - time.monotonic()))
                if not s.recv(65536):
                    n += 1
                    break
        except (ConnectionResetError, BrokenPipeError):
            n += 1
        except TimeoutError:
            pass
        finally:
            s.close()
    return n


def max_settled(value, target: int, within: float) -> int:
    """`value()` once it is at most `target`, or its last reading after `within` seconds."""
    deadline = time.monotonic() + within
    while True:
        v = value()
        if v <= target or time.monotonic() > deadline:
            return v
        time.sleep(0.05)


def half_open(port: int, n: int, payload: bytes = HALF) -> list[socket.socket]:
    out = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.sendall(payload)
        out.append(s)
    return out


# ------------------------------------------------------------------ the proxy, end to end


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    d = tmp_path_factory.mktemp("hostile-clients")
    up = HostileUpstream()
    # loopback clients count against the total cap only, so the cap these tests reach is the total one
    cfg = write_config(d, header_timeout_s=HEADER_S, idle_timeout_s=IDLE_S, max_connections=CAP)
    px = start_proxy(d, up.port, extra=proxy_args(cfg))
    yield up, px
    px.stop()
    up.close()


@pytest.mark.slow
def test_half_open_connections_are_closed_and_a_normal_request_still_succeeds(env):
    up, px = env
    base = open_files(px.proc.pid)
    socks = half_open(px.port, 300)
    t = time.perf_counter()
    r = httpx.get("http://www.example.org/small", proxy=px.url, timeout=10, trust_env=False)
    took = time.perf_counter() - t
    assert r.status_code == 200 and r.json() == {"ok": True}
    assert took < 2.0, f"a normal request took {took:.1f}s beside 300 half-open connections"
    held = max_settled(lambda: open_files(px.proc.pid) - base, CAP + 20, 1.0)
    assert held <= CAP + 20, f"the proxy holds {held} more files for 300 half-open connections (cap {CAP})"
    n = closed_within(socks, HEADER_S + 4.0)
    assert n == 300, f"{300 - n} half-open connections still open after the header timeout"
    assert max_settled(lambda: open_files(px.proc.pid) - base, 10, 2.0) <= 10


@pytest.mark.slow
def test_at_the_cap_with_every_connection_busy_a_new_one_is_refused(env):
    up, px = env
    up.gate.clear()
    busy = half_open(px.port, CAP, b"GET http://files.example.org/slow?n=100000 HTTP/1.1\r\nHost: files.example.org\r\n\r\n")
    for s in busy:  # every one has its response under way (held by the upstream)
        s.settimeout(10)
        assert s.recv(1)
    extra = socket.create_connection(("127.0.0.1", px.port), timeout=10)
    extra.sendall(b"GET http://www.example.org/small HTTP/1.1\r\nHost: www.example.org\r\n\r\n")
    extra.settimeout(3.0)
    try:
        answer = extra.recv(65536)
    except ConnectionResetError:
        answer = b""
    extra.close()
    assert answer == b"", "a connection over the cap was served"
    up.gate.set()
    assert closed_within(busy, 10.0) == CAP  # each got its whole answer (the upstream closes after it)


@pytest.mark.slow
def test_an_idle_keepalive_connection_is_closed_but_a_busy_one_is_not(env):
    up, px = env
    c = http.client.HTTPConnection("127.0.0.1", px.port, timeout=10)
    for _ in range(3):  # requests within the idle timeout keep the connection
        c.request("GET", "http://www.example.org/small")
        assert c.getresponse().read() == b'{"ok": true}'
        time.sleep(IDLE_S / 3)
    sock = c.sock
    assert closed_within([sock], IDLE_S + 3.0) == 1, "an idle keep-alive connection stayed open"


@pytest.mark.slow
def test_a_stream_in_flight_is_never_cut_by_the_idle_or_header_timeout(env):
    up, px = env
    events = int((HEADER_S + IDLE_S) * 2 / 0.4) + 2  # longer than both timeouts together
    with httpx.Client(proxy=px.url, timeout=30, trust_env=False) as c:
        with c.stream("GET", f"http://stream.example.org/sse?events={events}&every=0.4") as r:
            got = [line for line in r.iter_lines() if line.startswith("data: ")]
    assert len(got) == events


# ------------------------------------------------------------------ ConnectionGuard, unit


def _client(i: int, addr: str = "10.0.0.1"):
    return SimpleNamespace(id=f"c{i}", peername=(addr, 40000 + i), transport_protocol="tcp", error=None)


def _flow(client):
    return SimpleNamespace(client_conn=client, metadata={}, websocket=None)


def test_at_the_cap_the_oldest_waiting_connection_makes_room():
    closed = []
    g = ConnectionGuard(lambda cid, why: closed.append((cid, why)), per_client=3, total=100)
    cs = [_client(i) for i in range(3)]
    for c in cs:
        g.client_connected(c)
    g.requestheaders(_flow(cs[0]))  # c0 has a request in flight: never the one replaced
    g.client_connected(new := _client(3))
    assert closed == [("c1", "replaced at the cap")] and new.error is None
    g.client_connected(_client(9, "10.0.0.2"))  # another address has its own cap
    assert len(closed) == 1


def test_refused_only_when_every_connection_has_a_request_in_flight():
    closed = []
    g = ConnectionGuard(lambda cid, why: closed.append(cid), per_client=2, total=100)
    cs = [_client(i) for i in range(2)]
    for c in cs:
        g.client_connected(c)
        g.requestheaders(_flow(c))
    g.client_connected(extra := _client(2))
    assert extra.error and not closed
    g.client_disconnected(cs[0])
    g.client_connected(again := _client(3))
    assert again.error is None


def test_loopback_clients_have_no_per_address_cap_but_a_remote_address_does():
    closed = []
    g = ConnectionGuard(lambda cid, why: closed.append(cid), per_client=3, total=5000)
    for i, addr in enumerate(["127.0.0.1", "127.0.0.2", "::1", "::ffff:127.0.0.1"] * 250):
        g.client_connected(c := _client(i, addr))  # 1,000 local programs, none with its request head yet
        assert c.error is None
    assert not closed and len(g.conns) == 1000
    remote = [_client(2000 + i, "192.168.1.20") for i in range(4)]
    for c in remote:
        g.client_connected(c)
    assert closed == ["c2000"]  # the remote address's own cap: its oldest waiting connection made room


def test_at_the_cap_an_idle_keepalive_connection_goes_before_one_still_sending_its_head():
    closed = []
    g = ConnectionGuard(lambda cid, why: closed.append(cid), per_client=100, total=3)
    head_pending, served, busy = _client(0, "127.0.0.1"), _client(1, "127.0.0.1"), _client(2, "127.0.0.1")
    for c in (head_pending, served, busy):
        g.client_connected(c)
    f = _flow(served)
    g.requestheaders(f)
    g.response(f)  # served, now idle between keep-alive requests
    g.requestheaders(_flow(busy))
    g.client_connected(_client(3, "127.0.0.1"))
    assert closed == ["c1"]  # not the older c0, which may be an honest client whose head is on its way
    g.client_connected(_client(4, "127.0.0.1"))
    assert closed == ["c1", "c0"]


def test_the_open_file_limit_is_raised_so_the_total_cap_fits():
    import subprocess
    import sys

    code = ("import resource\n"
            "soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)\n"
            "resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))\n"
            "from guardian_proxy.connections import open_file_cap\n"
            "print(open_file_cap(1000), resource.getrlimit(resource.RLIMIT_NOFILE)[0], hard)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    cap, soft, hard = (int(x) for x in out)
    if hard != -1 and hard < 2064:
        pytest.skip(f"the hard open-file limit is {hard}")
    assert cap == 1000 and soft >= 2064


def test_the_total_cap_spans_addresses():
    closed = []
    g = ConnectionGuard(lambda cid, why: closed.append(cid), per_client=100, total=2)
    g.client_connected(_client(0, "10.0.0.1"))
    g.client_connected(_client(1, "10.0.0.2"))
    g.client_connected(_client(2, "10.0.0.3"))
    assert closed == ["c0"]


def test_timers_header_then_idle_and_in_flight_streams():
    async def main():
        closed = []
        g = ConnectionGuard(lambda cid, why: closed.append((cid, why)), header_timeout_s=0.1, idle_timeout_s=0.2)
        slow, fast, ws = _client(0), _client(1), _client(2)
        for c in (slow, fast, ws):
            g.client_connected(c)
        f, w = _flow(fast), _flow(ws)
        g.requestheaders(f)
        g.requestheaders(w)
        await asyncio.sleep(0.15)
        assert closed == [("c0", "header timeout")]  # the one without a complete head
        w.websocket = object()
        g.response(w)  # the handshake's answer: the WebSocket stays in flight
        g.response(f)  # the idle timer starts now
        await asyncio.sleep(0.1)
        assert len(closed) == 1
        await asyncio.sleep(0.2)
        assert ("c1", "idle") in closed and all(cid != "c2" for cid, _ in closed)
        g.websocket_end(w)
        await asyncio.sleep(0.25)
        assert ("c2", "idle") in closed

    asyncio.run(main())


def test_a_connect_restarts_the_header_timer_and_udp_is_left_alone():
    async def main():
        closed = []
        g = ConnectionGuard(lambda cid, why: closed.append(cid), header_timeout_s=0.15)
        c = _client(0)
        g.client_connected(c)
        await asyncio.sleep(0.1)
        g.http_connect(_flow(c))
        await asyncio.sleep(0.1)
        assert not closed
        await asyncio.sleep(0.1)
        assert closed == ["c0"]
        g.client_connected(SimpleNamespace(id="u", peername=("10.0.0.1", 1), transport_protocol="udp", error=None))
        assert "u" not in g.conns

    asyncio.run(main())


# ------------------------------------------------------------------ the dashboard's server


@pytest.fixture
def dash(tmp_path):
    d = Dashboard(load_settings(state_dir=tmp_path / "state"), port=0, proxy=("127.0.0.1", 8080), mode="regular")
    assert d.start(), d.error
    d._httpd.head_timeout_s = 1.0
    yield d
    d.stop()


def test_dashboard_threads_stay_bounded_under_half_open_connections(dash):
    base = threading.active_count()
    socks = half_open(dash.port, 500, b"GET /api/snapshot HTTP/1.1\r\nHost: 127.0")
    time.sleep(0.3)
    grown = threading.active_count() - base
    assert grown <= getattr(dash_server, "MAX_HANDLERS", 64) + 2, f"{grown} dashboard threads for 500 half-open connections"
    t = time.perf_counter()
    r = httpx.get(dash.base_url + "/api/snapshot", headers={"X-Guardian-Token": dash.guard.token}, timeout=10,
                  trust_env=False)
    assert r.status_code == 200 and time.perf_counter() - t < 3.0
    assert closed_within(socks, 1.0 + 4.0) == 500
    time.sleep(0.5)
    assert threading.active_count() - base <= 2
