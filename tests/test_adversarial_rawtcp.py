"""Raw TCP through CONNECT (bytes that are not HTTP) is decided and logged like any request (R-RAW-TRACKER,
R-RAW-DATA)."""

from __future__ import annotations

import os
import re
import socket
import socketserver
import threading
import time

import pytest

from tests.support.proxy_process import start_proxy

pytestmark = pytest.mark.slow


class _Echo(socketserver.BaseRequestHandler):
    def handle(self):
        self.request.settimeout(10)
        while True:
            try:
                data = self.request.recv(65536)
            except OSError:
                return
            if not data:
                return
            with self.server.lock:
                self.server.received.append(data)
            self.request.sendall(b"echo:" + data)


@pytest.fixture(scope="module")
def raw(tmp_path_factory):
    srv = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Echo)
    srv.daemon_threads = True
    srv.received, srv.lock = [], threading.Lock()
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    px = start_proxy(tmp_path_factory.mktemp("rawtcp"), srv.server_address[1])
    yield srv, px
    px.stop()
    srv.shutdown()
    srv.server_close()


def _tunnel(px, authority: str) -> tuple[socket.socket, bytes]:
    s = socket.create_connection(("127.0.0.1", px.port), timeout=20)
    s.sendall(f"CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = s.recv(4096)
        if not chunk:
            break
        head += chunk
    return s, head


def _read(s: socket.socket, wait: float = 5.0) -> bytes:
    s.settimeout(wait)
    out = b""
    try:
        while chunk := s.recv(65536):
            out += chunk
            if out.startswith(b"echo:"):
                break
    except (TimeoutError, ConnectionResetError):
        pass
    return out


def _arrived(srv) -> bytes:
    with srv.lock:
        return b"".join(srv.received)


def _lines(px, host: str) -> list[dict]:
    deadline = time.time() + 10
    while time.time() < deadline:
        lines = [x for x in px.log_lines() if x["host"] == host]
        if lines:
            return lines
        time.sleep(0.2)
    return []


def test_binary_protocol_to_an_ordinary_host_passes_both_ways(raw):
    srv, px = raw
    s, head = _tunnel(px, "db.example.org:5432")
    assert b" 200" in head.split(b"\r\n")[0]
    payload = b"\x00\x00\x00\x08\x04\xd2\x16\x2f" + os.urandom(64)
    s.sendall(payload)
    assert _read(s) == b"echo:" + payload
    s.close()
    assert payload in _arrived(srv)
    assert any(x["method"] == "OPEN" and x["action"] == "allow" for x in _lines(px, "db.example.org"))


def test_personal_data_in_a_raw_stream_is_not_sent_and_is_logged(raw):
    srv, px = raw
    s, head = _tunnel(px, "chat.example.net:7000")
    assert b" 200" in head.split(b"\r\n")[0]
    s.sendall(b'{"user":"jane.doe@example.com","card":"4111 1111 1111 1111","note":"hi"}\n')
    got = _read(s)
    s.close()
    assert b"4111" not in _arrived(srv) and b"jane.doe" not in _arrived(srv)
    assert not got.startswith(b"echo:")
    lines = _lines(px, "chat.example.net")
    sent = [x for x in lines if x["method"] == "SEND"]
    assert sent and sent[-1]["action"] == "deny"  # by risk, or by rule raw-stream-data where it would be rewritten
    assert "jane.doe" not in str(lines) and not re.search(r"4111[ -]?1111", str(lines))


def test_raw_connection_to_a_tracker_never_opens(raw):
    srv, px = raw
    before = _arrived(srv)
    s, head = _tunnel(px, "stats.g.doubleclick.net:7000")
    try:
        s.sendall(b"\x01\x02binary-beacon uid=12345\n")
        _read(s, 3)
    except OSError:
        pass
    s.close()
    assert b"binary-beacon" not in _arrived(srv)[len(before):]
    lines = _lines(px, "stats.g.doubleclick.net")
    assert any(x["rule"] == "raw-stream-tracker" and x["action"] == "deny" for x in lines)
