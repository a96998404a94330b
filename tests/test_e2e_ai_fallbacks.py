"""End to end through a real `guardian-proxy run`: what every AI service and every stream gets even when no
dialect knows its shape.

- an SSE stream outside any session arrives event by event (not buffered until the end);
- a conversation with an AI service whose JSON shape no dialect knows goes on: no 403 for an SSN (it becomes
  [BLOCKED]), the same pseudonym every turn, the reply de-masked;
- WebSocket messages are decided: an e-mail sent over a WebSocket to a tracker never leaves raw, and a chat
  over a WebSocket (OpenAI Realtime events) is pseudonymised upstream and de-masked for the client.
"""

from __future__ import annotations

import asyncio
import json
import re
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler

import httpx
import pytest

from tests.support.proxy_process import start_proxy
from tests.support.upstream import serve

pytestmark = pytest.mark.slow

NAME, EMAIL, SSN = "Quentin Zarkowsky", "quentin.zarkowsky@gmail.com", "123-45-6789"
_NAME = re.compile(r"\b([A-Z][a-z]+ [A-Z][a-z]+)\b")


class Upstream:
    """HTTP(S) for the SSE and unknown-AI tests, WebSocket (wss) for the others, one port: the proxy's
    --redirect-upstream sends every connection here."""

    def __init__(self):
        self.bodies: list[bytes] = []
        self.ws_received: list[str] = []


def _handler(up: Upstream):
    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            up.bodies.append(body)
            if self.path.startswith("/events"):
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("transfer-encoding", "chunked")
                self.send_header("connection", "close")
                self.end_headers()
                for i in range(5):
                    data = f"data: {{\"tick\": {i}, \"t\": {time.time()}}}\n\n".encode()
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                    self.wfile.flush()
                    time.sleep(0.4)
                self.wfile.write(b"0\r\n\r\n")
                return
            said = json.loads(body)["query"]["text"]
            names = _NAME.findall(said)
            out = json.dumps({"answer": {"text": f"Hello {names[0] if names else 'friend'}, noted."}}).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(out)))
            self.send_header("connection", "close")
            self.end_headers()
            self.wfile.write(out)

    return H


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    d = tmp_path_factory.mktemp("fallbacks")
    up = Upstream()
    srv = serve(_handler(up), d, ["sse.example", "chat.unknown-ai.example", "api.ai21.com"])
    px = start_proxy(d, srv.server_address[1])
    ctx = ssl.create_default_context(cafile=str(px.ca))
    http = httpx.Client(proxy=px.url, verify=ctx, timeout=60)
    yield up, px, http, ctx
    http.close()
    px.stop()
    srv.shutdown()


def test_a_stream_outside_any_session_arrives_event_by_event(env):
    up, px, http, _ = env
    arrivals = []
    t0 = time.perf_counter()
    with http.stream("POST", "https://sse.example/events", json={"subscribe": "weather"}) as r:
        assert r.status_code == 200
        for line in r.iter_lines():
            if line.startswith("data:"):
                arrivals.append(time.perf_counter() - t0)
    assert len(arrivals) == 5
    assert arrivals[0] < 1.0, arrivals  # the server needs 2 s for the whole body
    assert arrivals[-1] - arrivals[0] > 1.2, arrivals


def test_an_unknown_ai_service_conversation_goes_on(env, monkeypatch):
    up, px, http, _ = env
    # an AI service (recipient table) with a shape no dialect knows
    url = "https://api.ai21.com/studio/v1/assistant/query"
    turns = [f"Hi, I'm {NAME}, e-mail {EMAIL}. I work at Globex.",
             f"My SSN is {SSN}; {NAME} needs a tax form.",
             f"Thanks. Please remind {NAME} about the form."]
    seen = []
    for text in turns:
        n = len(up.bodies)
        r = http.post(url, json={"conversation_id": "cv-77", "query": {"text": text}, "model": "lab-1"})
        assert r.status_code == 200, r.text
        wire = up.bodies[n].decode()
        assert NAME not in wire and EMAIL not in wire and SSN not in wire
        seen.append(_NAME.findall(json.loads(wire)["query"]["text"])[0])
        assert r.json()["answer"]["text"] == f"Hello {NAME}, noted."
    assert "[BLOCKED]" in up.bodies[-2].decode()
    assert len(set(seen)) == 1  # one pseudonym for the whole conversation
    line = [x for x in px.log_lines() if x.get("host") == "api.ai21.com"][-1]
    assert line["action"] == "transform"


