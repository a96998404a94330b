"""Servers the suite starts bind port 0 and report the port they got (a port
picked beforehand was taken by another process before the proxy bound it). The proxy's banner names the port
really bound, tests/support/proxy_process.py reads it, and the dashboard's PAC file names it too."""

from __future__ import annotations

import os

import httpx

from guardian_proxy import runtime
from guardian_proxy.config import load_settings
from guardian_proxy.dashboard import Dashboard
from tests.support import proxy_process


def test_the_banner_parser_reads_every_form_of_the_listening_line():
    rx = proxy_process._LISTENING
    assert rx.search("guardian-proxy listening on http://127.0.0.1:41235\n").group(1) == "41235"
    assert rx.search("guardian-proxy listening on http://0.0.0.0:8081, http://[::]:8081").group(1) == "8081"
    assert rx.search("guardian-proxy listening on [::1]:5000 in socks5 mode (socks5@[::1]:0)").group(1) == "5000"
    assert proxy_process._gives_port(["--port", "9"]) and proxy_process._gives_port(["--set", "listen_port=9"])
    assert not proxy_process._gives_port(["--dashboard-port", "9"])


def test_the_pac_file_names_the_port_a_proxy_on_port_0_got(tmp_path):
    """`run --port 0`: the dashboard is made before the proxy listens; its PAC file names the port the runtime file
    (written by this process once it listens) says, never port 0."""
    s = load_settings(state_dir=tmp_path / "state")
    d = Dashboard(s, port=0, proxy=("127.0.0.1", 0))
    assert d.start(), d.error
    try:
        runtime.write(s.state_dir, runtime.info([("127.0.0.1", 40123)], "regular", d.url, "/c", "/c/ca.pem"))
        with httpx.Client(timeout=30, trust_env=False) as c:
            pac = c.get(d.pac_url).text
        assert 'PROXY 127.0.0.1:40123"' in pac and ":0\"" not in pac
        assert runtime.read(s.state_dir)["pid"] == os.getpid()
    finally:
        d.stop()


def test_redis_server_starts_again_on_another_port_when_its_port_was_taken(tmp_path, monkeypatch):
    """redis-server cannot bind port 0 and report it: a port taken between the pick and its bind (here: taken on
    purpose) makes it exit, and the helper starts it on another one."""
    import socket

    import pytest

    from tests.support import redis_server as rs

    if not rs.available():
        pytest.skip(rs.SKIP_REASON)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        picks = iter([taken.getsockname()[1], proxy_process.free_port()])
        monkeypatch.setattr(rs, "free_port", lambda: next(picks))
        server = rs.start(tmp_path / "redis")
        try:
            assert server.port != taken.getsockname()[1]
            with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
                s.sendall(b"PING\r\n")
                assert s.recv(16).startswith(b"+PONG")
        finally:
            server.stop()
