"""WebSocket messages are decided like request bodies: personal data in a message to a tracker or an unknown third
party never reaches it raw, opaque binary to a tracker is dropped, and ordinary messages pass byte for byte
(docs/security.md: the same leak tests for every carrier). A real `websockets` client through a real proxy."""

from __future__ import annotations

import asyncio
import json
import os
import ssl
import threading

import pytest

from tests.support.proxy_process import start_proxy
from tests.support.upstream import self_signed

pytestmark = pytest.mark.slow

EMAIL, CARD = "quentin.zarkowsky@gmail.com", "4111 1111 1111 1111"


class _Echo:
    def __init__(self, tls_dir, names):
        from websockets.asyncio.server import serve

        cp, kp = self_signed(tls_dir, names)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cp, kp)
        self.received: list[bytes | str] = []
        started = threading.Event()

        async def handler(ws):
            async for m in ws:
                self.received.append(m)
                await ws.send("ok")

        def run():
            self.loop = asyncio.new_event_loop()

            async def start():
                self.server = await serve(handler, "127.0.0.1", 0, ssl=ctx)
                self.port = self.server.sockets[0].getsockname()[1]
                started.set()

            self.loop.run_until_complete(start())
            self.loop.run_forever()

        threading.Thread(target=run, daemon=True).start()
        assert started.wait(10)

    def wire(self) -> str:
        return "\n".join(m if isinstance(m, str) else m.decode("latin-1") for m in self.received)


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    d = tmp_path_factory.mktemp("wsleak")
    srv = _Echo(d, ["ws.hotjar.com", "realtime.unknown-example.net", "chat.example.org"])
    px = start_proxy(d, srv.port)
    yield srv, px
    px.stop()


async def _send(px, uri: str, messages: list) -> list[str]:
    from websockets.asyncio.client import connect

    ctx = ssl.create_default_context(cafile=str(px.ca))
    got = []
    async with connect(uri, proxy=px.url, ssl=ctx, open_timeout=60, close_timeout=5,
                       additional_headers={"Origin": "https://shop.example"}) as ws:
        for m in messages:
            await ws.send(m)
            try:
                got.append(await asyncio.wait_for(ws.recv(), 5))
            except TimeoutError:
                got.append(None)  # dropped: no answer
    return got


def test_personal_data_to_a_session_recorder_never_arrives_raw(env):
    srv, px = env
    msg = json.dumps({"type": "input", "target": "#email", "value": EMAIL, "card": CARD})
    asyncio.run(_send(px, "wss://ws.hotjar.com/api/v2/client/ws", [msg]))
    wire = srv.wire()
    assert EMAIL not in wire and "4111 1111" not in wire and "4111111111111111" not in wire


def test_card_to_an_unknown_third_party_never_arrives_raw(env):
    srv, px = env
    msg = json.dumps({"op": "save", "payment": {"pan": CARD, "owner": "Quentin Zarkowsky"}})
    asyncio.run(_send(px, "wss://realtime.unknown-example.net/socket", [msg]))
    assert "4111 1111" not in srv.wire()


def test_opaque_binary_to_a_tracker_is_dropped(env):
    srv, px = env
    blob = b"\x8a\x01" + os.urandom(200)
    got = asyncio.run(_send(px, "wss://ws.hotjar.com/api/v2/client/ws", [blob]))
    assert got == [None] and blob not in srv.received


def test_ordinary_messages_pass_byte_for_byte(env):
    srv, px = env
    msgs = [json.dumps({"type": "ping", "n": 1}), json.dumps({"type": "subscribe", "channel": "prices:EURUSD"}),
            b"\x00\x01\x02binary-frame"]
    got = asyncio.run(_send(px, "wss://chat.example.org/socket", msgs))
    assert got == ["ok", "ok", "ok"]
    for m in msgs:
        assert m in srv.received