async def _ws_server(port_box: list, received: list, ready: threading.Event, tls: ssl.SSLContext, stop: list):
    import websockets

    async def handler(ws):
        async for message in ws:
            received.append(message)
            ev = json.loads(message)
            if ev.get("type") == "conversation.item.create":
                text = ev["item"]["content"][0]["text"]
                names = _NAME.findall(text)
                reply = f"Sure, {names[0] if names else 'friend'}, I will."
                await ws.send(json.dumps({"type": "response.created", "response": {"id": "resp_1"}}))
                for i in range(0, len(reply), 3):
                    await ws.send(json.dumps({"type": "response.output_text.delta", "item_id": "it1",
                                              "output_index": 0, "content_index": 0, "delta": reply[i:i + 3]}))
                await ws.send(json.dumps({"type": "response.output_text.done", "item_id": "it1",
                                          "output_index": 0, "content_index": 0, "text": reply}))
            else:
                await ws.send(json.dumps({"ok": True}))

    done = asyncio.Event()
    stop.append(done)
    async with websockets.serve(handler, "127.0.0.1", 0, ssl=tls) as server:
        port_box.append(server.sockets[0].getsockname()[1])
        ready.set()
        await done.wait()


@pytest.fixture(scope="module")
def ws_env(tmp_path_factory):
    from tests.support.upstream import self_signed

    d = tmp_path_factory.mktemp("ws")
    cert, key = self_signed(d, ["api.openai.com", "collect.tracker-cdn.example", "stats.g.doubleclick.net"])
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    port_box, received, ready, stop = [], [], threading.Event(), []
    loop = asyncio.new_event_loop()
    t = threading.Thread(target=lambda: loop.run_until_complete(_ws_server(port_box, received, ready, tls, stop)),
                         daemon=True)
    t.start()
    assert ready.wait(10)
    px = start_proxy(d, port_box[0])
    yield received, px, ssl.create_default_context(cafile=str(px.ca))
    px.stop()
    loop.call_soon_threadsafe(stop[0].set)
    t.join(10)
    loop.close()


def test_websocket_messages_to_a_tracker_are_decided(ws_env):
    from websockets.sync.client import connect

    received, px, ctx = ws_env
    n = len(received)
    with connect("wss://stats.g.doubleclick.net/collect", proxy=px.url, ssl=ctx, open_timeout=20) as ws:
        ws.send(json.dumps({"event": "signup", "email": EMAIL, "page": "/checkout"}))
        try:
            ws.recv(timeout=3)
        except TimeoutError:
            pass  # a blocked message gets no answer
    assert all(EMAIL not in m for m in received[n:])
    lines = [x for x in px.log_lines() if x.get("host") == "stats.g.doubleclick.net"]
    assert any(x["action"] in ("transform", "deny") for x in lines), lines


def test_a_realtime_chat_over_websocket_is_pseudonymised_and_de_masked(ws_env):
    from websockets.sync.client import connect

    received, px, ctx = ws_env
    n = len(received)
    with connect("wss://api.openai.com/v1/realtime?model=gpt-realtime", proxy=px.url, ssl=ctx,
                 open_timeout=20) as ws:
        ws.send(json.dumps({"type": "conversation.item.create", "item": {
            "type": "message", "role": "user",
            "content": [{"type": "input_text", "text": f"I'm {NAME} ({EMAIL}), SSN {SSN}. Book a dentist."}]}}))
        deltas, done = [], None
        while done is None:
            ev = json.loads(ws.recv(timeout=20))
            if ev["type"] == "response.output_text.delta":
                deltas.append(ev["delta"])
            elif ev["type"] == "response.output_text.done":
                done = ev["text"]
    wire = "".join(received[n:])
    assert NAME not in wire and EMAIL not in wire and SSN not in wire and "[BLOCKED]" in wire
    assert "".join(deltas) == f"Sure, {NAME}, I will."
    assert done == f"Sure, {NAME}, I will."
